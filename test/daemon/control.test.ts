/**
 * The control socket runs one request per connection: data after the first line never
 * runs the handler again; an oversized, malformed, idle or surplus connection is refused
 * with a typed code instead of growing a buffer or holding a descriptor forever.
 */
import { it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { callDaemon, listenControl, type ControlLimits } from '../../src/daemon/control.js';
import type { AnyReply, ControlRequest } from '../../src/daemon/protocol.js';
import { Store } from '../../src/store/store.js';
import { waitFor } from '../helpers/root.js';

let cleanup: (() => Promise<void>) | null = null;
afterEach(async () => { await cleanup?.(); cleanup = null; });

let storeOf: Store;
async function server(handle: (req: ControlRequest) => Promise<AnyReply>, limits: Partial<ControlLimits> = {}, logs: string[] = []): Promise<string> {
  const base = mkdtempSync(join(tmpdir(), 'warden-control-'));
  const root = join(base, 'root');
  mkdirSync(join(root, 'snapshots'), { recursive: true });
  const store = Store.open(root);
  storeOf = store;
  const c = await listenControl(store, handle, { limits, log: (l) => logs.push(l) });
  cleanup = async () => { await c.close(); store.close(); rmSync(base, { recursive: true, force: true }); };
  return join(root, 'snapshots/control/warden.sock');
}

/** allowHalfOpen: the client keeps writing after the daemon's reply, as a misbehaving client would. */
function client(path: string, allowHalfOpen = true): Promise<{ sock: Socket; got: () => string; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const sock = connect({ path, allowHalfOpen });
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
  const calls: ControlRequest[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => { release = r; });
  const path = await server(async (req) => { calls.push(req); await held; return { ok: true, summary: req.op === 'change' && req.change.action === 'show' ? req.change.id : '' }; });
  const c = await client(path);
  await write(c.sock, JSON.stringify({ op: 'change', change: { action: 'show', id: 'first' } }) + '\n');
  await waitFor(() => calls.length === 1, 20_000, 'the first request reaches the handler');
  // More data on the same connection while the first request is in flight: a second line,
  // then enough padding that the daemon must have read it (the write cannot complete
  // until the daemon has drained its receive buffer several times over).
  const second = JSON.stringify({ op: 'change', change: { action: 'show', id: 'second' } }) + '\n';
  assert.equal(await write(c.sock, second + `${' '.repeat(1023)}\n`.repeat(4096)), null);
  release();
  await waitFor(() => c.got().endsWith('\n'), 20_000, 'the reply');
  c.sock.end();
  await c.ended;
  assert.equal(calls.length, 1, `the handler ran ${calls.length} times`);
  assert.deepEqual(JSON.parse(c.got()), { ok: true, summary: 'first' });
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

it('a request that does not fit the protocol is refused with code bad-request, naming the field; the handler never runs', { timeout: 60_000 }, async () => {
  let calls = 0;
  const path = await server(async () => { calls++; return { ok: true }; });
  for (const [req, field] of [
    [{ op: 'apply', path: 'orgs/x.toml' }, /op/],
    [{ op: 'rescan' }, /op/],
    [{ op: 'change', change: { action: 'answer', id: 7, answer: 'approve' } }, /change\.id/],
    [{ op: 'change', change: { action: 'propose', changes: [] } }, /change\.changes/],
    [{ op: 'ping', extra: true }, /extra|unrecognized/i],
  ] as const) {
    const c = await client(path, false);
    await write(c.sock, JSON.stringify(req) + '\n');
    await c.ended;
    const r = JSON.parse(c.got()) as { ok: boolean; code: string; error: string };
    assert.equal(r.ok, false);
    assert.equal(r.code, 'bad-request', JSON.stringify(req));
    assert.match(r.error, field);
  }
  const bad = await client(path, false);
  await write(bad.sock, 'not json\n');
  await bad.ended;
  assert.equal((JSON.parse(bad.got()) as { code: string }).code, 'bad-request');
  assert.equal(calls, 0);
});

it('the command side checks replies too: a reply that does not fit is "lost", not trusted', { timeout: 60_000 }, async () => {
  await server(async () => ({ ok: true, pid: 'not a number' }) as unknown as AnyReply);
  const c = await callDaemon(storeOf, { op: 'ping' }, 10_000);
  assert.equal(c.kind, 'lost');
  assert.match(c.kind === 'lost' ? c.why : '', /does not fit the protocol.*pid/);
});

it('a client that sends no complete request is disconnected after idleMs, with code idle; complaints are rate-limited', { timeout: 60_000 }, async (t) => {
  const logs: string[] = [];
  const path = await server(async () => ({ ok: true }), { idleMs: 200 }, logs);
  const a = await client(path, false);
  const b = await client(path, false);
  await write(b.sock, '{"op":'); // half a request is as idle as none
  await Promise.all([a.ended, b.ended]);
  for (const c of [a, b]) assert.equal((JSON.parse(c.got()) as { code: string }).code, 'idle');
  assert.equal(logs.length, 1, logs.join('\n'));
  assert.match(logs[0]!, /no complete request within 200 ms/);
  void t;
});

it('more than maxConnections at once: the extra ones are closed at once, the others still served', { timeout: 60_000 }, async () => {
  const logs: string[] = [];
  const path = await server(async () => ({ ok: true, summary: 'served' }), { maxConnections: 3, idleMs: 60_000 }, logs);
  const held = [await client(path, false), await client(path, false), await client(path, false)];
  const extra = await client(path, false);
  await extra.ended; // closed by the daemon without a word
  assert.equal(extra.got(), '');
  assert.equal(logs.length, 1);
  assert.match(logs[0]!, /more than 3 connections/);
  // Free one slot: a real request goes through again.
  held[0]!.sock.destroy();
  await held[0]!.ended;
  const c = await waitFor(async () => { const r = await callDaemon(storeOf, { op: 'change', change: { action: 'list' } }, 5000); return r.kind === 'ok' ? r : null; }, 20_000, 'a free slot');
  assert.deepEqual(c.res, { ok: true, summary: 'served' });
  for (const h of held.slice(1)) h.sock.destroy();
});
