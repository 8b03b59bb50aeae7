/** The witness's pure parts: open intent from /proc/TID/syscall, the unit from a cgroup, `by` in plain words. */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { intentOfSyscall, parseStatus, readIntent, refuses, unitOfCgroup } from '../../src/witness/proc.js';
import { parseEvents, parseNameEvents } from '../../src/witness/fanotify.js';
import { RecordReader } from '../../src/witness/record.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeBy } from '../../src/store/writer-words.js';
import type { Writer } from '../../src/store/alert-types.js';

it('intent: openat flags decide; creat always writes; other syscalls and garbage are unknown', () => {
  assert.equal(intentOfSyscall('257 0xffffff9c 0x7ffd1 0x0 0x0 0x0 0x0 0x7ffd 0x7f', 'x64'), 'read');
  assert.equal(intentOfSyscall('257 0xffffff9c 0x7ffd1 0x80000 0x0', 'x64'), 'read'); // O_CLOEXEC only
  assert.equal(intentOfSyscall('257 0xffffff9c 0x7ffd1 0x241 0x1b6', 'x64'), 'write'); // O_WRONLY|O_CREAT|O_TRUNC
  assert.equal(intentOfSyscall('257 0xffffff9c 0x7ffd1 0x2 0x0', 'x64'), 'write'); // O_RDWR (an mmap writer)
  assert.equal(intentOfSyscall('2 0x7ffd1 0x401 0x0', 'x64'), 'write'); // open(O_WRONLY|O_APPEND)
  assert.equal(intentOfSyscall('85 0x7ffd1 0x1a4', 'x64'), 'write');
  assert.equal(intentOfSyscall('56 0xffffffffffffff9c 0x7ffd1 0x241', 'arm64'), 'write');
  assert.equal(intentOfSyscall('437 0xffffff9c 0x7ffd1 0x7ffd2 0x18', 'x64'), 'unknown'); // openat2
  assert.equal(intentOfSyscall('running', 'x64'), 'unknown');
  assert.equal(intentOfSyscall('', 'x64'), 'unknown');
});

it('intent of a task not yet asleep in its open ("running"): read again until it is, within a bound; then unknown', () => {
  const line = '257 0xffffff9c 0x7ffd1 0x441 0x1b6'; // O_WRONLY|O_CREAT|O_APPEND, as `>>` opens
  let reads = 0;
  let pauses = 0;
  const seq = ['running\n', 'running\n', 'running\n', line];
  assert.equal(readIntent(7, { read: () => seq[reads++] ?? null, pause: () => { pauses++; }, tries: 50, arch: 'x64' }), 'write');
  assert.equal(reads, 4);
  assert.equal(pauses, 3);
  reads = 0;
  assert.equal(readIntent(7, { read: () => { reads++; return 'running\n'; }, pause: () => {}, tries: 50, arch: 'x64' }), 'unknown');
  assert.equal(reads, 50, 'bounded: the opener is held until answered, so the witness must not wait forever');
  assert.equal(readIntent(7, { read: () => null, pause: () => { throw new Error('no pause for an unreadable task'); }, tries: 50, arch: 'x64' }), 'unknown');
});

it('refused under enforce: a write or an open it cannot classify, of a protected file; never a read, never without enforce', () => {
  assert.equal(refuses(true, 'write', true), true);
  assert.equal(refuses(true, 'unknown', true), true, 'openat2 or io_uring must not be a way around enforce');
  assert.equal(refuses(true, 'read', true), false);
  assert.equal(refuses(true, 'write', false), false);
  assert.equal(refuses(false, 'write', true), false);
  assert.equal(refuses(false, 'unknown', true), false);
});

it('unit: the innermost .service or .scope of the v2 line, else the v1 name=systemd line', () => {
  assert.deepEqual(unitOfCgroup('0::/system.slice/agent-runtime.service\n'), { unit: 'agent-runtime.service', cgroup: '/system.slice/agent-runtime.service' });
  assert.equal(unitOfCgroup('0::/user.slice/user-1000.slice/session-3.scope\n').unit, 'session-3.scope');
  assert.equal(unitOfCgroup('0::/system.slice/x.service/payload\n').unit, 'x.service');
  assert.equal(unitOfCgroup('9:name=systemd:/system.slice/warden-guard.service\n4:memory:/x\n0::/\n').unit, null, 'v2 line wins (hybrid: "/")');
  assert.equal(unitOfCgroup('9:name=systemd:/system.slice/a.service\n4:memory:/x\n').unit, 'a.service');
  assert.equal(unitOfCgroup('garbage').unit, null);
  assert.deepEqual(parseStatus('Name:\tsh\nTgid:\t42\nUid:\t1000\t1000\t1000\t1000\n'), { uid: 1000, tgid: 42 });
});

it('events: parsed by their own length; a torn tail is left', () => {
  const b = Buffer.alloc(60);
  b.writeUInt32LE(24, 0); b.writeBigUInt64LE(0x10000n, 8); b.writeInt32LE(7, 16); b.writeInt32LE(99, 20);
  b.writeUInt32LE(24, 24); b.writeBigUInt64LE(0x10000n, 32); b.writeInt32LE(8, 40); b.writeInt32LE(100, 44);
  b.writeUInt32LE(24, 48);
  assert.deepEqual(parseEvents(b, 60), [{ mask: 0x10000n, fd: 7, pid: 99 }, { mask: 0x10000n, fd: 8, pid: 100 }]);
});

const W: Writer = { pid: 4242, comm: 'vim', exe: '/usr/bin/vim.basic', uid: 1000, user: 'alice', loginuid: 1000, login_user: 'alice', session: 3, unit: 'session-3.scope', op: 'open-write', refused: false, time: '2026-12-01T00:00:00Z' };

it('by in plain words: a login session, sudo, a service, refused, unknown; escaped', () => {
  assert.equal(describeBy(W), `by user alice (uid 1000), in alice's login session 3: process "vim" (pid 4242, "/usr/bin/vim.basic")`);
  assert.equal(describeBy({ ...W, comm: 'vi', uid: 0, user: 'root' }), `by user root (uid 0), in alice's login session 3 (as root, through sudo or su): process "vi" (pid 4242, "/usr/bin/vim.basic")`);
  assert.equal(describeBy({ ...W, comm: 'node', user: 'agent', loginuid: null, login_user: null, session: null, unit: 'agent-runtime.service', exe: null }), 'by user agent (uid 1000), unit agent-runtime.service: process "node" (pid 4242)');
  assert.match(describeBy({ ...W, refused: true })!, /^tried by user alice.*: refused \(EPERM\), nothing written$/);
  assert.equal(describeBy({ unknown: 'no witness running' }), 'who: not known (no witness running)');
  assert.doesNotMatch(describeBy({ ...W, comm: 'x\u001b[31m\nforged' })!, /[\u001b\n]/);
  assert.equal(describeBy(undefined), null);
});

/** One event of a DFID_NAME | PIDFD group, as the kernel lays it out. */
function nameEvent(mask: number, pid: number, pidfd: number, handle: Buffer, name: string): Buffer {
  const nameBytes = Buffer.from(`${name}\0`, 'latin1');
  const dfidLen = 4 + 8 + 8 + handle.length + nameBytes.length;
  const dfid = Buffer.alloc(dfidLen + ((4 - (dfidLen % 4)) % 4));
  dfid[0] = 2; dfid.writeUInt16LE(dfid.length, 2);
  dfid.writeBigUInt64LE(0x1122334455667788n, 4);
  dfid.writeUInt32LE(handle.length, 12); dfid.writeInt32LE(1, 16);
  handle.copy(dfid, 20); nameBytes.copy(dfid, 20 + handle.length);
  const pinfo = Buffer.alloc(8); pinfo[0] = 4; pinfo.writeUInt16LE(8, 2); pinfo.writeInt32LE(pidfd, 4);
  const meta = Buffer.alloc(24);
  meta.writeUInt32LE(24 + dfid.length + pinfo.length, 0); meta[4] = 3; meta.writeUInt16LE(24, 6);
  meta.writeBigUInt64LE(BigInt(mask), 8); meta.writeInt32LE(-1, 16); meta.writeInt32LE(pid, 20);
  return Buffer.concat([meta, dfid, pinfo]);
}

it('name events: directory key, entry name and pidfd per event; a truncated event ends the parse', () => {
  const h = Buffer.from('0102030405060708', 'hex');
  const buf = Buffer.concat([nameEvent(0x4, 100, 7, h, 'bookclub.toml'), nameEvent(0x200, 101, -1, h, 'x.toml')]);
  const evs = parseNameEvents(buf, buf.length);
  assert.equal(evs.length, 2);
  assert.deepEqual({ ...evs[0], mask: Number(evs[0]!.mask) }, { mask: 4, pid: 100, pidfd: 7, dir: '8877665544332211:080000000100000001020304050607 08'.replace(' ', ''), name: 'bookclub.toml' });
  assert.equal(evs[1]!.pidfd, -1);
  assert.equal(evs[1]!.name, 'x.toml');
  assert.equal(parseNameEvents(buf, buf.length - 4).length, 1);
});

it('name events with the object\'s own handle (FAN_REPORT_FID): its key beside the directory\'s; an event without one has none', () => {
  const h = Buffer.from('0102030405060708', 'hex');
  const fh = Buffer.from('a1a2a3a4a5a6a7a8', 'hex');
  const base = nameEvent(0x2, 300, 9, h, 'hl-trunc');
  const fid = Buffer.alloc(4 + 8 + 8 + fh.length);
  fid[0] = 1; fid.writeUInt16LE(fid.length, 2);
  fid.writeBigUInt64LE(0x1122334455667788n, 4);
  fid.writeUInt32LE(fh.length, 12); fid.writeInt32LE(1, 16);
  fh.copy(fid, 20);
  const ev = Buffer.concat([base, fid]);
  ev.writeUInt32LE(ev.length, 0);
  const [e] = parseNameEvents(ev, ev.length);
  assert.equal(e!.fid, '8877665544332211:0800000001000000a1a2a3a4a5a6a7a8');
  assert.equal(e!.name, 'hl-trunc');
  assert.equal(e!.pidfd, 9);
  assert.equal(parseNameEvents(base, base.length)[0]!.fid, undefined);
});

it('the name join: the newest record of that path and op within the window, each record used once; a gone actor says why', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warden-names-'));
  try {
    let now = 1_000_000;
    const w = (pid: number, path: string, op: string, t: number) => JSON.stringify({ t, name: 1, path, op, pid, comm: `c${pid}`, exe: null, uid: 0, user: 'root', loginuid: null, login_user: null, session: null, unit: null, refused: false });
    writeFileSync(join(dir, 'record.jsonl'), [
      w(1, 'a.toml', 'attrib', now - 40_000), // outside the window
      w(2, 'a.toml', 'attrib', now - 100),
      w(3, 'b.toml', 'attrib', now - 90),
      w(4, 'a.toml', 'delete', now - 80),
      JSON.stringify({ t: now - 50, name: 1, path: 'c.toml', op: 'delete', pid: 9, gone: 'reaped' }),
    ].join('\n') + '\n', { mode: 0o600 });
    const r = new RecordReader(dir, () => now);
    const a = r.lookupName('a.toml', ['attrib']);
    assert.ok(a && 'writer' in a && a.writer.pid === 2, JSON.stringify(a));
    assert.equal(r.lookupName('a.toml', ['attrib']), null, 'used once: a later alert never takes it again');
    const b = r.lookupName('b.toml', ['delete', 'rename-away']);
    assert.equal(b, null, 'a chmod never explains a delete');
    const d = r.lookupName('a.toml', ['delete']);
    assert.ok(d && 'writer' in d && d.writer.pid === 4 && d.writer.op === 'delete');
    const c = r.lookupName('c.toml', ['delete']);
    assert.ok(c && 'unknown' in c && /pid 9 delete it.*reaped/.test(c.unknown), JSON.stringify(c));
    now += 60_000;
    assert.equal(r.lookupName('b.toml', ['attrib']), null, 'too old now');
    r.close();
  } finally { rmSync(dir, { recursive: true, force: true }); }
});
