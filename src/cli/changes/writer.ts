/**
 * One writer (SPEC §8): a change request goes to the running daemon over its control
 * socket; when no daemon runs, the command does the work itself under the lock the daemon
 * also takes. A daemon that accepted the request and then vanished is NOT treated as "no
 * daemon": the command stops with exit 3 instead of retrying, and the next writer's
 * start-up recovery (journal.ts) makes sure nothing is left half-applied.
 */
import { connect } from 'node:net';
import { EXIT, WardenError } from '../../common/errors.js';
import { at, ensureDirBeneath, lstatAt, openRoot, safeClose, walkDir } from '../../fsx/beneath.js';
import { CONTROL_DIR, LOCK_FILE, SOCKET_FILE } from '../../store/layout.js';
import { LockHeldError, acquireLock } from '../../store/lock.js';
import { loadBaseline } from '../../store/load-baseline.js';
import { loadKey } from '../../store/keys.js';
import { appendAlert } from '../../store/alerts.js';
import { journalLine } from '../../guard/alert-sink.js';
import { changeOp, prepareWriter, type ChangeEnv, type Reply } from '../../changes/approvals.js';

type Call = { kind: 'none' } | { kind: 'lost' } | { kind: 'ok'; res: Reply };

/** Send one request; tell "nobody listening" apart from "accepted, then gone". */
export async function callDaemonStrict(root: string, req: Record<string, unknown>, timeoutMs = 120_000): Promise<Call> {
  const rootFd = openRoot(root);
  try {
    const w = walkDir(rootFd, CONTROL_DIR);
    if (!w.ok) { safeClose(w.parentFd); return { kind: 'none' }; }
    try {
      if (!lstatAt(w.fd, 'warden.sock')?.isSocket()) return { kind: 'none' };
      return await new Promise<Call>((resolve) => {
        const sock = connect(at(w.fd, 'warden.sock'));
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
  } finally { safeClose(rootFd); }
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
  const rootFd = openRoot(root);
  try {
    let lock;
    // The key names the lock's kernel-held half: a running daemon is seen even when its socket and lock file were removed.
    const controlFd = ensureDirBeneath(rootFd, CONTROL_DIR);
    try { lock = await acquireLock(controlFd, { role: 'command', waitMs: 3000, key: loadKey(root, false), label: LOCK_FILE, log }); }
    catch (err) {
      if (err instanceof LockHeldError && err.holder?.role === 'daemon') {
        throw new WardenError(`the warden daemon (pid ${err.holder.pid}) guards this root but does not answer on ${SOCKET_FILE}; nothing was applied. Restart the daemon (systemctl restart warden-guard, or stop and start \`warden run\`), then try again.`, EXIT.daemonDown);
      }
      throw err;
    } finally { safeClose(controlFd); }
    try {
      // Load under the lock: nobody else can change the baseline now.
      const l = loadBaseline(root, { blobs: true, settle: true });
      try {
        const env: ChangeEnv = {
          ctx: { root, rootFd: l.rootFd, state: l.state, config: l.config, pset: l.pset },
          key: loadKey(root, false),
          raise: (a) => { appendAlert(l.rootFd, a); log(journalLine(a)); },
        };
        prepareWriter(env);
        return { ...(await changeOp(req, env)), via: 'lock' };
      } finally { safeClose(l.rootFd); }
    } finally { lock.release(); }
  } finally { safeClose(rootFd); }
}
