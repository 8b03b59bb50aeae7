/** The witness's pure parts: open intent from /proc/TID/syscall, the unit from a cgroup, `by` in plain words. */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { intentOfSyscall, parseStatus, unitOfCgroup } from '../../src/witness/proc.js';
import { parseEvents } from '../../src/witness/fanotify.js';
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
  assert.equal(describeBy(W), "by vim, user alice, in alice's login session 3 (pid 4242, /usr/bin/vim.basic)");
  assert.equal(describeBy({ ...W, comm: 'vi', uid: 0, user: 'root' }), "by vi, user root, in alice's login session 3 (as root, through sudo or su) (pid 4242, /usr/bin/vim.basic)");
  assert.equal(describeBy({ ...W, comm: 'node', user: 'agent', loginuid: null, login_user: null, session: null, unit: 'agent-runtime.service', exe: null }), 'by node, user agent, agent-runtime.service (pid 4242)');
  assert.match(describeBy({ ...W, refused: true })!, /^tried by vim.*: refused \(EPERM\), nothing written$/);
  assert.equal(describeBy({ unknown: 'no witness running' }), 'who: not known (no witness running)');
  assert.doesNotMatch(describeBy({ ...W, comm: 'x\u001b[31m\nforged' })!, /[\u001b\n]/);
  assert.equal(describeBy(undefined), null);
});
