import type { CommandSpec } from '../types.js';
import { WardenError } from '../../common/errors.js';
import { escapeText } from '../../common/escape.js';
import { findAlert, readAlerts } from '../../store/alerts.js';
import { readPruned } from '../../store/prune.js';
import { keptAt } from '../../store/kept.js';
import { prunedNote } from '../../store/budget.js';
import { lstatAt, readRegularAt, withDir } from '../../fsx/beneath.js';
import { loadWardenConfigFrom } from '../../store/approved-config.js';
import { Store } from '../../store/store.js';
import { proposeAndApprove } from '../changes/flow.js';
import { refusing } from './apply.js';
import { loadBaseline } from '../../store/load-baseline.js';

function approvedSha(root: string, path: string): string | null {
  const l = loadBaseline(root);
  try { return l.state.entry(path)?.sha256 ?? null; } finally { l.close(); }
}

export const acceptCommand: CommandSpec = {
  name: 'accept',
  summary: "Propose an alert's rejected (quarantined) content again, through validation and approval.",
  usage: 'accept ALERT-ID [--root DIR] [--json]',
  allowPositionals: true,
  async run(ctx) {
    const [id, ...extra] = ctx.positionals;
    if (!id || extra.length) throw new WardenError('usage: warden accept ALERT-ID');
    const alert = findAlert(readAlerts(ctx.root).alerts, id);
    if (!alert) throw new WardenError(`no alert ${id} (see 'warden alerts')`, 1);
    const reasons = alert.reason === 'changed-while-stopped' ? (alert.also ?? []) : [alert.reason, ...(alert.also ?? [])];
    // An ACL or extended attribute is approved as recorded at init, never by a command (docs/ARCHITECTURE.md, "What a protected file's approved state is").
    if (reasons.length > 0 && reasons.every((r) => r === 'acl' || r === 'xattr')) {
      throw new WardenError(`alert ${id} rejected a change of ${escapeText(alert.path)}'s ACL or extended attributes; no warden command approves one (give access with the file's owner or mode: 'warden apply ${escapeText(alert.path)} --mode MODE')`, 1);
    }
    const contentChanged = reasons.some((r) => r === 'content' || r === 'emptied' || r === 'too-large' || r === 'half-applied');
    const rejectedMode = reasons.includes('mode') && alert.after ? alert.after.mode & 0o777 : undefined;
    // A mode alert proposes the rejected mode on the approved content as it is when the
    // change is applied (never the quarantined copy, which may predate a later change).
    if (rejectedMode !== undefined && !contentChanged) {
      const m = rejectedMode.toString(8).padStart(4, '0');
      return refusing(ctx, 'accept', () => proposeAndApprove(ctx, [{ path: alert.path, content: null, keep: true, mode: rejectedMode }], `accept ${id} ${alert.path} --mode ${m}`));
    }
    if (!alert.quarantine) throw new WardenError(`alert ${id} kept no content (${alert.reason}); nothing to accept`, 1);
    const q = alert.quarantine;
    const store = Store.open(ctx.root);
    let content: Buffer;
    try {
      const k = keptAt(q, id, (rel) => store.label(rel));
      if (!k) throw new WardenError(`alert ${id} names an unexpected quarantine path`, 1);
      const config = loadWardenConfigFrom(store.fd, ctx.root);
      content = withDir(store.fd, k.dir, (fd) => {
        const name = k.name;
        const st = lstatAt(fd, name);
        if (!st) throw new WardenError(`the quarantined content of alert ${id} is gone${prunedWhy(store, id)}`, 1);
        if (!st.isFile()) throw new WardenError(`alert ${id} quarantined a ${st.isSymbolicLink() ? 'symlink' : 'non-regular file'}, which cannot be installed; only regular files can`, 1);
        const r = readRegularAt(fd, name, config.max_bytes);
        if (!r?.bytes) throw new WardenError(`the quarantined content of alert ${id} is over max_bytes (${config.max_bytes}) or vanished`, 1);
        return r.bytes;
      }, () => { throw new WardenError(`the quarantine of alert ${id} is gone${prunedWhy(store, id)}`, 1); });
    } finally { store.close(); }
    // The rejected content replaced the approved content of that moment; if a later change
    // moved the approved file on, accepting would silently undo it.
    const now = approvedSha(ctx.root, alert.path);
    const then = alert.before?.sha256 ?? null;
    if (alert.before && now !== then) {
      throw new WardenError(`${escapeText(alert.path)} was changed through warden after alert ${id}; accepting its rejected content would undo that later change. Nothing was applied. See 'warden diff ${id}', then propose what you want with 'warden apply ${escapeText(alert.path)} --from FILE'.`, 1);
    }
    const mode = rejectedMode !== undefined ? { mode: rejectedMode } : {};
    return refusing(ctx, 'accept', () => proposeAndApprove(ctx, [{ path: alert.path, content, ...mode }], `accept ${id} ${alert.path}`, alert.before ? { base: { [alert.path]: then } } : {}));
  },
};

/** `: content pruned at …` when the store budget pruned it (docs/CONTRACT.md §Store budget). */
function prunedWhy(store: Store, id: string): string {
  const r = readPruned(store.fd).get(id);
  return r ? ` (${prunedNote(r)}; the store budget, store_max_bytes, prunes the oldest first)` : '';
}
