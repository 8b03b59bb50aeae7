/**
 * `warden diff [ALERT-ID]`: what an alert rejected (kept in quarantine) against the content
 * that was approved then. Credential files are compared as their fingerprint text (the
 * same one history keeps): key names and 12-hex fingerprints, never a value.
 */
import { describeBy } from '../../store/writer-words.js';
import type { CommandSpec } from '../types.js';
import { EXIT, WardenError } from '../../common/errors.js';
import { findAlert, readAlerts } from '../../store/alerts.js';
import { blobDir, sha256Hex } from '../../store/baseline.js';
import { loadBaseline, octal } from '../../store/load-baseline.js';
import { lstatAt, readRegularAt, withDir } from '../../fsx/beneath.js';
import { credentialFingerprintText, diffCredentials } from '../../credentials/rules.js';
import { binaryDiff, lineDiff } from '../../changes/diff.js';
import type { FileKind } from '../../config/protected-set.js';
import type { Alert } from '../../store/alert-types.js';
import type { Store, StoreFd } from '../../store/store.js';
import { colorDiff, printable } from '../output.js';
import { clean } from '../../notifier/format.js';
import { grantLines, grantsAt, type RootGrants } from '../../grants/index.js';
import { rootProfileFor } from '../../profiles/root-profile.js';
import { historyMirror } from '../../grants/redact.js';
import { readPruned } from '../../store/prune.js';
import { keptAt } from '../../store/kept.js';
import { prunedNote } from '../../store/budget.js';

type Rejected = { kind: 'file'; bytes: Buffer } | { kind: 'other'; what: string } | { kind: 'none'; why: string };

function readQuarantine(store: Store, a: Alert, maxBytes: number): Rejected {
  if (!a.quarantine) return { kind: 'none', why: a.reason === 'deleted' ? 'the file was deleted' : 'nothing was kept' };
  const k = keptAt(a.quarantine, a.id, (rel) => store.label(rel));
  if (!k) throw new WardenError(`alert ${a.id} names an unexpected quarantine path`, EXIT.finding);
  const name = k.name;
  return withDir(store.fd, k.dir, (fd): Rejected => {
    const st = lstatAt(fd, name);
    if (!st) return { kind: 'none', why: 'its quarantined content is gone' };
    if (!st.isFile()) return { kind: 'other', what: st.isSymbolicLink() ? 'a symlink' : st.isDirectory() ? 'a directory' : 'not a regular file' };
    const r = readRegularAt(fd, name, maxBytes);
    if (!r?.bytes) return { kind: 'other', what: `over max_bytes (${maxBytes}), not shown` };
    return { kind: 'file', bytes: r.bytes };
  }, () => ({ kind: 'none', why: 'its quarantine is gone' }));
}

/** The approved bytes the alert restored: the blob named by `before.sha256`, if the store still has it. */
function readBlob(storeFd: StoreFd, kind: FileKind, sha: string): Buffer | null {
  if (!/^[0-9a-f]{64}$/.test(sha)) return null;
  return withDir(storeFd, blobDir(kind), (fd) => {
    try {
      const r = readRegularAt(fd, sha, 64 * 1024 * 1024);
      return r?.bytes && sha256Hex(r.bytes) === sha ? r.bytes : null;
    } catch { return null; }
  }, () => null);
}

/** One side is empty (emptied, deleted, a new file): every line of the other, one sign. */
function wholeFile(sign: '+' | '-', text: string): string {
  const lines = text.replace(/\n$/, '').split('\n');
  return [`  @@ line 1 (${lines.length} line${lines.length === 1 ? '' : 's'} ${sign === '+' ? 'added' : 'removed'})`, ...lines.map((l) => `  ${sign} ${l}`)].join('\n');
}

export const diffCommand: CommandSpec = {
  name: 'diff',
  summary: 'What an alert rejected, against the approved content (credential values as fingerprints); default: the latest alert.',
  usage: 'diff [ALERT-ID] [--root DIR] [--json]',
  allowPositionals: true,
  async run(ctx) {
    const [id, ...extra] = ctx.positionals;
    if (extra.length) throw new WardenError('usage: warden diff [ALERT-ID]');
    const all = readAlerts(ctx.root).alerts;
    const a = id ? findAlert(all, id) : all[all.length - 1];
    if (!a) throw new WardenError(id ? `no alert ${id} (see 'warden alerts')` : 'no alerts yet', EXIT.finding);
    const l = loadBaseline(ctx.root);
    const notes: string[] = [];
    let approved: Buffer | null = null;
    let rejected: Rejected;
    let kind: FileKind;
    try {
      kind = l.state.entry(a.path)?.kind ?? l.pset.kindOf(a.path) ?? 'text';
      if (a.before?.sha256) {
        approved = readBlob(l.store.fd, kind, a.before.sha256);
        if (!approved) {
          approved = l.state.entry(a.path) ? l.state.bytesOf(l.store.fd, a.path) : null;
          notes.push('the version approved at the time is no longer in the store; compared with the version approved now');
        }
      }
      rejected = readQuarantine(l.store, a, l.config.max_bytes);
      // docs/CONTRACT.md §Store budget: pruned content says when, how big and its sha256.
      const pr = rejected.kind === 'none' && a.quarantine ? readPruned(l.store.fd).get(a.id) : undefined;
      if (pr) rejected = { kind: 'none', why: prunedNote(pr) };
    } finally { l.close(); }
    // A file whose credentials the runtime rewrites (Codex's auth.json): shown as history keeps it, values as fingerprints (grants/redact.ts).
    const rp = l.state.index.profile ? rootProfileFor(ctx.root, l.state.index.profile) : null;
    const redacted = (b: Buffer): string | undefined => historyMirror(rp, a.path, b)?.toString('utf8');
    const secret = kind === 'credentials' || (rejected.kind === 'file' && redacted(rejected.bytes) !== undefined);
    const asText = (b: Buffer | null): string => (b === null ? '' : kind === 'credentials' ? credentialFingerprintText(b) : secret ? redacted(b) ?? '' : b.toString('utf8'));
    const rejectedBytes = rejected.kind === 'file' ? rejected.bytes : null;
    if (a.before && a.after && a.before.mode !== a.after.mode) notes.push(`mode ${octal(a.before.mode)} → ${octal(a.after.mode)}`);
    if (rejected.kind === 'other') notes.push(`the rejected entry is ${rejected.what}`);
    if (rejected.kind === 'none' && ctx.json) notes.push(`no rejected content: ${rejected.why}`);
    if (secret) notes.push('credential values are shown as fingerprints (first 12 hex digits of sha256)');
    let body = '';
    const oldText = asText(approved);
    const newText = rejectedBytes ? asText(rejectedBytes) : '';
    const binary = secret ? null : binaryDiff(approved, rejectedBytes, 'approved', 'rejected');
    if (rejectedBytes && approved !== null && rejectedBytes.equals(approved)) body = '  (same content as approved)';
    else if (binary) body = binary;
    else if (oldText === '' || newText === '') body = wholeFile(oldText === '' ? '+' : '-', oldText || newText);
    else body = lineDiff(oldText, newText);
    const keyChanges = kind === 'credentials' && rejectedBytes ? diffCredentials(approved?.toString('utf8') ?? null, rejectedBytes.toString('utf8'), l.config, a.path) : null;
    if (keyChanges?.parseErrors.length) notes.push(`the rejected file does not parse (${keyChanges.parseErrors.map((e) => `line ${e.line ?? '?'}, column ${e.column ?? '?'}`).join('; ')})`);
    // What the rejected version granted or took away, key by key (docs/PROFILES.md, "Grants in alerts, diffs and prompts").
    let grants: RootGrants | undefined;
    if (rejectedBytes && !(approved && rejectedBytes.equals(approved))) {
      try { grants = grantsAt(rootProfileFor(ctx.root, l.state.index.profile), a.path, approved, rejectedBytes, { secret, max: 200 }); } catch { grants = undefined; }
    }
    if (ctx.json) {
      ctx.out.json({
        alert: a.id, path: a.path, kind, reason: a.reason, time: a.time,
        approved: a.before, rejected: a.after, quarantine: a.quarantine, notes,
        ...(keyChanges ? { credential_changes: keyChanges.changes } : {}),
        ...(grants ? { grants: grants.grants, grants_summary: grants.summary, grants_left_off: grants.left_off } : {}),
        diff: body,
      });
      return EXIT.ok;
    }
    ctx.out.line(ctx.out.color.bold(`alert ${clean(a.id, 80)}: ${clean(a.action, 20)} ${clean(a.path, 300)} (${clean(a.reason, 40)}) at ${clean(a.time, 40)}`));
    const who = describeBy(a.by);
    if (who) ctx.out.line(`  ${who}`);
    for (const n of notes) ctx.out.line(`  ${n}`);
    // Names from alerts.jsonl are the agent's: escaped before the colours go on (escapeTerminal
    // lets our own SGR codes through, and a name may hold one, or a newline).
    const shown = clean(a.path, 300);
    const oldHead = approved === null ? `--- ${shown} (no approved version: a new file)` : `--- ${shown} (approved)`;
    // Kept once, gone now (the store budget pruned it): no diff against nothing.
    const gone = a.quarantine !== null && rejected.kind === 'none';
    const newHead = a.quarantine && !gone ? `+++ ${shown} (rejected, kept in ${clean(a.quarantine, 300)})` : `+++ ${shown} (rejected: ${rejected.kind === 'none' ? clean(rejected.why, 300) : 'not kept'})`;
    if (grants) {
      ctx.out.line(`  what it granted or took away: ${clean(grants.summary, 300)}`);
      for (const l of grantLines(grants, 200)) ctx.out.line(`    ${l}`);
    }
    ctx.out.line(colorDiff(`${oldHead}\n${newHead}`, ctx.out.color));
    if (body && !gone) ctx.out.line(colorDiff(body.split('\n').map(printable).join('\n'), ctx.out.color));
    if (a.quarantine && !gone) ctx.out.line(`to keep the rejected version: 'warden accept ${clean(a.id, 80)}' (validated and approved like any change)`);
    return EXIT.ok;
  },
};
