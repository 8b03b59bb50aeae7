/**
 * The witness's answering thread. It owns nothing but a loop: poll the fanotify descriptor,
 * and for each permission event decide and answer at once. A read (the runtime's, every
 * time it loads a file) is allowed after one read of /proc/TID/syscall; an open for writing
 * by anyone but warden's own writer is recorded — one line appended to the witness's record
 * before the answer, so the record exists before the first byte can be written — and, with
 * `enforce`, refused. Whatever goes wrong while handling an event, the event is answered
 * (allowed): an unanswered permission event would hang the opener.
 *
 * A blocking loop on a thread of its own, so Node's event loop (the guard's, in `warden
 * run`) never waits for the kernel, and the guard's own opens are answered while the main
 * thread is blocked in them.
 */
import { closeSync, fstatSync, readlinkSync, writeSync } from 'node:fs';
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { FAN_ALLOW, FAN_DENY, FAN_OPEN_PERM, FAN_Q_OVERFLOW, POLLIN, loadFanotify, parseEvents, response } from './fanotify.js';
import { Users, readCgroup, readIntent, readWriter } from './proc.js';
import type { WitnessTargets, WorkerInit } from './types.js';

const init = workerData as WorkerInit;
const fan = loadFanotify();
const hb = new Int32Array(init.shared);
const users = new Users();
let targets: WitnessTargets = init.targets;
let files = new Set(targets.files);
let dirs = new Set(targets.dirs);
let exemptCgroups = new Set(init.exemptCgroups);
let enforce = init.enforce;
const ALLOW = response(0, FAN_ALLOW);
const DENY = response(0, FAN_DENY);

function ownThread(tid: number): boolean {
  try { readlinkSync(`/proc/self/task/${tid}/cwd`); return true; } catch { /* not one of ours */ }
  return false;
}

/** Warden's own writer (besides this process's threads): a listed pid, or a process in a listed cgroup. Never by name. */
function exempt(tid: number, pid: number): boolean {
  if (init.exemptPids.includes(pid)) return true;
  if (exemptCgroups.size === 0) return false;
  const cg = readCgroup(tid);
  return cg !== null && exemptCgroups.has(cg);
}

function relOf(abs: string): string | null {
  const r = init.rootReal;
  if (abs === r) return '';
  return abs.startsWith(r + '/') ? abs.slice(r.length + 1) : null;
}

function isProtected(rel: string | null): boolean {
  if (rel === null) return false;
  if (files.has(rel)) return true;
  const i = rel.lastIndexOf('/');
  return dirs.has(i < 0 ? '' : rel.slice(0, i));
}

function answer(fd: number, deny: boolean): void {
  if (Atomics.load(hb, 1) !== 0) return; // stopping: the descriptor may be closed (and its number reused)
  const b = deny ? DENY : ALLOW;
  b.writeInt32LE(fd, 0);
  fan!.write(init.fanFd, b, 8);
}

function record(line: object): void {
  try { writeSync(init.recordFd, JSON.stringify(line) + '\n'); }
  catch { Atomics.add(hb, 3, 1); /* counted: status says records were lost */ }
}

function handle(mask: bigint, fd: number, tid: number): void {
  let deny = false;
  try {
    if ((mask & BigInt(FAN_OPEN_PERM)) === 0n) return;
    const intent = readIntent(tid);
    if (intent === 'read') return;
    if (ownThread(tid)) return;
    const w = readWriter(tid, users);
    if (exempt(tid, w.pid)) return;
    const st = fstatSync(fd);
    let abs = '';
    try { abs = readlinkSync(`/proc/self/fd/${fd}`); } catch { /* unnamed */ }
    const rel = relOf(abs);
    deny = enforce && intent === 'write' && isProtected(rel);
    Atomics.add(hb, 2, 1);
    record({
      t: Date.now(), dev: st.dev, ino: st.ino, path: rel ?? abs, op: intent === 'write' ? 'open-write' : 'open-unknown',
      refused: deny, ...w,
    });
  } catch {
    deny = false;
  } finally {
    try { answer(fd, deny); } catch { /* the close below still releases nothing held: answered or not, see stop() */ }
    try { closeSync(fd); } catch { /* already closed */ }
  }
}

function drainMessages(port: MessagePort): void {
  for (;;) {
    const m = receiveMessageOnPort(port);
    if (!m) return;
    const msg = m.message as { targets?: WitnessTargets; enforce?: boolean; exemptCgroups?: string[] };
    if (msg.targets) { targets = msg.targets; files = new Set(targets.files); dirs = new Set(targets.dirs); }
    if (msg.enforce !== undefined) enforce = msg.enforce;
    if (msg.exemptCgroups) exemptCgroups = new Set(msg.exemptCgroups);
  }
}

function loop(): void {
  if (!fan) { parentPort?.postMessage({ error: 'fanotify binding did not load in the worker' }); return; }
  const pfd = Buffer.alloc(8);
  const buf = Buffer.alloc(64 * 1024);
  const port = init.port;
  while (Atomics.load(hb, 1) === 0) {
    Atomics.add(hb, 0, 1);
    drainMessages(port);
    pfd.writeInt32LE(init.fanFd, 0);
    pfd.writeInt16LE(POLLIN, 4);
    pfd.writeInt16LE(0, 6);
    const n = fan.poll(pfd, 1, 200);
    if (n <= 0) continue;
    if (Atomics.load(hb, 1) !== 0) break;
    const len = fan.read(init.fanFd, buf, buf.length);
    if (len <= 0) continue;
    for (const ev of parseEvents(buf, len)) {
      if ((ev.mask & BigInt(FAN_Q_OVERFLOW)) !== 0n) { Atomics.add(hb, 4, 1); continue; }
      if (ev.fd < 0) continue;
      handle(ev.mask, ev.fd, ev.pid);
    }
  }
}

loop();
