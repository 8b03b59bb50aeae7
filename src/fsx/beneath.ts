/**
 * File operations confined beneath a directory file descriptor.
 *
 * Node has no openat()/renameat(), so we reach a directory through its descriptor with
 * Linux's /proc/self/fd/<fd>/<name>: the kernel resolves the magic link to the very
 * directory we opened, not to whatever the path names now. Every directory on the way
 * down is opened with O_DIRECTORY|O_NOFOLLOW, so a component swapped for a symlink fails
 * with ELOOP instead of leading us outside the root. Final components are never followed
 * either (O_NOFOLLOW on open, rename and lstat act on the link itself). libuv opens every
 * descriptor close-on-exec, so none leaks into a child process.
 */
import {
  chmodSync, chownSync, closeSync, constants, fchmodSync, fchownSync, fstatSync, fsyncSync, ftruncateSync, linkSync, lstatSync,
  mkdirSync, openSync, readSync, renameSync, unlinkSync, writeSync, type Stats,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { errnoCode } from '../common/errors.js';
import { hasRawBytes, nameToBytes } from '../common/names.js';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK, O_APPEND } = constants;

/**
 * Stands for "the current directory" where a directory fd is expected, as openat(2)'s
 * AT_FDCWD does: at(AT_FDCWD, name) is `name` itself. Only inside withCwdAt, which makes
 * the current directory the one a descriptor names.
 */
export const AT_FDCWD = -100;

/** `at` for a fixed name warden chose (a socket, a git directory): always a string. */
export const atText = (dirFd: number, name: string): string => (dirFd === AT_FDCWD ? name : `/proc/self/fd/${dirFd}/${name}`);

/**
 * The path of `name` beneath dirFd. A name that is not UTF-8 (a listed name carried as lone
 * surrogates, common/names.ts) is addressed by its bytes: the path is then a Buffer, which
 * every fs call takes as it is (a string would be encoded with U+FFFD, another name).
 */
export const at = (dirFd: number, name: string): string | Buffer => {
  const path = dirFd === AT_FDCWD ? name : `/proc/self/fd/${dirFd}/${name}`;
  return hasRawBytes(name) ? nameToBytes(path) : path;
};

/**
 * Run `fn` with the process's current directory set to the directory behind dirFd, then put
 * the current directory back. Inside, AT_FDCWD names that directory: a plain name resolves
 * there with no walk through /proc/self/fd/N (2–3× cheaper per lstat/open, which a pass
 * over 10,000 files in one directory repeats 20,000 times) and the same meaning: the
 * directory the descriptor holds, never a path looked up again. `fn` must be synchronous
 * and must not close dirFd. Returns null (fn not run) when the current directory cannot
 * be changed or read; the caller then goes through the descriptor as usual.
 */
export function withCwdAt<T>(dirFd: number, fn: () => T): { value: T } | null {
  // The way back is held as a descriptor too: a rename of the old directory meanwhile
  // cannot send the process somewhere else.
  let back: number;
  try { back = openSync('.', O_PATH | O_DIRECTORY); } catch { return null; }
  try {
    try { process.chdir(`/proc/self/fd/${dirFd}`); } catch { return null; }
    try { return { value: fn() }; } finally {
      try { process.chdir(`/proc/self/fd/${back}`); } catch { process.chdir('/'); }
    }
  } finally { closeSync(back); }
}

/**
 * Linux O_PATH (Node does not export it): a descriptor that names a directory without
 * read permission on it. Walking through it needs only search (x) permission, so a root or
 * directory chmod'ed to 0300/0100 cannot blind us; it cannot be read, listed or fsynced.
 */
export const O_PATH = 0o10000000;

/** Open the root; if its mode was changed to deny reading (0300), an O_PATH descriptor still walks it. */
export function openRoot(root: string): number {
  try {
    return openSync(root, O_RDONLY | O_DIRECTORY);
  } catch (err) {
    if (errnoCode(err) !== 'EACCES') throw err;
    return openSync(root, O_PATH | O_DIRECTORY);
  }
}

/** A private descriptor for the start of a walk: readable when it is the result, O_PATH when we only pass through it. */
function startAt(rootFd: number, passThrough: boolean): number {
  if (passThrough) return openSync(at(rootFd, '.'), O_PATH | O_DIRECTORY);
  try {
    return openSync(at(rootFd, '.'), O_RDONLY | O_DIRECTORY);
  } catch (err) {
    if (errnoCode(err) !== 'EACCES') throw err;
    return openSync(at(rootFd, '.'), O_PATH | O_DIRECTORY);
  }
}

export type WalkResult =
  | { ok: true; fd: number }
  /** `depth` is the index of the segment that failed; `parentFd` is open (caller closes it). */
  | { ok: false; code: string; depth: number; segment: string; parentFd: number };

/** Split a relative directory path; '..', '.' and empty segments would leave the root. */
function segmentsOf(relDir: string): string[] {
  const segments = relDir === '' || relDir === '.' ? [] : relDir.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) {
    throw Object.assign(new Error(`"${relDir}" is not a plain path below the root`), { code: 'EINVAL' });
  }
  return segments;
}

/**
 * Open `relDir` (slash-separated, '' = the root itself) beneath rootFd without following links.
 * Low level: on failure the caller must close `parentFd`. Use withDir (scoped) or tryOpenDir
 * (a descriptor to keep) instead; walkDir stays exported only for the callers in guard/,
 * daemon/, store/baseline*, store/history and changes/init, which their owners convert.
 */
export function walkDir(rootFd: number, relDir: string): WalkResult {
  const segments = segmentsOf(relDir);
  let fd = startAt(rootFd, segments.length > 0);
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i] as string;
    try {
      const next = openSync(at(fd, seg), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
      closeSync(fd);
      fd = next;
    } catch (err) {
      return { ok: false, code: errnoCode(err) ?? 'EIO', depth: i, segment: seg, parentFd: fd };
    }
  }
  return { ok: true, fd };
}

/** Why walkDir could not reach a directory (the descriptors it opened are closed). */
export interface WalkFailure { code: string; depth: number; segment: string }

/**
 * Open `relDir` beneath rootFd (as walkDir), run `fn` with its descriptor, and close every
 * descriptor opened on the way, whatever happens: after `fn` returns, throws, or (if it
 * returns a promise) settles. Where the directory cannot be reached, `onMissing` says what
 * to return instead. No caller ever holds a descriptor to close, so none can leak.
 */
export function withDir<T>(rootFd: number, relDir: string, fn: (dirFd: number) => T, onMissing: (f: WalkFailure) => T): T {
  const w = walkDir(rootFd, relDir);
  if (!w.ok) {
    safeClose(w.parentFd);
    return onMissing({ code: w.code, depth: w.depth, segment: w.segment });
  }
  let r: T;
  try { r = fn(w.fd); } catch (err) { safeClose(w.fd); throw err; }
  if (r instanceof Promise) return r.finally(() => safeClose(w.fd)) as T;
  safeClose(w.fd);
  return r;
}

/**
 * Open `relDir` beneath rootFd for a caller that keeps the descriptor (it closes it); on
 * failure every descriptor opened on the way is already closed and the failure is returned.
 */
export function tryOpenDir(rootFd: number, relDir: string): { ok: true; fd: number } | ({ ok: false } & WalkFailure) {
  const w = walkDir(rootFd, relDir);
  if (w.ok) return w;
  safeClose(w.parentFd);
  return { ok: false, code: w.code, depth: w.depth, segment: w.segment };
}

/** Open `relDir` beneath rootFd, creating missing directories (mode) on the way; never follows links. */
export function ensureDirBeneath(rootFd: number, relDir: string, mode = 0o700): number {
  const segments = segmentsOf(relDir);
  let fd = startAt(rootFd, segments.length > 0);
  for (const seg of segments) {
    let next: number;
    try {
      next = openSync(at(fd, seg), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    } catch (err) {
      if (errnoCode(err) !== 'ENOENT') { closeSync(fd); throw err; }
      try { mkdirSync(at(fd, seg), mode); } catch (e2) { if (errnoCode(e2) !== 'EEXIST') { closeSync(fd); throw e2; } }
      next = openSync(at(fd, seg), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    }
    closeSync(fd);
    fd = next;
  }
  return fd;
}

export type EntryType = 'file' | 'dir' | 'symlink' | 'fifo' | 'socket' | 'device' | 'absent';

export function typeOf(st: Stats): EntryType {
  if (st.isFile()) return 'file';
  if (st.isDirectory()) return 'dir';
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isFIFO()) return 'fifo';
  if (st.isSocket()) return 'socket';
  return 'device';
}

export function lstatAt(dirFd: number, name: string): Stats | null {
  try {
    return lstatSync(at(dirFd, name));
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null;
    throw err;
  }
}

export interface ReadResult {
  stats: Stats;
  /** The content, or null when the file is larger than maxBytes (never read whole) or unreadable. */
  bytes: Buffer | null;
  /** Permission denied on open: someone made it unreadable (chmod 000). */
  unreadable?: boolean;
}

/**
 * Read an open regular file whose fstat size is `size`, at most maxBytes. One spare byte
 * notices growth since the fstat; the buffer grows (up to maxBytes + 1) while it fills.
 * `scratch`: a buffer to read into when it is large enough (verify reuses one for 10,000
 * files); else one sized to the file. bytes: a view of `buffer`, or null when over maxBytes.
 */
export function readBounded(fd: number, size: number, maxBytes: number, scratch?: Buffer): { bytes: Buffer | null; buffer: Buffer } {
  const cap = Math.min(maxBytes + 1, size + 1);
  let buf = scratch && scratch.length >= cap ? scratch : Buffer.allocUnsafeSlow(cap);
  let n = 0;
  for (;;) {
    const room = Math.min(buf.length, maxBytes + 1);
    if (n === room) {
      if (room > maxBytes) break;
      const bigger = Buffer.allocUnsafeSlow(Math.min(maxBytes + 1, buf.length * 2));
      buf.copy(bigger, 0, 0, n);
      buf = bigger;
      continue;
    }
    const want = room - n;
    const r = readSync(fd, buf, n, want, null);
    if (r === 0) break;
    n += r;
    // A short read that ends exactly at the fstat size is the end of the file: skip the
    // read that would return 0 (one syscall per file; verify reads 10,000 of them).
    if (r < want && n === size) break;
  }
  return { bytes: n > maxBytes ? null : buf.subarray(0, n), buffer: buf };
}

/**
 * Read a regular file without following a link and without blocking on a FIFO. The
 * caller lstat()s first and never calls this for non-regular files; O_NONBLOCK and the
 * fstat() check close the race where the path is swapped in between.
 */
export function readRegularAt(dirFd: number, name: string, maxBytes: number): ReadResult | null {
  let fd: number;
  try {
    fd = openSync(at(dirFd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENXIO') return null;
    if (code === 'EACCES' || code === 'EPERM') {
      const st = lstatAt(dirFd, name);
      return st?.isFile() ? { stats: st, bytes: null, unreadable: true } : null;
    }
    throw err;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return null;
    if (stats.size > maxBytes) return { stats, bytes: null };
    // Sized to the file: a held Buffer pins its whole allocation.
    const { bytes } = readBounded(fd, stats.size, maxBytes);
    return { stats, bytes };
  } finally {
    closeSync(fd);
  }
}

export interface WriteOptions {
  mode: number;
  uid?: number;
  gid?: number;
  /** fsync file and directory (default true). */
  durable?: boolean;
  /**
   * Asked just before the rename, after the temp file is written and synced: is `dirFd`
   * still where the caller means to write? A descriptor follows its directory wherever it
   * is moved, and the fsync before the rename can take long; false drops the temp file and
   * throws `EDIRMOVED`, so nothing lands in a directory that left its place meanwhile.
   */
  stillHere?: () => boolean;
  /** Called with the written file's descriptor before its owner and mode are set (the guard puts the approved ACL and extended attributes there). */
  prepare?: (fd: number) => void;
}

/** The code replaceFileAt throws when `stillHere` said no (nothing was written). */
export const DIR_MOVED = 'EDIRMOVED';

/**
 * Replace dirFd/name with `bytes` atomically: exclusive-create a temp file in the same
 * directory, set owner and mode, fsync, rename over the name, fsync the directory.
 * The rename replaces whatever is at the name (a symlink is replaced, not followed).
 * On any failure the temp file is removed and the original stays as it was.
 */
/**
 * The longest name (bytes) warden can write: the restore's temp name ".<name>.warden-<pid>-
 * <8 hex>.tmp" must fit the file system's 255-byte limit too. Longer names are refused
 * before anything changes (checkNameFits), never half way through a change.
 */
export const MAX_NAME_BYTES = 255 - '..warden-4194304-00000000.tmp'.length;
export const MAX_PATH_BYTES = 4095 - 64;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Null when `rel` fits; else why not. */
export function nameProblem(rel: string): string | null {
  // Names are bytes (docs/CONTRACT.md §Detection): one that is not UTF-8 (a listed name carried as lone
  // surrogates, common/names.ts, or a lone surrogate from a client) is never approved.
  if (hasRawBytes(rel) || LONE_SURROGATE.test(rel)) return 'the name is not valid UTF-8; warden never approves such a name';
  if (Buffer.byteLength(rel) > MAX_PATH_BYTES) return `the path is ${Buffer.byteLength(rel)} bytes, over the limit of ${MAX_PATH_BYTES}`;
  for (const seg of rel.split('/')) {
    const n = Buffer.byteLength(seg);
    if (n > MAX_NAME_BYTES) return `"${seg.slice(0, 32)}…" is ${n} bytes long; names warden protects may have at most ${MAX_NAME_BYTES} bytes (the file system allows 255, and warden's temp file adds its own)`;
  }
  return null;
}

export function replaceFileAt(dirFd: number, name: string, bytes: Uint8Array, opts: WriteOptions): void {
  const tmp = `.${name}.warden-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  const durable = opts.durable ?? true;
  const fd = openSync(at(dirFd, tmp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  try {
    try {
      writeAll(fd, bytes);
      opts.prepare?.(fd);
      setOwnerAndMode(fd, opts);
      if (durable) fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (opts.stillHere && !opts.stillHere()) throw Object.assign(new Error('the directory left its place before the rename'), { code: DIR_MOVED });
    renameSync(at(dirFd, tmp), at(dirFd, name));
  } catch (err) {
    try { unlinkSync(at(dirFd, tmp)); } catch { /* already gone */ }
    throw err;
  }
  if (durable) fsyncSync(dirFd);
}

/**
 * The full-disk fallback of a restore (docs/CONTRACT.md §Revert): write `bytes` over the regular
 * file at `name` in place, through its own already allocated blocks, when a temp file cannot
 * be written. Only the very inode that was judged (`ino`), only when it has no other name
 * (a hard link elsewhere would receive the write) and only when its allocated blocks hold
 * the bytes (an overwrite of allocated blocks allocates nothing on ext4/xfs; a copy-on-write
 * file system may still say ENOSPC, and then the file is left as it was). Not atomic: a crash
 * midway leaves a mix, which the startup check sees as a change and restores again.
 * Returns false (nothing written) when those conditions do not hold.
 */
export function rewriteInPlaceAt(dirFd: number, name: string, bytes: Uint8Array, ino: number, opts: WriteOptions): boolean {
  let fd: number;
  try { fd = openSync(at(dirFd, name), O_WRONLY | O_NOFOLLOW | O_NONBLOCK); } catch { return false; }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.ino !== ino || st.nlink !== 1 || st.blocks * 512 < bytes.length) return false;
    let off = 0;
    while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off, off);
    ftruncateSync(fd, bytes.length);
    opts.prepare?.(fd);
    setOwnerAndMode(fd, opts);
    if (opts.durable ?? true) fsyncSync(fd);
    return true;
  } finally {
    closeSync(fd);
  }
}

function writeAll(fd: number, bytes: Uint8Array): void {
  let off = 0;
  while (off < bytes.length) off += writeSync(fd, bytes, off, bytes.length - off);
}

function setOwnerAndMode(fd: number, opts: WriteOptions): void {
  const uid = opts.uid ?? process.geteuid?.() ?? -1;
  const gid = opts.gid ?? process.getegid?.() ?? -1;
  const st = fstatSync(fd);
  if (st.uid !== uid || st.gid !== gid) fchownSync(fd, uid, gid);
  fchmodSync(fd, opts.mode & 0o7777);
}

/** Create a new file exclusively (fails if anything exists at the name). */
export function createFileAt(dirFd: number, name: string, bytes: Uint8Array, mode = 0o600, durable = true, written?: (st: Stats) => void): void {
  const fd = openSync(at(dirFd, name), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  try {
    writeAll(fd, bytes);
    fchmodSync(fd, mode);
    if (durable) fsyncSync(fd);
    // The inode as we left it (after the last change of ours that moves ctime).
    written?.(fstatSync(fd));
  } finally {
    closeSync(fd);
  }
}

/** Append one record to a file (created 0600), fsynced before returning. */
export function appendFileAt(dirFd: number, name: string, bytes: Uint8Array): void {
  const notRegular = () => Object.assign(new Error(`${name} is not a regular file`), { code: 'EINVAL' });
  // A FIFO or device planted at the name is refused before it is opened at all (a link is
  // left to O_NOFOLLOW, which refuses it with ELOOP).
  const seen = lstatAt(dirFd, name);
  if (seen && !seen.isFile() && !seen.isSymbolicLink()) throw notRegular();
  // One planted between the lstat and the open: O_NONBLOCK so a FIFO fails (ENXIO) or opens
  // without waiting for a reader, O_NOCTTY so a terminal never becomes ours; either is refused.
  let fd: number;
  try { fd = openSync(at(dirFd, name), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | constants.O_NOCTTY, 0o600); }
  catch (err) { if (errnoCode(err) === 'ENXIO') throw notRegular(); throw err; }
  try {
    if (!fstatSync(fd).isFile()) throw notRegular();
    writeAll(fd, bytes);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Move an entry (any type; links are moved, not followed) to another directory. */
export function moveAt(fromDirFd: number, name: string, toDirFd: number, toName: string): void {
  renameSync(at(fromDirFd, name), at(toDirFd, toName));
}

/** Hard-link a regular file into another directory (keeps a too-large file without reading it). */
export function linkAt(fromDirFd: number, name: string, toDirFd: number, toName: string): void {
  linkSync(at(fromDirFd, name), at(toDirFd, toName));
}

/**
 * The first `maxBytes` of a regular file (no links followed, a FIFO never blocks us): for a
 * bounded copy of a file we will not keep whole.
 */
export function readHeadAt(dirFd: number, name: string, maxBytes: number): Buffer {
  const fd = openSync(at(dirFd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  try {
    if (!fstatSync(fd).isFile()) throw Object.assign(new Error(`${name} is not a regular file`), { code: 'EINVAL' });
    const buf = Buffer.allocUnsafeSlow(Math.min(maxBytes, fstatSync(fd).size));
    let n = 0;
    while (n < buf.length) { const r = readSync(fd, buf, n, buf.length - n, null); if (r === 0) break; n += r; }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** chmod (and chown when given) an entry that lstat says is no symlink; used inside warden's own 0700 directories. */
export function setModeAt(dirFd: number, name: string, mode: number, owner?: { uid: number; gid: number }): void {
  const st = lstatSync(at(dirFd, name));
  if (st.isSymbolicLink()) return;
  if (owner && (st.uid !== owner.uid || st.gid !== owner.gid)) chownSync(at(dirFd, name), owner.uid, owner.gid);
  chmodSync(at(dirFd, name), mode);
}

export function unlinkAt(dirFd: number, name: string): void {
  unlinkSync(at(dirFd, name));
}

/** Make a directory with exactly `mode` (and owner when given), beneath dirFd. */
export function makeDirAt(dirFd: number, name: string, opts: WriteOptions): void {
  mkdirSync(at(dirFd, name), 0o700);
  fixDirAt(dirFd, name, opts);
  if (opts.durable ?? true) fsyncSync(dirFd);
}

/**
 * chmod/chown an existing directory in place (opened without following links). A directory
 * made unreadable (chmod 0100) is opened O_PATH and changed through its /proc magic link,
 * which names the very inode we opened.
 */
export function fixDirAt(dirFd: number, name: string, opts: WriteOptions): void {
  let fd: number;
  try {
    fd = openSync(at(dirFd, name), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    if (errnoCode(err) !== 'EACCES') throw err;
    fd = openSync(at(dirFd, name), O_PATH | O_DIRECTORY | O_NOFOLLOW);
  }
  try {
    setOwnerAndModeByFd(fd, opts);
  } finally {
    closeSync(fd);
  }
}

/** Put the root's own mode and owner back through the descriptor we hold (its path may be unreadable). */
export function fixRoot(rootFd: number, opts: WriteOptions): void {
  setOwnerAndModeByFd(rootFd, opts);
}

function setOwnerAndModeByFd(fd: number, opts: WriteOptions): void {
  const uid = opts.uid ?? process.geteuid?.() ?? -1;
  const gid = opts.gid ?? process.getegid?.() ?? -1;
  const self = `/proc/self/fd/${fd}`;
  const st = fstatSync(fd);
  if (st.uid !== uid || st.gid !== gid) chownSync(self, uid, gid);
  if ((st.mode & 0o7777) !== (opts.mode & 0o7777)) chmodSync(self, opts.mode & 0o7777);
}

export function safeClose(fd: number): void {
  try { closeSync(fd); } catch { /* ignore */ }
}

/** Read a whole small file beneath dirFd (no links, regular files only); null if absent. */
export function readSmallAt(dirFd: number, name: string, maxBytes = 64 * 1024 * 1024): Buffer | null {
  const st = lstatAt(dirFd, name);
  if (!st) return null;
  if (!st.isFile()) throw Object.assign(new Error(`${name} is not a regular file`), { code: 'EINVAL' });
  const r = readRegularAt(dirFd, name, maxBytes);
  if (!r || !r.bytes) throw Object.assign(new Error(`${name} is too large or vanished`), { code: 'EFBIG' });
  return r.bytes;
}

/**
 * Read `length` bytes at `position` of a regular file beneath dirFd (no links, never a
 * FIFO or device): for files read in pieces, from an offset, instead of whole. Returns
 * null when the file is absent; `size` is the file's size when it was read.
 */
export function readRangeAt(dirFd: number, name: string, position: number, length: number): { bytes: Buffer; size: number } | null {
  const st = lstatAt(dirFd, name);
  if (!st) return null;
  if (!st.isFile()) throw Object.assign(new Error(`${name} is not a regular file`), { code: 'EINVAL' });
  let fd: number;
  try { fd = openSync(at(dirFd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK); } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null;
    throw err;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw Object.assign(new Error(`${name} is not a regular file`), { code: 'EINVAL' });
    const want = Math.max(0, Math.min(length, stats.size - position));
    const buf = Buffer.alloc(want);
    let n = 0;
    while (n < want) {
      const r = readSync(fd, buf, n, want - n, position + n);
      if (r === 0) break;
      n += r;
    }
    return { bytes: buf.subarray(0, n), size: stats.size };
  } finally {
    closeSync(fd);
  }
}

/**
 * Open a regular file to hold it (read-only; no link followed, a FIFO never blocks us), only
 * when it is still inode `ino`: the rejected inode across file systems, where it cannot be
 * linked into quarantine (guard/late-writes.ts). null when it is not that file any more.
 */
export function holdFileAt(dirFd: number, name: string, ino: number): number | null {
  let fd: number;
  try { fd = openSync(at(dirFd, name), O_RDONLY | O_NOFOLLOW | O_NONBLOCK); } catch { return null; }
  try {
    const st = fstatSync(fd);
    if (st.isFile() && st.ino === ino) return fd;
  } catch { /* closed below */ }
  closeSync(fd);
  return null;
}

/** The first `maxBytes` of a held regular file, read from offset 0 (pread: the offset of fd is not moved). */
export function readHeldHead(fd: number, maxBytes: number): Buffer {
  const buf = Buffer.allocUnsafeSlow(Math.min(maxBytes, fstatSync(fd).size));
  let n = 0;
  while (n < buf.length) { const r = readSync(fd, buf, n, buf.length - n, n); if (r === 0) break; n += r; }
  return buf.subarray(0, n);
}
