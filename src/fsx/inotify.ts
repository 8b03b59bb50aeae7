/**
 * Raw inotify on single inodes, through koffi (the FFI the witness already uses), for what
 * Node's fs.watch never reports: IN_OPEN and IN_CLOSE_WRITE. A watch on a file's inode sees
 * every open of it by any path (a hard link elsewhere, /proc/PID/fd), which is what tells
 * the guard a shared mapping may exist (src/guard/open-watch.ts). Needs no capability.
 * Loaded lazily; where koffi or inotify is missing, `loadInotify()` is null and the caller
 * polls instead. Reads go through Node's own readSync on a non-blocking descriptor.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { nameToBytes } from '../common/names.js';

export const IN_MODIFY = 0x2;
export const IN_ATTRIB = 0x4;
export const IN_CLOSE_WRITE = 0x8;
export const IN_CLOSE_NOWRITE = 0x10;
export const IN_OPEN = 0x20;
export const IN_MOVED_FROM = 0x40;
export const IN_MOVED_TO = 0x80;
export const IN_CREATE = 0x100;
export const IN_DELETE = 0x200;
export const IN_DELETE_SELF = 0x400;
export const IN_MOVE_SELF = 0x800;
export const IN_Q_OVERFLOW = 0x4000;
export const IN_IGNORED = 0x8000;
export const IN_ONLYDIR = 0x01000000;
export const IN_DONT_FOLLOW = 0x02000000;
export const IN_NONBLOCK = 0o4000;
export const IN_CLOEXEC = 0o2000000;

/** sizeof(struct inotify_event) without its name: s32 wd, u32 mask, u32 cookie, u32 len. */
const HEADER = 16;

export interface InotifyEvent { wd: number; mask: number; /** The child's name (a directory watch), else ''. */ name?: string }

/** Parse the events of one read(2) (pure; inode watches carry no name). */
export function parseInotify(buf: Buffer, len: number): InotifyEvent[] {
  const out: InotifyEvent[] = [];
  let off = 0;
  while (off + HEADER <= len) {
    const nameLen = buf.readUInt32LE(off + 12);
    out.push({ wd: buf.readInt32LE(off), mask: buf.readUInt32LE(off + 4) });
    off += HEADER + nameLen;
  }
  return out;
}

export interface Inotify {
  /** A new non-blocking inotify descriptor, or -1 (errno()). */
  init(): number;
  /** A watch on what `path` names (IN_DONT_FOLLOW: never a symlink's target), or -1 (errno()). */
  addWatch(fd: number, path: string, mask: number): number;
  removeWatch(fd: number, wd: number): void;
  errno(): number;
  /**
   * Is the file `name` names (resolved in the current directory, never through a symlink)
   * open for writing by anyone now, if it is inode `ino`? See writersNow.
   */
  writers(name: string, ino: number): { writers: Writers; opened: boolean };
}

/**
 * 'none': no open file description of the inode is open for writing (so no writable shared
 * mapping of it exists: a mapping holds its open file); 'some': one is; 'unknown': it could
 * not be told (not the inode expected, no lease allowed: not the file's owner and no
 * CAP_LEASE, a file system without leases, leases disabled).
 */
export type Writers = 'none' | 'some' | 'unknown';

const F_SETLEASE = 1024;
const F_RDLCK = 0;
const F_UNLCK = 2;
const EAGAIN = 11;
let sigioIgnored = false;

/**
 * The kernel's own count, asked through a read lease (fcntl(2) F_SETLEASE, F_RDLCK): it is
 * refused with EAGAIN exactly when the inode is open for writing by anyone
 * (i_writecount > 0), and granted otherwise; it is released at once. While it is held (a few
 * µs) an opener for writing waits for the release (or, with O_NONBLOCK, gets EWOULDBLOCK
 * once), and the kernel signals us with SIGIO, which is then ignored (its default would end
 * the process).
 */
function writersNow(fcntl: (fd: number, cmd: number, arg: number) => number, errno: () => number, name: string, ino: number): { writers: Writers; opened: boolean } {
  if (!sigioIgnored) { process.on('SIGIO', () => {}); sigioIgnored = true; }
  let fd: number;
  try { fd = openSync(nameToBytes(name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY); } catch { return { writers: 'unknown', opened: false }; }
  try {
    const st = fstatSync(fd);
    // `opened`: this inode was opened (and is closed below): an IN_OPEN and an IN_CLOSE_NOWRITE of our own.
    if (!st.isFile() || st.ino !== ino) return { writers: 'unknown', opened: false };
    if (fcntl(fd, F_SETLEASE, F_RDLCK) === 0) { fcntl(fd, F_SETLEASE, F_UNLCK); return { writers: 'none', opened: true }; }
    return { writers: errno() === EAGAIN ? 'some' : 'unknown', opened: true };
  } finally {
    closeSync(fd);
  }
}

let cached: Inotify | null | undefined;
let whyNot = '';

/** The bindings, or null (and why: loadInotifyError) when koffi cannot load here. */
export function loadInotify(): Inotify | null {
  if (cached !== undefined) return cached;
  try {
    const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
    const libc = koffi.load('libc.so.6');
    const init = libc.func('int inotify_init1(int flags)');
    const add = libc.func('int inotify_add_watch(int fd, const char *path, uint32_t mask)');
    const rm = libc.func('int inotify_rm_watch(int fd, int wd)');
    // Declared with its third argument as an int (what F_SETLEASE takes): koffi's variadic
    // call costs twice as much, and on x86-64 and aarch64 Linux an int goes in the same place.
    const fcntl = libc.func('int fcntl(int fd, int cmd, int arg)') as (fd: number, cmd: number, arg: number) => number;
    const errno = () => koffi.errno();
    cached = {
      init: () => init(IN_NONBLOCK | IN_CLOEXEC) as number,
      // Names are bytes (common/names.ts): the path goes to the kernel as its own bytes, NUL-ended
      // (a string would go as UTF-8, and a name that is not UTF-8 would name nothing).
      addWatch: (fd, path, mask) => add(fd, Buffer.concat([nameToBytes(path), Buffer.of(0)]), (mask | IN_DONT_FOLLOW) >>> 0) as number,
      removeWatch: (fd, wd) => { rm(fd, wd); },
      errno,
      writers: (name, ino) => writersNow(fcntl, errno, name, ino),
    };
  } catch (err) {
    whyNot = `the inotify binding (koffi) did not load: ${String((err as Error)?.message ?? err).split('\n')[0]}`;
    cached = null;
  }
  return cached;
}

export function loadInotifyError(): string { return whyNot; }

/** Parse the events of one read(2) with their names (a directory watch; names as latin1, NULs stripped). */
export function parseInotifyNamed(buf: Buffer, len: number): InotifyEvent[] {
  const out: InotifyEvent[] = [];
  let off = 0;
  while (off + HEADER <= len) {
    const nameLen = buf.readUInt32LE(off + 12);
    let end = off + HEADER;
    const stop = Math.min(len, off + HEADER + nameLen);
    while (end < stop && buf[end] !== 0) end++;
    out.push({ wd: buf.readInt32LE(off), mask: buf.readUInt32LE(off + 4), name: buf.toString('latin1', off + HEADER, end) });
    off += HEADER + nameLen;
  }
  return out;
}

/** Drain a non-blocking inotify descriptor: every event now queued (none when EAGAIN). */
export function drainInotify(fd: number, buf: Buffer, named = false): InotifyEvent[] {
  const out: InotifyEvent[] = [];
  for (;;) {
    let n: number;
    try { n = readSync(fd, buf, 0, buf.length, null); } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EAGAIN') return out;
      throw err;
    }
    if (n <= 0) return out;
    out.push(...(named ? parseInotifyNamed(buf, n) : parseInotify(buf, n)));
  }
}

export function closeInotify(fd: number): void {
  try { closeSync(fd); } catch { /* already closed */ }
}
