import type { CommandSpec } from '../types.js';
import { WardenError } from '../../common/errors.js';
import { readAlerts } from '../../store/alerts.js';
import { QUARANTINE_DIR } from '../../store/layout.js';
import { lstatAt, readRegularAt, safeClose, walkDir } from '../../fsx/beneath.js';
import { loadWardenConfigFrom } from '../../store/approved-config.js';
import { Store } from '../../store/store.js';
import { proposeAndApprove } from '../changes/flow.js';
import { refusing } from './apply.js';

export const acceptCommand: CommandSpec = {
  name: 'accept',
  summary: "Propose an alert's rejected (quarantined) content again, through validation and approval.",
  usage: 'accept ALERT-ID [--root DIR] [--json]',
  allowPositionals: true,
  async run(ctx) {
    const [id, ...extra] = ctx.positionals;
    if (!id || extra.length) throw new WardenError('usage: warden accept ALERT-ID');
    const alert = readAlerts(ctx.root).alerts.find((a) => a.id === id);
    if (!alert) throw new WardenError(`no alert ${id} (see 'warden alerts')`, 1);
    if (!alert.quarantine) throw new WardenError(`alert ${id} kept no content (${alert.reason}); nothing to accept`, 1);
    const q = alert.quarantine;
    const store = Store.open(ctx.root);
    let content: Buffer;
    try {
      const prefix = `${store.label(QUARANTINE_DIR)}/${id}/`;
      if (!q.startsWith(prefix) || q.slice(prefix.length).includes('/')) throw new WardenError(`alert ${id} names an unexpected quarantine path`, 1);
      const config = loadWardenConfigFrom(store.fd, ctx.root);
      const w = walkDir(store.fd, `${QUARANTINE_DIR}/${id}`);
      if (!w.ok) { safeClose(w.parentFd); throw new WardenError(`the quarantine of alert ${id} is gone`, 1); }
      try {
        const name = q.slice(prefix.length);
        const st = lstatAt(w.fd, name);
        if (!st) throw new WardenError(`the quarantined content of alert ${id} is gone`, 1);
        if (!st.isFile()) throw new WardenError(`alert ${id} quarantined a ${st.isSymbolicLink() ? 'symlink' : 'non-regular file'}, which cannot be installed; only regular files can`, 1);
        const r = readRegularAt(w.fd, name, config.max_bytes);
        if (!r?.bytes) throw new WardenError(`the quarantined content of alert ${id} is over max_bytes (${config.max_bytes}) or vanished`, 1);
        content = r.bytes;
      } finally { safeClose(w.fd); }
    } finally { store.close(); }
    return refusing(ctx, 'accept', () => proposeAndApprove(ctx, [{ path: alert.path, content }], `accept ${id} ${alert.path}`));
  },
};
