/**
 * The one-writer lock (src/store/lock.ts) against a real control directory, in process:
 * the kernel beacon proves the holder, a stale lock file is taken over for each of its
 * reasons (said in the log, the take-over bounded in time: it runs in a worker thread that
 * is stopped at a deadline), a live holder is refused with its name, and the holder's
 * heartbeat (driven here with node:test's mock timers) refreshes, puts back, and reports a
 * second daemon exactly once.
 */
import { describe, it, after, mock } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, constants, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { LockHeldError, acquireLock, lockHolder, type Lock } from '../../src/store/lock.js';
import { bootId, procStart, type Holder } from '../../src/store/lock-holder.js';
import { beaconName, probeBeacon } from '../../src/store/lock-beacon.js';
import { hmacHex } from '../../src/store/keys.js';
import { createServer, type Server } from 'node:net';
import { EXIT } from '../../src/common/errors.js';
import { ioBase, ioSuite } from '../helpers/io-store.js';
import { waitFor } from '../helpers/wait-for.js';

const LABEL = 'snapshots/control/warden.lock';
const BOOT = bootId();
let n = 0;
function dir(): { path: string; fd: number; key: Buffer; lock: string } {
  const path = join(ioBase(), `lock-${++n}`);
  mkdirSync(path, { mode: 0o700 });
  return { path, fd: openSync(path, constants.O_RDONLY | constants.O_DIRECTORY), key: randomBytes(32), lock: join(path, 'warden.lock') };
}
const closers: (() => void)[] = [];
ioSuite('store I/O: the one-writer lock (lock.ts)', () => {
  after(() => { for (const c of closers.splice(0).reverse()) { try { c(); } catch { /* already closed */ } } });

  /** A live process that is not this one (its pid and start time are real). */
  function other(): { pid: number; start: string } {
    const c: ChildProcess = spawn('sleep', ['120'], { stdio: 'ignore' });
    closers.push(() => c.kill('SIGKILL'));
    const start = procStart(c.pid!);
    assert.ok(start, 'the start time of the child');
    return { pid: c.pid!, start };
  }
  function deadPid(): number {
    const r = spawnSync('true');
    assert.equal(r.status, 0);
    return r.pid!;
  }

  const WORKER = `
  const { parentPort, workerData } = require('node:worker_threads');
  const fs = require('node:fs');
  (async () => {
    const { acquireLock } = await import(workerData.url);
    const fd = fs.openSync(workerData.dir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
    const lines = [];
    try {
      const l = await acquireLock(fd, { role: 'command', waitMs: 1000, key: Buffer.from(workerData.key, 'hex'), label: workerData.label, log: (x) => lines.push(x) });
      const content = fs.readFileSync(workerData.dir + '/warden.lock', 'utf8');
      l.release();
      parentPort.postMessage({ ok: true, lines, content, after: fs.readdirSync(workerData.dir) });
    } catch (e) { parentPort.postMessage({ ok: false, lines, message: String(e && e.message) }); }
    finally { fs.closeSync(fd); }
  })();`;
  type Took = { ok: true; lines: string[]; content: string; after: string[] } | { ok: false; lines: string[]; message: string };
  /** acquireLock in a worker thread, stopped at the deadline: a take-over that loops fails here instead of hanging the file. */
  function acquireInWorker(d: { path: string; key: Buffer }, ms = 15_000): Promise<Took> {
    return new Promise((resolve, reject) => {
      const w = new Worker(WORKER, { eval: true, workerData: { url: new URL('../../src/store/lock.js', import.meta.url).href, dir: d.path, key: d.key.toString('hex'), label: LABEL } });
      const timer = setTimeout(() => { void w.terminate(); reject(new Error(`acquireLock did not return within ${ms} ms`)); }, ms);
      w.once('message', (m: Took) => { clearTimeout(timer); void w.terminate(); resolve(m); });
      w.once('error', (e) => { clearTimeout(timer); reject(e); });
    });
  }
  const mine = (role: string) => `${process.pid} ${procStart(process.pid)} ${BOOT} ${role}\n`;

  describe('a held lock', () => {
    it('the beacon proves the holder; lockHolder names it even with the file gone; release frees both', async () => {
      const d = dir();
      const l = await acquireLock(d.fd, { role: 'daemon', waitMs: 1000, key: d.key, label: LABEL });
      closers.push(() => l.release());
      assert.deepEqual(l.holder, { pid: process.pid, start: procStart(process.pid), boot: BOOT, role: 'daemon' });
      assert.equal(readFileSync(d.lock, 'utf8'), mine('daemon'));
      assert.equal(statSync(d.lock).mode & 0o777, 0o600);
      assert.deepEqual(await probeBeacon(d.key), { kind: 'held', holder: l.holder });
      assert.deepEqual(await probeBeacon(randomBytes(32)), { kind: 'gone' }, 'another store key: another name');
      assert.deepEqual(await lockHolder(d.fd, d.key), l.holder);
      rmSync(d.lock);
      assert.deepEqual(await lockHolder(d.fd, d.key), l.holder, 'from the beacon alone');
      l.release();
      l.release();
      assert.deepEqual(await probeBeacon(d.key), { kind: 'gone' });
      assert.equal(await lockHolder(d.fd, d.key), null);
      assert.deepEqual(readdirSync(d.path), []);
      closeSync(d.fd);
    });

    it('lockHolder without a beacon: a live holder named by the file; none for a stale one', async () => {
      const d = dir();
      const o = other();
      writeFileSync(d.lock, `${o.pid} ${o.start} ${BOOT} command\n`);
      assert.deepEqual(await lockHolder(d.fd, d.key), { pid: o.pid, start: o.start, boot: BOOT, role: 'command' });
      writeFileSync(d.lock, `${deadPid()} 1 ${BOOT} command\n`);
      assert.equal(await lockHolder(d.fd, d.key), null);
      closeSync(d.fd);
    });

    it('a beacon holder that proves the key but names no holder: lockHolder says a holder, pid 0', async () => {
      const d = dir();
      const srv: Server = createServer((sock) => {
        sock.setEncoding('latin1');
        sock.on('data', (c: string) => { const nonce = c.split('\n')[0]!; sock.end(`${hmacHex(d.key, Buffer.from(`warden one-writer lock proof\0${nonce}`))} not a holder line`); });
      });
      await new Promise<void>((r) => srv.listen(beaconName(d.key), () => r()));
      closers.push(() => srv.close());
      assert.deepEqual(await probeBeacon(d.key), { kind: 'held', holder: null });
      assert.deepEqual(await lockHolder(d.fd, d.key), { pid: 0, start: '-', boot: '-', role: '?' });
      const o = other();
      writeFileSync(d.lock, `${o.pid} ${o.start} ${BOOT} command\n`);
      assert.deepEqual(await lockHolder(d.fd, d.key), { pid: o.pid, start: o.start, boot: BOOT, role: 'command' }, 'the file names it');
      srv.close();
      closeSync(d.fd);
    });

    it('refused while another live process holds the file: a daemon at once, a command after the wait; the beacon let go', async () => {
      const d = dir();
      const o = other();
      writeFileSync(d.lock, `${o.pid} ${o.start} ${BOOT} daemon\n`);
      const t0 = Date.now();
      await assert.rejects(acquireLock(d.fd, { role: 'command', waitMs: 5000, key: d.key, label: LABEL }), (e: unknown) => {
        assert.ok(e instanceof LockHeldError);
        assert.equal(e.message, `another warden daemon already guards this root (pid ${o.pid}); it holds ${LABEL}`);
        assert.deepEqual(e.holder, { pid: o.pid, start: o.start, boot: BOOT, role: 'daemon' });
        assert.equal(e.exitCode, EXIT.usage);
        assert.equal(e.name, 'LockHeldError');
        return true;
      });
      assert.ok(Date.now() - t0 < 4000, 'a daemon holder is refused at once, not waited for');
      assert.deepEqual(await probeBeacon(d.key), { kind: 'gone' }, 'the refused writer holds no beacon');
      writeFileSync(d.lock, `${o.pid} ${o.start} ${BOOT} command\n`);
      const t1 = Date.now();
      await assert.rejects(acquireLock(d.fd, { role: 'command', waitMs: 300, key: d.key }),
        { message: `warden.lock is held by a warden command (pid ${o.pid}); try again when it is done, or stop it first` });
      assert.ok(Date.now() - t1 >= 300, 'waited for the command until the deadline');
      // The pid-only format of an older warden: the holder is named by its pid alone.
      writeFileSync(d.lock, `${o.pid}\n`);
      await assert.rejects(acquireLock(d.fd, { role: 'command', waitMs: 200, key: d.key }),
        { message: `warden.lock is held by pid ${o.pid}; try again when it is done, or stop it first` });
      writeFileSync(d.lock, 'garbled');
      await assert.rejects(acquireLock(d.fd, { role: 'command', waitMs: 200, key: d.key, label: LABEL }),
        { message: `${LABEL} is held by another warden process (its content is unreadable (it is stale once it is a few seconds old)); try again when it is done, or stop it first` });
      assert.equal(readFileSync(d.lock, 'utf8'), 'garbled', 'a fresh unreadable file is left alone');
      closeSync(d.fd);
    });

    it('refused while this process holds it (through the beacon), naming the role', async () => {
      const d = dir();
      const l = await acquireLock(d.fd, { role: 'command', waitMs: 1000, key: d.key });
      closers.push(() => l.release());
      await assert.rejects(acquireLock(d.fd, { role: 'command', waitMs: 200, key: d.key, label: LABEL }),
        { message: `${LABEL} is held by a warden command (pid ${process.pid}); try again when it is done, or stop it first` });
      l.release();
      const d2 = await acquireLock(d.fd, { role: 'daemon', waitMs: 1000, key: d.key });
      closers.push(() => d2.release());
      await assert.rejects(acquireLock(d.fd, { role: 'command', waitMs: 2000, key: d.key }),
        { message: `another warden daemon already guards this root (pid ${process.pid}); it holds warden.lock` });
      d2.release();
      closeSync(d.fd);
    });
  });

  describe('a stale lock file is taken over, for each reason', () => {
    const cases: [string, (d: { lock: string }) => void, (why: string) => boolean | string][] = [];
    const plant = (content: string | Buffer, ageMs = 0) => (d: { lock: string }) => {
      writeFileSync(d.lock, content);
      if (ageMs) { const t = new Date(Date.now() - ageMs); utimesSync(d.lock, t, t); }
    };
    it('a dead pid, another boot, a reused pid, our own pid, old garbage, an old empty file, too large, not a file, unverifiable and silent', async () => {
      const dead = deadPid();
      const o = other();
      cases.push(
        ['dead', plant(`${dead} 1 ${BOOT} daemon\n`), (w) => w === `pid ${dead} is gone`],
        ['boot', plant(`${o.pid} ${o.start} 00000000-0000-0000-0000-000000000000 daemon\n`), (w) => w === `pid ${o.pid} held it before the last reboot`],
        ['reused', plant(`${o.pid} 1 ${BOOT} daemon\n`), (w) => w === `pid ${o.pid} is now another process`],
        ['self', plant(mine('command')), (w) => w === `pid ${process.pid} is this process, which does not hold it`],
        ['garbage', plant('garbage', 60_000), (w) => w === 'its content is unreadable'],
        ['empty', plant('', 60_000), (w) => w === 'it is empty'],
        ['large', plant('7'.repeat(5000)), (w) => w === 'it cannot be read'],
        ['dir', (d) => mkdirSync(d.lock), (w) => w === 'it is not a regular file'],
        ['silent', plant(`${o.pid} - - daemon\n`, 360_000), (w) => w === `pid ${o.pid} cannot be checked and has not refreshed the lock for 360 s`],
      );
      for (const [name, make, why] of cases) {
        const d = dir();
        make(d);
        const r = await acquireInWorker(d);
        assert.ok(r.ok, `${name}: ${JSON.stringify(r)}`);
        const removed = r.lines.filter((l) => l.startsWith(`<5>warden: removing a stale ${LABEL}: `));
        assert.equal(removed.length, 1, `${name}: ${JSON.stringify(r.lines)}`);
        assert.ok(why(removed[0]!.slice(`<5>warden: removing a stale ${LABEL}: `.length)), `${name}: ${removed[0]}`);
        assert.equal(r.content, mine('command'), `${name}: the lock is the new writer's`);
        assert.deepEqual(r.after, [], `${name}: released, and nothing of the stale lock is left behind`);
        closeSync(d.fd);
      }
    });

    it('a directory with something in it at the lock\'s name: moved aside and named, never deleted', async () => {
      const d = dir();
      mkdirSync(d.lock);
      writeFileSync(join(d.lock, 'keep-me'), 'someone\'s bytes\n');
      const r = await acquireInWorker(d);
      assert.ok(r.ok, JSON.stringify(r));
      const aside = r.after.filter((n) => /^warden\.lock\.[0-9a-f]+\.tmp$/.test(n));
      assert.equal(aside.length, 1, JSON.stringify(r.after));
      assert.equal(readFileSync(join(d.path, aside[0]!, 'keep-me'), 'utf8'), 'someone\'s bytes\n');
      const said = r.lines.filter((l) => l.includes(aside[0]!));
      assert.deepEqual(said, [`<4>warden: the stale ${LABEL} was a directory that is not empty: moved aside to ${aside[0]}, for you to look at and remove`]);
      closeSync(d.fd);
    });

    it('old temporary files of killed writers are swept; a young one and other names are left', async () => {
      const d = dir();
      const old = join(d.path, 'warden.lock.0123456789ab.tmp');
      const young = join(d.path, 'warden.lock.ba9876543210.tmp');
      const otherName = join(d.path, 'warden.lock.not-hex.tmp');
      for (const p of [old, young, otherName]) writeFileSync(p, '1\n');
      const past = new Date(Date.now() - 120_000);
      utimesSync(old, past, past);
      utimesSync(otherName, past, past);
      const l = await acquireLock(d.fd, { role: 'command', waitMs: 1000, key: d.key });
      assert.deepEqual(readdirSync(d.path).sort(), ['warden.lock', 'warden.lock.ba9876543210.tmp', 'warden.lock.not-hex.tmp']);
      l.release();
      closeSync(d.fd);
    });
  });

  describe('the holder\'s heartbeat (mock timers: one tick is 2 s)', () => {
    it('refreshes the file\'s time; puts a removed or stale-replaced file back (said once each); a live daemon\'s replacement is reported once', async () => {
      const d = dir();
      const lines: string[] = [];
      const lost: Holder[] = [];
      mock.timers.enable({ apis: ['setInterval'] });
      let l: Lock | null = null;
      try {
        l = await acquireLock(d.fd, { role: 'daemon', waitMs: 1000, key: d.key, label: LABEL, log: (x) => lines.push(x), onLost: (h) => lost.push(h) });
        const past = new Date(Date.now() - 3_600_000);
        utimesSync(d.lock, past, past);
        mock.timers.tick(2000);
        assert.ok(Date.now() - statSync(d.lock).mtimeMs < 60_000, 'the heartbeat refreshed the time');
        // Removed: put back with the same line.
        const ino = statSync(d.lock).ino;
        rmSync(d.lock);
        mock.timers.tick(2000);
        assert.equal(readFileSync(d.lock, 'utf8'), mine('daemon'));
        assert.notEqual(statSync(d.lock).ino, ino);
        assert.deepEqual(lines, [`<4>warden: ${LABEL} was removed while pid ${process.pid} holds it; put it back`]);
        mock.timers.tick(2000);
        assert.equal(lines.length, 1, 'its own file again: nothing more to say');
        // Replaced by a stale one: moved away, then ours put back.
        writeFileSync(join(d.path, 'x'), `${deadPid()} 1 ${BOOT} daemon\n`);
        rmSync(d.lock);
        writeFileSync(d.lock, readFileSync(join(d.path, 'x')));
        rmSync(join(d.path, 'x'));
        mock.timers.tick(2000);
        mock.timers.tick(2000);
        assert.equal(readFileSync(d.lock, 'utf8'), mine('daemon'));
        assert.equal(lines.length, 2);
        assert.equal(lines[1], `<4>warden: ${LABEL} was removed while pid ${process.pid} holds it; put it back`);
        // Replaced by another live daemon: said once, onLost once, however many ticks.
        const o = other();
        rmSync(d.lock);
        writeFileSync(d.lock, `${o.pid} ${o.start} ${BOOT} daemon\n`);
        for (let i = 0; i < 4; i++) mock.timers.tick(2000);
        assert.deepEqual(lines.slice(2), [`<2>warden: ${LABEL} was replaced by the warden daemon (pid ${o.pid})'s while this process (pid ${process.pid}) holds it`]);
        assert.deepEqual(lost, [{ pid: o.pid, start: o.start, boot: BOOT, role: 'daemon' }]);
        assert.equal(readFileSync(d.lock, 'utf8'), `${o.pid} ${o.start} ${BOOT} daemon\n`, 'theirs is left in place');
        l.release();
        assert.equal(readFileSync(d.lock, 'utf8'), `${o.pid} ${o.start} ${BOOT} daemon\n`, 'release removes only its own file');
        rmSync(d.lock);
        mock.timers.tick(2000);
        assert.deepEqual(readdirSync(d.path), [], 'released: no heartbeat puts anything back');
      } finally {
        l?.release();
        mock.timers.reset();
        closeSync(d.fd);
      }
    });

    it('a live command\'s replacement is reported once and is no lost daemon', async () => {
      const d = dir();
      const lines: string[] = [];
      const lost: Holder[] = [];
      mock.timers.enable({ apis: ['setInterval'] });
      let l: Lock | null = null;
      try {
        l = await acquireLock(d.fd, { role: 'daemon', waitMs: 1000, key: d.key, log: (x) => lines.push(x), onLost: (h) => lost.push(h) });
        const o = other();
        rmSync(d.lock);
        writeFileSync(d.lock, `${o.pid} ${o.start} ${BOOT} command\n`);
        mock.timers.tick(2000);
        mock.timers.tick(2000);
        assert.deepEqual(lines, [`<2>warden: warden.lock was replaced by a warden command (pid ${o.pid})'s while this process (pid ${process.pid}) holds it`]);
        assert.deepEqual(lost, []);
      } finally {
        l?.release();
        mock.timers.reset();
        closeSync(d.fd);
      }
    });
  });

  describe('waiting for a command holder', () => {
    it('the next writer gets the lock once the command releases it, before the deadline', async () => {
      const d = dir();
      const first = await acquireLock(d.fd, { role: 'command', waitMs: 1000, key: d.key });
      const released = new Promise<void>((r) => setTimeout(() => { first.release(); r(); }, 300));
      const t0 = Date.now();
      const next = await acquireLock(d.fd, { role: 'command', waitMs: 10_000, key: d.key });
      assert.ok(Date.now() - t0 >= 250, 'it waited');
      await released;
      await waitFor(() => readFileSync(d.lock, 'utf8') === mine('command'), 5000, 'the next writer\'s lock file');
      assert.deepEqual(await probeBeacon(d.key), { kind: 'held', holder: next.holder });
      next.release();
      closeSync(d.fd);
    });
  });
});
