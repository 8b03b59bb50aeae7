/**
 * One writer (SPEC §8): a change request goes to the running daemon over its control
 * socket; when no daemon runs, the command does the work itself under the lock the daemon
 * also takes. A daemon that accepted the request and then vanished is NOT treated as "no
 * daemon": the command stops with exit 3 instead of retrying, and the next writer's
 * start-up recovery (journal.ts) makes sure nothing is left half-applied.
 */
import { connect } from 'node:net';
import { EXIT, WardenError } from '../../common/errors.js';
import { at, safeClose } from '../../fsx/beneath.js';
import { SOCKET_NAME } from '../../store/layout.js';
import { NotInitialised, Store } from '../../store/store.js';
import { openSocketDir } from '../../daemon/control.js';
import { acquireLock, pidAlive } from '../../store/lock.js';
import { loadBaseline } from '../../store/load-baseline.js';
import { loadKey } from '../../store/keys.js';
import { appendAlert } from '../../store/alerts.js';
import { journalLine } from '../../guard/alert-sink.js';
import { changeOp, prepareWriter, type ChangeEnv, type Reply } from '../../changes/approvals.js';

type Call = { kind: 'none' } | { kind: 'lost' } | { kind: 'ok'; res: Reply };

/** Send one request; tell "nobody listening" apart from "accepted, then gone". */
export async function callDaemonStrict(root: string, req: Record<string, unknown>, timeoutMs = 120_000): Promise<Call> {
  let store: Store;
  try { store = Store.open(root); } catch (err) { if (err instanceof NotInitialised) return { kind: 'none' }; throw err; }
  try {
    const w = openSocketDir(store);
    if (!w) return { kind: 'none' };
    try {
      return await new Promise<Call>((resolve) => {
        const sock = connect(at(w.fd, SOCKET_NAME));
        let connected = false;
        let buf = '';
        const timer = setTimeout(() => { sock.destroy(); resolve({ kind: 'lost' }); }, timeoutMs);
        sock.setEncoding('utf8');
        sock.on('connect', () => { connected = true; sock.write(JSON.stringify({ op: 'change', ...req }) + '\n'); });
        sock.on('data', (c: string) => { buf += c; });
        sock.on('end', () => {
          clearTimeout(timer);
          try { resolve({ kind: 'ok', res: JSON.parse(buf) as Reply }); } catch { resolve({ kind: connected ? 'lost' : 'none' }); }
        });
        sock.on('error', () => { clearTimeout(timer); resolve({ kind: connected ? 'lost' : 'none' }); });
      });
    } finally { safeClose(w.fd); }
  } finally { store.close(); }
}

/** Run a change op through the daemon, or under the lock when none runs. */
export async function runChangeOp(root: string, req: Record<string, unknown>, log: (l: string) => void = (l) => process.stderr.write(l + '\n')): Promise<Reply & { via: 'daemon' | 'lock' }> {
  const c = await callDaemonStrict(root, req);
  if (c.kind === 'ok') {
    if (c.res.ok === false && /unknown request/.test(String(c.res.error))) throw new WardenError('the running daemon is older than this command and cannot take changes; restart it', EXIT.daemonDown);
    return { ...c.res, via: 'daemon' };
  }
  if (c.kind === 'lost') {
    throw new WardenError('the daemon stopped answering in the middle of the change. Nothing is left half-applied: a change of one file is atomic, and a change of several files is completed or rolled back (with a half-applied alert) when warden starts again. Check with \'warden status\' and \'warden alerts\'.', EXIT.daemonDown);
  }
  const store = Store.open(root);
  try {
    let lock;
    try { lock = await acquireLock(store.fd, 3000); }
    catch (err) {
      const m = /pid (\d+)/.exec(String((err as Error).message));
      if (m && pidAlive(Number(m[1]))) throw new WardenError(`the daemon (pid ${m[1]}) holds the lock but does not answer on its control socket (${store.socketDirs().map((d) => `${d.path}/${SOCKET_NAME}`).join(' or ')})`, EXIT.daemonDown);
      throw err;
    }
    try {
      // Load under the lock: nobody else can change the baseline now.
      const l = loadBaseline(root, { blobs: true });
      try {
        const env: ChangeEnv = {
          ctx: { root, rootFd: l.rootFd, store: l.store, state: l.state, config: l.config, pset: l.pset },
          key: loadKey(root, false),
          raise: (a) => { appendAlert(l.store.fd, a); log(journalLine(a)); },
        };
        prepareWriter(env);
        return { ...(await changeOp(req, env)), via: 'lock' };
      } finally { l.close(); }
    } finally { lock.release(); }
  } finally { store.close(); }
}
