/**
 * The control socket (warden.sock, 0600, in the guard's runtime directory in the deployment,
 * else in the store's control/; its own directory so the notifier unit can be denied it): how commands hand changes to a running daemon, so a
 * sanctioned change never races a revert. One JSON request per connection, validated
 * against src/daemon/protocol.ts before the handler sees it.
 *
 * Limits, so a client (or a thousand) cannot starve the guard of file descriptors or
 * memory (1,100 idle connections under --nofile=1024 made edits stick): at most
 * MAX_CONNECTIONS at once (the rest are closed on accept), MAX_REQUEST bytes per request,
 * and IDLE_MS to send it. Refusals are logged once per minute at most.
 *
 * Paths go through /proc/self/fd so a long root path never hits the 108-byte sun_path limit
 * and a swapped snapshots/ link is never followed.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';
import { lstatAt, safeClose, unlinkAt, at, atText } from '../fsx/beneath.js';
import { SOCKET_NAME } from '../store/layout.js';
import type { Store } from '../store/store.js';
import type { AnyReply, ControlErrorCode, ControlRequest } from './protocol.js';

// The protocol's zod schemas load with the first request (or reply), not with the guard.
const protocol = () => import('./protocol.js');

const NAME = SOCKET_NAME;

export interface ControlLimits {
  /** Connections served at once; more are closed as soon as they are accepted. */
  maxConnections: number;
  /** Bytes of one request line (a change carries whole files, base64). */
  maxRequest: number;
  /** A client that has not sent its whole request by then is disconnected. */
  idleMs: number;
}
export const DEFAULT_LIMITS: ControlLimits = { maxConnections: 32, maxRequest: 8 * 1024 * 1024, idleMs: 10_000 };

export interface ControlServer { close(): Promise<void> }

export async function listenControl(store: Store, handle: (req: ControlRequest) => Promise<AnyReply>,
  opts: { limits?: Partial<ControlLimits>; log?: (line: string) => void } = {}): Promise<ControlServer> {
  const limits = { ...DEFAULT_LIMITS, ...(opts.limits ?? {}) };
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  let lastComplaint = 0;
  let refusedSince = 0;
  const complain = (what: string) => {
    refusedSince++;
    const now = Date.now();
    if (now - lastComplaint < 60_000) return;
    log(`<4>warden: control socket: ${what} (${refusedSince} refused in the last minute at most)`);
    lastComplaint = now;
    refusedSince = 0;
  };

  const dirFd = store.socketDirs()[0]!.open(true) as number;
  const st = lstatAt(dirFd, NAME);
  if (st?.isSocket()) unlinkAt(dirFd, NAME);
  const server: Server = createServer((sock) => serve(sock, handle, limits, complain));
  server.maxConnections = limits.maxConnections;
  server.on('drop', () => complain(`more than ${limits.maxConnections} connections at once; closed the extra ones`));
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

function serve(sock: Socket, handle: (req: ControlRequest) => Promise<AnyReply>, limits: ControlLimits, complain: (what: string) => void): void {
  let buf = '';
  // One request per connection: once a line (or an oversized prefix) was seen, later
  // data is ignored, so a request is never run twice and nothing keeps accumulating.
  let handled = false;
  const refuse = (code: ControlErrorCode, error: string) => {
    handled = true;
    buf = '';
    sock.setTimeout(0);
    sock.end(JSON.stringify({ ok: false, code, error }) + '\n', () => sock.destroy());
  };
  sock.setEncoding('utf8');
  // Only until the request is in: a change may then take long (history, approval).
  sock.setTimeout(limits.idleMs, () => {
    if (handled) return;
    complain(`a client sent no complete request within ${limits.idleMs} ms; disconnected`);
    refuse('idle', `no complete request within ${limits.idleMs} ms`);
  });
  sock.on('data', (chunk: string) => {
    if (handled) return;
    // Until now buf held no newline: look in the new chunk only (no quadratic rescans).
    const inChunk = chunk.indexOf('\n');
    const nl = inChunk < 0 ? -1 : buf.length + inChunk;
    buf += chunk;
    if (nl < 0 ? buf.length > limits.maxRequest : nl > limits.maxRequest) { refuse('too-large', `request larger than ${limits.maxRequest} bytes`); return; }
    if (nl < 0) return;
    handled = true;
    sock.setTimeout(0);
    const line = buf.slice(0, nl);
    buf = '';
    let raw: unknown;
    try { raw = JSON.parse(line); } catch { refuse('bad-request', 'malformed request: not JSON'); return; }
    protocol().then(({ requestSchema }) => {
      const req = requestSchema.safeParse(raw);
      if (!req.success) {
        refuse('bad-request', `malformed request: ${req.error.issues.map((i) => `${i.path.join('.') || '(request)'}: ${i.message}`).join('; ')}`);
        return;
      }
      return handle(req.data);
    }).then(
      (res) => { if (res) sock.end(JSON.stringify(res) + '\n'); },
      (err) => sock.end(JSON.stringify({ ok: false, code: 'internal', error: String((err as Error)?.message ?? err) }) + '\n'),
    );
  });
  sock.on('error', () => {});
}

/** Nobody listening; accepted and then gone (or timed out, or answered nonsense); a reply. */
export type Call = { kind: 'none' } | { kind: 'lost'; why: string } | { kind: 'ok'; res: AnyReply };

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

/** Send one request and read its reply, checked against the protocol. */
export async function callDaemon(store: Store, req: ControlRequest, timeoutMs = 30_000): Promise<Call> {
  const w = openSocketDir(store);
  if (!w) return { kind: 'none' };
  const dirFd = w.fd;
  try {
    const { parseReply } = await protocol();
    return await new Promise<Call>((resolve) => {
      const sock = connect(atText(dirFd, NAME));
      let connected = false;
      let buf = '';
      const timer = setTimeout(() => { sock.destroy(); resolve({ kind: 'lost', why: `no answer within ${timeoutMs} ms` }); }, timeoutMs);
      sock.setEncoding('utf8');
      sock.on('connect', () => { connected = true; sock.write(JSON.stringify(req) + '\n'); });
      sock.on('data', (c: string) => { buf += c; });
      sock.on('end', () => {
        clearTimeout(timer);
        let raw: unknown;
        try { raw = JSON.parse(buf); } catch { resolve(connected ? { kind: 'lost', why: 'the connection closed without a reply' } : { kind: 'none' }); return; }
        const r = parseReply(req, raw);
        resolve(r.ok ? { kind: 'ok', res: r.value } : { kind: 'lost', why: `the daemon's reply does not fit the protocol (${r.problem}); is it an older version?` });
      });
      sock.on('error', () => { clearTimeout(timer); resolve(connected ? { kind: 'lost', why: 'the connection failed' } : { kind: 'none' }); });
    });
  } finally { safeClose(dirFd); }
}
