/**
 * Reads beneath a directory descriptor (fsx/beneath.ts): never following a link, never
 * blocking on a FIFO, never reading more than asked (a bounded read notices growth).
 */
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { errnoCode } from '../common/errors.js';
import { at, lstatAt } from './at.js';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;

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
