/**
 * The kernel-held half of the one-writer lock. Node has no flock(2); a Linux abstract
 * Unix-domain socket gives the same guarantees: binding a name is exclusive, no file can be
 * removed to free it, and the kernel releases it the moment its holder dies (kill -9
 * included). The name is derived from the store's HMAC key, so it is unique per store and
 * cannot be computed without the key; a holder proves itself by answering a challenge with
 * the key, so a process that squats the name (it is visible in /proc/net/unix) can neither
 * pose as warden nor keep warden from starting.
 *
 * Abstract names live in a network namespace: the guard unit's PrivateNetwork=yes puts its
 * beacon out of the commands' sight, and there the lock file alone decides (lock.ts).
 */
import { createServer, connect, type Server } from 'node:net';
import { randomBytes } from 'node:crypto';
import { hmacEqual, hmacHex } from './keys.js';
import { parseHolder, type Holder } from './lock-holder.js';

const MAX_LINE = 512;
const PROBE_MS = 1500;

export const beaconName = (key: Buffer): string => `\0warden-lock-${hmacHex(key, Buffer.from('warden one-writer lock name')).slice(0, 40)}`;
const proof = (key: Buffer, nonce: string): string => hmacHex(key, Buffer.from(`warden one-writer lock proof\0${nonce}`));

export interface Beacon { close(): void }

/** Bind the name; null when someone else already has it. */
export async function holdBeacon(key: Buffer, holderLine: () => string): Promise<Beacon | null> {
  const server: Server = createServer({ allowHalfOpen: false }, (sock) => {
    let buf = '';
    sock.setEncoding('latin1');
    sock.setTimeout(2000, () => sock.destroy());
    sock.on('error', () => {});
    sock.on('data', (c: string) => {
      buf += c;
      const nl = buf.indexOf('\n');
      if (nl < 0) { if (buf.length > MAX_LINE) sock.destroy(); return; }
      const nonce = buf.slice(0, nl);
      if (!/^[0-9a-f]{32}$/.test(nonce)) { sock.destroy(); return; }
      sock.end(`${proof(key, nonce)} ${holderLine()}`);
      buf = '';
    });
  });
  server.unref();
  try {
    await new Promise<void>((resolve, reject) => { server.once('error', reject); server.listen(beaconName(key), () => resolve()); });
  } catch (err) {
    server.close();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') return null;
    throw err;
  }
  return { close: () => { server.close(); } };
}

export type ProbeResult =
  /** A process that knows the key answered: a warden writer holds the lock. */
  | { kind: 'held'; holder: Holder | null }
  /** Nobody has the name any more: try to bind it again. */
  | { kind: 'gone' }
  /** Something has the name and does not answer in time (a busy holder, or a squatter). */
  | { kind: 'silent' }
  /** Something has the name but cannot prove the key: a squatter. */
  | { kind: 'unproven'; why: string };

export async function probeBeacon(key: Buffer): Promise<ProbeResult> {
  const nonce = randomBytes(16).toString('hex');
  return await new Promise<ProbeResult>((resolve) => {
    const sock = connect(beaconName(key));
    let buf = '';
    let connected = false;
    const done = (r: ProbeResult) => { clearTimeout(timer); sock.destroy(); resolve(r); };
    const timer = setTimeout(() => done({ kind: 'silent' }), PROBE_MS);
    sock.setEncoding('latin1');
    sock.on('connect', () => { connected = true; sock.write(`${nonce}\n`); });
    sock.on('data', (c: string) => { buf += c; if (buf.length > MAX_LINE) done({ kind: 'unproven', why: 'the holder answers too much' }); });
    sock.on('end', () => {
      const sp = buf.indexOf(' ');
      const mac = sp < 0 ? buf : buf.slice(0, sp);
      if (!hmacEqual(mac, proof(key, nonce))) { done({ kind: 'unproven', why: 'the holder cannot prove the store key' }); return; }
      done({ kind: 'held', holder: parseHolder(buf.slice(sp + 1)) });
    });
    sock.on('error', (err: NodeJS.ErrnoException) => {
      if (!connected && (err.code === 'ECONNREFUSED' || err.code === 'ENOENT')) done({ kind: 'gone' });
      else done({ kind: 'unproven', why: `the holder's socket fails (${err.code ?? err.message})` });
    });
  });
}
