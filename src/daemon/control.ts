/**
 * The control socket (snapshots/control/warden.sock, 0600; its own directory so the notifier unit can be denied it): how commands hand changes to a running
 * daemon, so a sanctioned change never races a revert. One JSON request per connection.
 * Paths go through /proc/self/fd so a long root path never hits the 108-byte sun_path limit
 * and a swapped snapshots/ link is never followed.
 */
import { createServer, connect, type Server } from 'node:net';
import { ensureDirBeneath, lstatAt, safeClose, unlinkAt, walkDir, at } from '../fsx/beneath.js';
import { CONTROL_DIR } from '../store/layout.js';

const NAME = 'warden.sock';
const MAX_REQUEST = 8 * 1024 * 1024;

export type Request = { op: string; [k: string]: unknown };
export type Response = { ok: boolean; error?: string; details?: unknown; [k: string]: unknown };

export async function listenControl(rootFd: number, handle: (req: Request) => Promise<Response>): Promise<{ close(): Promise<void> }> {
  const dirFd = ensureDirBeneath(rootFd, CONTROL_DIR);
  const st = lstatAt(dirFd, NAME);
  if (st?.isSocket()) unlinkAt(dirFd, NAME);
  const server: Server = createServer((sock) => {
    let buf = '';
    sock.setEncoding('utf8');
    sock.on('data', (chunk: string) => {
      buf += chunk;
      if (buf.length > MAX_REQUEST) { sock.end(JSON.stringify({ ok: false, error: 'request too large' }) + '\n'); return; }
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      let req: Request;
      try { req = JSON.parse(buf.slice(0, nl)) as Request; } catch { sock.end(JSON.stringify({ ok: false, error: 'malformed request' }) + '\n'); return; }
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

/** Send one request; null when no daemon answers (no socket, refused, or timed out). */
export async function callDaemon(rootFd: number, req: Request, timeoutMs = 30_000): Promise<Response | null> {
  const w = walkDir(rootFd, CONTROL_DIR);
  if (!w.ok) { safeClose(w.parentFd); return null; }
  try {
    const st = lstatAt(w.fd, NAME);
    if (!st?.isSocket()) return null;
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
