/**
 * The one-writer lock on its own (src/store/lock.ts, lock-holder.ts, lock-beacon.ts), against
 * a real directory: who is stale, what survives `rm`, and a squatted beacon name.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, openSync, closeSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, constants } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LockHeldError, acquireLock, lockHolder, type Lock } from '../../src/store/lock.js';
import { GARBLED_STALE_MS, UNVERIFIED_STALE_MS, judge, parseHolder, procStart, type Probe } from '../../src/store/lock-holder.js';
import { beaconName } from '../../src/store/lock-beacon.js';
import { waitFor } from '../helpers/root.js';

const cleanups: (() => void)[] = [];
afterEach(() => { for (const c of cleanups.splice(0).reverse()) c(); });

function dir(): { path: string; fd: number; key: Buffer } {
  const path = mkdtempSync(join(tmpdir(), 'warden-lock-'));
  const fd = openSync(path, constants.O_RDONLY | constants.O_DIRECTORY);
  cleanups.push(() => { closeSync(fd); rmSync(path, { recursive: true, force: true }); });
  return { path, fd, key: randomBytes(32) };
}
function held(l: Lock): Lock { cleanups.push(() => l.release()); return l; }

describe('judge: who holds a lock file', () => {
  const probe = (over: Partial<Probe> = {}): Probe => ({ alive: () => true, start: () => '777', boot: 'b'.repeat(36), now: 1_000_000, ...over });
  const line = (s: string) => Buffer.from(s);
  const B = 'b'.repeat(36);
  it('a live holder with its start time holds it', () => {
    assert.equal(judge(line(`4242 777 ${B} daemon\n`), 999_000, false, probe()).stale, false);
  });
  it('the same pid with another start time is a reused pid: stale', () => {
    const v = judge(line(`4242 776 ${B} daemon\n`), 999_000, false, probe());
    assert.equal(v.stale, true);
    assert.match(v.why, /another process/);
  });
  it('a dead pid is stale; a lock from another boot is stale', () => {
    assert.equal(judge(line(`4242 777 ${B} daemon\n`), 999_000, false, probe({ alive: () => false })).stale, true);
    assert.equal(judge(line(`4242 777 ${'c'.repeat(36)} daemon\n`), 999_000, false, probe()).stale, true);
  });
  it('empty or garbled content is stale once it is old, and not before', () => {
    for (const c of ['', 'garbage', '42 x', '\u0000\u0001']) {
      assert.equal(judge(line(c), 1_000_000 - GARBLED_STALE_MS - 1, false, probe()).stale, true, JSON.stringify(c));
      assert.equal(judge(line(c), 1_000_000 - 10, false, probe()).stale, false, JSON.stringify(c));
    }
  });
  it('a holder that cannot be checked (hidden /proc, old format) is stale only after a long silence', () => {
    const hidden = probe({ start: () => null });
    assert.equal(judge(line(`4242 777 ${B} daemon\n`), 1_000_000 - 1000, false, hidden).stale, false);
    assert.equal(judge(line(`4242 777 ${B} daemon\n`), 1_000_000 - UNVERIFIED_STALE_MS - 1, false, hidden).stale, true);
    assert.equal(judge(line('4242\n'), 1_000_000 - 1000, false, probe()).stale, false);
    assert.deepEqual(parseHolder('4242\n'), { pid: 4242, start: '-', boot: '-', role: '?' });
  });
  it('reads the start time of a real process', () => {
    assert.match(procStart(process.pid) ?? '', /^\d+$/);
    assert.equal(procStart(2 ** 30), null);
  });
});

describe('acquireLock', () => {
  it('writes one complete line, 0600, and leaves no temporary file', async () => {
    const d = dir();
    const l = held(await acquireLock(d.fd, { role: 'command', waitMs: 1000, key: d.key }));
    const text = readFileSync(join(d.path, 'warden.lock'), 'utf8');
    assert.equal(text, `${process.pid} ${procStart(process.pid)} ${l.holder.boot} command\n`);
    assert.equal(statSync(join(d.path, 'warden.lock')).mode & 0o777, 0o600);
    assert.deepEqual(readdirSync(d.path), ['warden.lock']);
    l.release();
    assert.deepEqual(readdirSync(d.path), []);
  });

  it('a second writer is refused while the first holds it, even after the lock file is removed', async () => {
    const d = dir();
    const first = held(await acquireLock(d.fd, { role: 'daemon', waitMs: 1000, key: d.key }));
    await assert.rejects(acquireLock(d.fd, { role: 'command', waitMs: 200, key: d.key }), (e: unknown) => e instanceof LockHeldError && /already guards this root \(pid \d+\)/.test(e.message));
    rmSync(join(d.path, 'warden.lock'));
    // The file is gone: the kernel-held beacon still says who holds it.
    await assert.rejects(acquireLock(d.fd, { role: 'command', waitMs: 200, key: d.key }), (e: unknown) => e instanceof LockHeldError && e.holder?.pid === process.pid);
    // And the holder puts its file back.
    await waitFor(() => readFileSync(join(d.path, 'warden.lock'), 'utf8').startsWith(`${process.pid} `), 10_000, 'the lock file put back');
    assert.equal((await lockHolder(d.fd, d.key))?.role, 'daemon');
    first.release();
    assert.equal(await lockHolder(d.fd, d.key), null);
    held(await acquireLock(d.fd, { role: 'command', waitMs: 1000, key: d.key }));
  });

  it('a command holder is waited for, then the next writer gets it', async () => {
    const d = dir();
    const first = await acquireLock(d.fd, { role: 'command', waitMs: 1000, key: d.key });
    setTimeout(() => first.release(), 300);
    held(await acquireLock(d.fd, { role: 'command', waitMs: 5000, key: d.key }));
  });

  it('a fresh unreadable lock file is not taken over at once', async () => {
    const d = dir();
    writeFileSync(join(d.path, 'warden.lock'), '');
    await assert.rejects(acquireLock(d.fd, { role: 'command', waitMs: 200, key: d.key }), /unreadable/);
  });

  it('a squatter on the beacon name (no key) neither poses as warden nor keeps it from starting', async () => {
    const d = dir();
    const squatter: Server = createServer((s) => { s.end('0123 4242 - daemon\n'); });
    await new Promise<void>((r) => squatter.listen(beaconName(d.key), () => r()));
    cleanups.push(() => squatter.close());
    const lines: string[] = [];
    held(await acquireLock(d.fd, { role: 'daemon', waitMs: 1000, key: d.key, log: (l) => lines.push(l) }));
    assert.ok(lines.some((l) => /does not prove itself warden \(the holder cannot prove the store key\)/.test(l)), lines.join('\n'));
  });

  it('a squatter that accepts and never answers delays a start only until the deadline', async () => {
    const d = dir();
    const squatter: Server = createServer(() => { /* silent */ });
    await new Promise<void>((r) => squatter.listen(beaconName(d.key), () => r()));
    cleanups.push(() => squatter.close());
    const lines: string[] = [];
    held(await acquireLock(d.fd, { role: 'daemon', waitMs: 500, key: d.key, log: (l) => lines.push(l) }));
    assert.ok(lines.some((l) => /does not answer/.test(l)), lines.join('\n'));
  });
});
