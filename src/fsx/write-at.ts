/**
 * Writes beneath a directory descriptor (fsx/beneath.ts): the atomic replace (temp file,
 * fsync, rename, directory fsync), the full-disk rewrite in place, exclusive create, append
 * + fsync, move, link, chmod/chown of files and directories. No final component is ever
 * followed (O_NOFOLLOW on open; rename and lstat act on a link itself).
 */
import {
  chmodSync, chownSync, closeSync, constants, fchmodSync, fchownSync, fstatSync, fsyncSync, ftruncateSync, linkSync, lstatSync,
  mkdirSync, openSync, renameSync, unlinkSync, writeSync, type Stats,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { errnoCode } from '../common/errors.js';
import { hasRawBytes } from '../common/names.js';
import { O_PATH, at, lstatAt } from './at.js';

const { O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_DIRECTORY, O_NONBLOCK, O_APPEND, O_RDONLY } = constants;

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
