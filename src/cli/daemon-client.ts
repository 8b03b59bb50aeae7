/** The command's side of the control socket: typed requests, replies checked against the protocol. */
import { NotInitialised, Store } from '../store/store.js';
import { callDaemon, type Call } from '../daemon/control.js';
import type { PingReply } from '../daemon/protocol.js';

// The schemas (zod) load only when a daemon answers: `warden run` with none running loads none.
const protocol = () => import('../daemon/protocol.js');
import type { ChangeCommand, Reply } from '../changes/protocol.js';

/** No store means no daemon: a root that is not initialised has nobody to answer. */
async function call(root: string, req: Parameters<typeof callDaemon>[1], timeoutMs?: number): Promise<Call> {
  let store: Store;
  try { store = Store.open(root); } catch (err) { if (err instanceof NotInitialised) return { kind: 'none' }; throw err; }
  try { return await callDaemon(store, req, timeoutMs); } finally { store.close(); }
}

/** The running daemon's ping reply; null when none answers (or it answers something else). */
export async function pingDaemon(root: string, timeoutMs?: number): Promise<PingReply | null> {
  const c = await call(root, { op: 'ping' }, timeoutMs);
  if (c.kind !== 'ok') return null;
  const { isControlError, pingReplySchema } = await protocol();
  if (isControlError(c.res)) return null;
  const p = pingReplySchema.safeParse(c.res);
  return p.success ? p.data : null;
}

/** Hand a change command to the daemon. `refused`: the socket itself said no (a typed code). */
export type ChangeCall = { kind: 'none' } | { kind: 'lost'; why: string } | { kind: 'ok'; res: Reply } | { kind: 'refused'; code: string; error: string };

export async function sendChange(root: string, change: ChangeCommand, timeoutMs = 120_000): Promise<ChangeCall> {
  const c = await call(root, { op: 'change', change }, timeoutMs);
  if (c.kind !== 'ok') return c;
  const { isControlError, pingReplySchema } = await protocol();
  if (isControlError(c.res)) return { kind: 'refused', code: c.res.code, error: c.res.error };
  if (pingReplySchema.safeParse(c.res).success) return { kind: 'lost', why: 'the daemon answered a ping to a change request' };
  return { kind: 'ok', res: c.res as Reply };
}
