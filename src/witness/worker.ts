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
import {
  FAN_ALLOW, FAN_ATTRIB, FAN_CREATE, FAN_DELETE, FAN_DENY, FAN_MODIFY, FAN_MOVED_FROM, FAN_MOVED_TO, FAN_OPEN_PERM, FAN_Q_OVERFLOW, POLLIN,
  loadFanotify, parseEvents, parseNameEvents, response, type NameEvent,
} from './fanotify.js';
import { Users, readCgroup, readIntent, readLiveWriter, readWriter, refuses } from './proc.js';
import type { NameOp } from './record.js';
import { ROOT_PARENT, type WitnessTargets, type WorkerInit } from './types.js';
import { basename } from 'node:path';

const init = workerData as WorkerInit;
const fan = loadFanotify();
const hb = new Int32Array(init.shared);
const users = new Users();
let targets: WitnessTargets = init.targets;
let files = new Set(targets.files);
let dirs = new Set(targets.dirs);
let exemptCgroups = new Set(init.exemptCgroups);
let enforce = init.enforce;
let dirKeys = new Map(Object.entries(init.dirKeys));
let inodes = new Map(Object.entries(init.inodes));
let fileKeys = new Map(Object.entries(init.fileKeys));
/** The root's own name in the directory holding it (marked for it: witness.ts markRootParent). */
const rootBase = basename(init.rootReal);
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
    // The object decides, not the name it was opened through: a protected file's inode
    // reached by a hard link outside the root (or /proc/self/fd, a bind mount) is that file.
    const byInode = inodes.get(`${st.dev}:${st.ino}`);
    const rel = relOf(abs);
    deny = refuses(enforce, intent, byInode !== undefined || isProtected(rel));
    Atomics.add(hb, 2, 1);
    record({
      t: Date.now(), dev: st.dev, ino: st.ino, path: byInode ?? rel ?? abs, op: intent === 'write' ? 'open-write' : 'open-unknown',
      refused: deny, ...w,
    });
  } catch {
    deny = false;
  } finally {
    try { answer(fd, deny); } catch { /* the close below still releases nothing held: answered or not, see stop() */ }
    try { closeSync(fd); } catch { /* already closed */ }
  }
}

const NAME_OPS: [number, NameOp][] = [
  [FAN_MODIFY, 'modify'], [FAN_ATTRIB, 'attrib'], [FAN_DELETE, 'delete'], [FAN_MOVED_FROM, 'rename-away'], [FAN_MOVED_TO, 'rename-in'], [FAN_CREATE, 'create'],
];

/**
 * The path (relative to the root) an event of the notification group names: '' for the root
 * itself (its own name in the directory holding it, or '.' in the root), a directory itself
 * for '.' (an event on the marked directory), else the entry in its directory; null when
 * the directory is not one marked, or the entry beside the root is not the root.
 */
function nameOf(ev: NameEvent): string | null {
  const dirRel = ev.dir === null ? undefined : dirKeys.get(ev.dir);
  if (dirRel === undefined || ev.name === null) return null;
  if (dirRel === ROOT_PARENT) return ev.name === rootBase ? '' : null;
  if (ev.name === '.') return dirRel;
  return dirRel === '' ? ev.name : `${dirRel}/${ev.name}`;
}

/**
 * One event of the notification group: a protected name's mode or owner changed, its content
 * changed (a write, or a truncate(2) by path, which needs no open), or it was deleted,
 * renamed away, renamed over, or made; a protected directory or the root renamed away,
 * exchanged (away and in at once), put there or removed. The actor is not held (there is no
 * permission event for these), so who it was is read at once, through the pidfd the
 * kernel handed over: the reads count only if the pidfd still names a live (or not yet
 * reaped) process afterwards. An actor already gone is recorded as gone, by pid: the alert
 * then says why it names nobody, and never takes another record's writer.
 */
function handleName(ev: NameEvent): void {
  try {
    // By the name used, when that is a protected name (a file, a protected directory, the root); else by the object (an inode mark:
    // the same file reached through a hard link outside the protected directories).
    const byName = nameOf(ev);
    const rel = byName !== null && (byName === '' || dirs.has(byName) || isProtected(byName)) ? byName : (ev.fid ? fileKeys.get(ev.fid) ?? null : null);
    if (rel === null) return;
    if (ev.pid === process.pid) return; // this process: the guard's own writes in `warden run`
    const w = ev.pidfd >= 0 ? readLiveWriter(ev.pid, ev.pidfd, users) : null;
    if (w && exempt(ev.pid, w.pid)) return;
    const t = Date.now();
    for (const [bit, op] of NAME_OPS) {
      if ((ev.mask & BigInt(bit)) === 0n) continue;
      Atomics.add(hb, 2, 1);
      record(w ? { t, name: 1, path: rel, op, refused: false, ...w } : { t, name: 1, path: rel, op, pid: ev.pid, gone: ev.pidfd >= 0 ? 'exited' : 'reaped' });
    }
  } catch {
    /* an event we cannot read is one we do not record */
  } finally {
    if (ev.pidfd >= 0) { try { closeSync(ev.pidfd); } catch { /* closed */ } }
  }
}

function drainMessages(port: MessagePort): void {
  for (;;) {
    const m = receiveMessageOnPort(port);
    if (!m) return;
    const msg = m.message as { targets?: WitnessTargets; enforce?: boolean; exemptCgroups?: string[]; dirKeys?: Record<string, string>; inodes?: Record<string, string>; fileKeys?: Record<string, string> };
    if (msg.targets) { targets = msg.targets; files = new Set(targets.files); dirs = new Set(targets.dirs); }
    if (msg.dirKeys) dirKeys = new Map(Object.entries(msg.dirKeys));
    if (msg.inodes) inodes = new Map(Object.entries(msg.inodes));
    if (msg.fileKeys) fileKeys = new Map(Object.entries(msg.fileKeys));
    if (msg.enforce !== undefined) enforce = msg.enforce;
    if (msg.exemptCgroups) exemptCgroups = new Set(msg.exemptCgroups);
  }
}

function loop(): void {
  if (!fan) { parentPort?.postMessage({ error: 'fanotify binding did not load in the worker' }); return; }
  const pfd = Buffer.alloc(16);
  const buf = Buffer.alloc(64 * 1024);
  const nfds = init.nameFd >= 0 ? 2 : 1;
  const port = init.port;
  while (Atomics.load(hb, 1) === 0) {
    Atomics.add(hb, 0, 1);
    drainMessages(port);
    pfd.writeInt32LE(init.fanFd, 0);
    pfd.writeInt16LE(POLLIN, 4);
    pfd.writeInt16LE(0, 6);
    pfd.writeInt32LE(init.nameFd, 8);
    pfd.writeInt16LE(POLLIN, 12);
    pfd.writeInt16LE(0, 14);
    const n = fan.poll(pfd, nfds, 200);
    if (n <= 0) continue;
    if (Atomics.load(hb, 1) !== 0) break;
    // The name events first: their actor is not held, and may be gone in a few milliseconds.
    if (nfds === 2 && (pfd.readInt16LE(14) & POLLIN) !== 0) {
      const nlen = fan.read(init.nameFd, buf, buf.length);
      if (nlen > 0) {
        for (const ev of parseNameEvents(buf, nlen)) {
          if ((ev.mask & BigInt(FAN_Q_OVERFLOW)) !== 0n) { Atomics.add(hb, 4, 1); continue; }
          handleName(ev);
        }
      }
    }
    if ((pfd.readInt16LE(6) & POLLIN) === 0) continue;
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
