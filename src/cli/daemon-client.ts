import { NotInitialised, Store } from '../store/store.js';
import { callDaemon, type Request, type Response } from '../daemon/control.js';

/** Ask the running daemon; null when none answers (or there is no store, hence no daemon). */
export async function askDaemon(root: string, req: Request, timeoutMs?: number): Promise<Response | null> {
  let store: Store;
  try { store = Store.open(root); } catch (err) { if (err instanceof NotInitialised) return null; throw err; }
  try { return await callDaemon(store, req, timeoutMs); } finally { store.close(); }
}
