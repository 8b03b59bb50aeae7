/**
 * One writer (docs/CONTRACT.md §Changes): a change request goes to the running daemon over its control
 * socket; when no daemon runs, the command does the work itself under the lock the daemon
 * also takes. A daemon that accepted the request and then vanished is NOT treated as "no
 * daemon": the command stops with exit 3 instead of retrying, and the next writer's
 * start-up recovery (journal.ts) makes sure nothing is left half-applied.
 */
import { EXIT, WardenError } from '../../common/errors.js';
import { ensureDirBeneath, safeClose } from '../../fsx/beneath.js';
import { CONTROL_DIR, LOCK_NAME, SOCKET_NAME } from '../../store/layout.js';
import { LockHeldError, acquireLock } from '../../store/lock.js';
import { Store } from '../../store/store.js';
import { loadBaseline } from '../../store/load-baseline.js';
import { loadKey } from '../../store/keys.js';
import { appendAlert } from '../../store/alerts.js';
import { journalLine } from '../../guard/alert-sink.js';
import { deliveryReport } from '../delivery.js';
import { changeOp, prepareWriter, type ChangeEnv } from '../../changes/approvals.js';
import type { ChangeCommand, Reply } from '../../changes/protocol.js';
import { sendChange } from '../daemon-client.js';

/** Run a change op through the daemon, or under the lock when none runs. */
export async function runChangeOp(root: string, req: ChangeCommand, log: (l: string) => void = (l) => process.stderr.write(l + '\n')): Promise<Reply & { via: 'daemon' | 'lock' }> {
  const c = await sendChange(root, req);
  if (c.kind === 'ok') return { ...c.res, via: 'daemon' };
  if (c.kind === 'refused') {
    // The socket refused the request before running it (typed code, src/daemon/protocol.ts).
    throw new WardenError(c.code === 'bad-request'
      ? `the running daemon does not understand this request (${c.error}); is it an older version? Restart it`
      : `the daemon refused the request: ${c.error}`, EXIT.daemonDown);
  }
  if (c.kind === 'lost') {
    throw new WardenError(`the daemon stopped answering in the middle of the change (${c.why}). Nothing is left half-applied: a change of one file is atomic, and a change of several files is completed or rolled back (with a half-applied alert) when warden starts again. Check with 'warden status' and 'warden alerts'.`, EXIT.daemonDown);
  }
  const store = Store.open(root);
  try {
    let lock;
    // The key names the lock's kernel-held half: a running daemon is seen even when its socket and lock file were removed.
    const controlFd = ensureDirBeneath(store.fd, CONTROL_DIR);
    try { lock = await acquireLock(controlFd, { role: 'command', waitMs: 3000, key: loadKey(root, false), label: store.label(`${CONTROL_DIR}/${LOCK_NAME}`), log }); }
    catch (err) {
      if (err instanceof LockHeldError && err.holder?.role === 'daemon') {
        throw new WardenError(`the warden daemon (pid ${err.holder.pid}) guards this root but does not answer on its control socket (${store.socketDirs().map((d) => `${d.path}/${SOCKET_NAME}`).join(' or ')}); nothing was applied. Restart the daemon (systemctl restart warden-guard, or stop and start \`warden run\`), then try again.`, EXIT.daemonDown);
      }
      throw err;
    } finally { safeClose(controlFd); }
    try {
      // Load under the lock: nobody else can change the baseline now.
      const l = loadBaseline(root, { blobs: true, settle: true });
      try {
        const env: ChangeEnv = {
          ctx: { root, rootFd: l.rootFd, store: l.store, state: l.state, config: l.config, pset: l.pset },
          key: loadKey(root, false),
          raise: (a) => { appendAlert(l.store.fd, a); log(journalLine(a)); },
          deliveredMessages: () => new Set(Object.entries(deliveryReport(root)?.messages ?? {}).filter(([, per]) => Object.values(per).some((d) => d?.state === 'delivered')).map(([id]) => id)),
        };
        prepareWriter(env);
        return { ...(await changeOp(req, env)), via: 'lock' };
      } finally { l.close(); }
    } finally { lock.release(); }
  } finally { store.close(); }
}
