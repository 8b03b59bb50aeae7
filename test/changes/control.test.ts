/**
 * The control socket runs one request per connection: data after the first line never
 * runs the handler again, and an oversized request closes the connection instead of
 * growing a buffer forever.
 */
import { it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenControl, type Request, type Response } from '../../src/daemon/control.js';
import { Store } from '../../src/store/store.js';
import { waitFor } from '../helpers/root.js';

let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => { await cleanup?.(); cleanup = null; });

async function server(handle: (req: Request) => Promise<Response>): Promise<string> {
  const base = mkdtempSync(join(tmpdir(), 'warden-control-'));
  const root = join(base, 'root');
  mkdirSync(join(root, 'snapshots'), { recursive: true });
  const store = Store.open(root);
  const c = await listenControl(store, handle);
  cleanup = async () => { await c.close(); store.close(); rmSync(base, { recursive: true, force: true }); };
  return join(root, 'snapshots/control/warden.sock');
}

/** allowHalfOpen: the client keeps writing after the daemon's reply, as a misbehaving client would. */
function client(path: string): Promise<{ sock: Socket; got: () => string; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const sock = connect({ path, allowHalfOpen: true });
    let buf = '';
    sock.setEncoding('utf8');
    sock.on('data', (d: string) => { buf += d; });
    const ended = new Promise<void>((res) => sock.once('close', () => res()));
    sock.once('error', () => {});
    sock.once('connect', () => resolve({ sock, got: () => buf, ended }));
    sock.once('error', reject);
  });
}

const write = (sock: Socket, data: string | Buffer): Promise<Error | null> => new Promise((res) => { sock.write(data, (err) => res(err ?? null)); });

it('one connection sending two lines runs the handler once', { timeout: 60_000 }, async () => {
  const calls: Request[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => { release = r; });
  const path = await server(async (req) => { calls.push(req); await held; return { ok: true, echo: req.n }; });
  const c = await client(path);
  await write(c.sock, JSON.stringify({ op: 'change', n: 1 }) + '\n');
  await waitFor(() => calls.length === 1, 20_000, 'the first request reaches the handler');
  // More data on the same connection while the first request is in flight: a second line,
  // then enough padding that the daemon must have read it (the write cannot complete
  // until the daemon has drained its receive buffer several times over).
  const second = JSON.stringify({ op: 'change', n: 2 }) + '\n';
  assert.equal(await write(c.sock, second + `${' '.repeat(1023)}\n`.repeat(4096)), null);
  release();
  await waitFor(() => c.got().endsWith('\n'), 20_000, 'the reply');
  c.sock.end();
  await c.ended;
  assert.equal(calls.length, 1, `the handler ran ${calls.length} times`);
  assert.deepEqual(JSON.parse(c.got()), { ok: true, echo: 1 });
});

it('an oversized request is refused and the connection closed (the buffer does not keep growing)', { timeout: 60_000 }, async () => {
  let calls = 0;
  const path = await server(async () => { calls++; return { ok: true }; });
  const c = await client(path);
  const chunk = Buffer.alloc(1024 * 1024, 0x61);
  let err: Error | null = null;
  // 8 MiB is the limit; keep sending (up to 64 MiB) the way a misbehaving client would.
  for (let i = 0; i < 64 && !err; i++) err = await write(c.sock, chunk);
  assert.ok(err, 'the daemon closed the connection instead of reading on');
  c.sock.destroy();
  await c.ended;
  assert.equal(calls, 0);
});
