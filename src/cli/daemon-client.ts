import { openRoot, safeClose } from '../fsx/beneath.js';
import { callDaemon, type Request, type Response } from '../daemon/control.js';

/** Ask the running daemon; null when none answers. */
export async function askDaemon(root: string, req: Request, timeoutMs?: number): Promise<Response | null> {
  const fd = openRoot(root);
  try { return await callDaemon(fd, req, timeoutMs); } finally { safeClose(fd); }
}
