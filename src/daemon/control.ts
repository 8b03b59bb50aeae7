/**
 * The control socket (warden.sock, 0600, in the guard's runtime directory in the deployment,
 * else in the store's control/; its own directory so the notifier unit can be denied it): how commands hand changes to a running
 * daemon, so a sanctioned change never races a revert. One JSON request per connection.
 * Paths go through /proc/self/fd so a long root path never hits the 108-byte sun_path limit
 * and a swapped snapshots/ link is never followed.
 */
import { createServer, connect, type Server } from 'node:net';
import { lstatAt, safeClose, unlinkAt, at } from '../fsx/beneath.js';
import { SOCKET_NAME } from '../store/layout.js';
import type { Store } from '../store/store.js';

const NAME = SOCKET_NAME;
const MAX_REQUEST = 8 * 1024 * 1024;

export type Request = { op: string; [k: string]: unknown };
export type Response = { ok: boolean; error?: string; details?: unknown; [k: string]: unknown };

export async function listenControl(store: Store, handle: (req: Request) => Promise<Response>): Promise<{ close(): Promise<void> }> {
  const dirFd = store.socketDirs()[0]!.open(true) as number;
  const st = lstatAt(dirFd, NAME);
  if (st?.isSocket()) unlinkAt(dirFd, NAME);
  const server: Server = createServer((sock) => {
    let buf = '';
    // One request per connection: once a line (or an oversized prefix) was seen, later
    // data is ignored, so a request is never run twice and nothing keeps accumulating.
    let handled = false;
    const refuse = (error: string) => { handled = true; buf = ''; sock.end(JSON.stringify({ ok: false, error }) + '\n', () => sock.destroy()); };
    sock.setEncoding('utf8');
    sock.on('data', (chunk: string) => {
      if (handled) return;
      // Until now buf held no newline: look in the new chunk only (no quadratic rescans).
      const inChunk = chunk.indexOf('\n');
      const nl = inChunk < 0 ? -1 : buf.length + inChunk;
      buf += chunk;
      if (nl < 0 ? buf.length > MAX_REQUEST : nl > MAX_REQUEST) { refuse('request too large'); return; }
      if (nl < 0) return;
      handled = true;
      const line = buf.slice(0, nl);
      buf = '';
      let req: Request;
      try { req = JSON.parse(line) as Request; } catch { refuse('malformed request'); return; }
      handle(req).then(
        (res) => sock.end(JSON.stringify(res) + '\n'),
        (err) => sock.end(JSON.stringify({ ok: false, error: String((err as Error)?.message ?? err) }) + '\n'),
      );
    });
    sock.on('error', () => {});
  });
  const old = process.umask(0o077);
  try {
    await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(at(dirFd, NAME), () => resolve()); });
  } finally {
    process.umask(old);
  }
  return {
    close: () => new Promise<void>((resolve) => { server.close(() => { safeClose(dirFd); resolve(); }); }),
  };
}

/** The directory that holds a live-looking socket (runtime directory first), or null. */
export function openSocketDir(store: Store): { fd: number } | null {
  for (const d of store.socketDirs()) {
    const fd = d.open(false);
    if (fd === null) continue;
    if (lstatAt(fd, NAME)?.isSocket()) return { fd };
    safeClose(fd);
  }
  return null;
}

/** Send one request; null when no daemon answers (no socket, refused, or timed out). */
export async function callDaemon(store: Store, req: Request, timeoutMs = 30_000): Promise<Response | null> {
  const w = openSocketDir(store);
  if (!w) return null;
  try {
    return await new Promise<Response | null>((resolve) => {
      const sock = connect(at(w.fd, NAME));
      let buf = '';
      const timer = setTimeout(() => { sock.destroy(); resolve(null); }, timeoutMs);
      sock.setEncoding('utf8');
      sock.on('connect', () => sock.write(JSON.stringify(req) + '\n'));
      sock.on('data', (c: string) => { buf += c; });
      sock.on('end', () => {
        clearTimeout(timer);
        try { resolve(JSON.parse(buf) as Response); } catch { resolve(null); }
      });
      sock.on('error', () => { clearTimeout(timer); resolve(null); });
    });
  } finally {
    safeClose(w.fd);
  }
}
