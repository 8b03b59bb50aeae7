/**
 * Read and hash one listed file for verify with as few syscalls as the rules allow: open
 * (O_NOFOLLOW|O_NONBLOCK, so a link is never followed and a FIFO swapped in never blocks),
 * fstat, read, close, into one reused buffer (nothing is kept).
 */
import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { readBounded } from '../fsx/beneath.js';
import { hash } from 'node:crypto';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;

/** A regular file as read (no bytes kept); sha256 null when it is over maxBytes. */
export interface Seen { size: number; mode: number; uid: number; gid: number; ino: number; sha256: string | null }

let buf: Buffer = Buffer.allocUnsafeSlow(64 * 1024);

/**
 * `path` names the entry without following anything but itself being refused if a link:
 * a single name relative to the directory we stand in, or /proc/self/fd/<dirfd>/<name>.
 * Null: not a regular file now, gone, or not openable: the caller looks the careful way
 * (observe: lstat first), which says which.
 */
export function readListed(path: string | Buffer, maxBytes: number): Seen | null {
  let fd: number;
  try { fd = openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK); } catch { return null; }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null; // swapped after the listing
    const seen: Seen = { size: st.size, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, ino: st.ino, sha256: null };
    if (st.size > maxBytes) return seen;
    const { bytes, buffer } = readBounded(fd, st.size, maxBytes, buf);
    buf = buffer;
    if (!bytes) return seen;
    seen.size = bytes.length;
    seen.sha256 = hash('sha256', bytes, 'hex');
    return seen;
  } finally {
    closeSync(fd);
  }
}
