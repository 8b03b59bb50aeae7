/**
 * The I/O of putting a protected directory's path right without acting on what is not
 * warden's (docs/ARCHITECTURE.md, invariant 19); the decisions are root-path.ts's.
 *
 * - `lookDirs`: every approved directory, judged (type, mode, owner, ACLs, and whether the
 *   directory at the path is the one warden made or verified: device and inode).
 * - `moveAsideWhole`: a foreign object is renamed, whole, into quarantine, or (the store on
 *   another file system) beside the root in the root's parent. Nothing else is done to it.
 * - `makeOwnDirAt`: the approved directory made anew; its owner and mode are set through
 *   the descriptor of the directory warden just made and checked (owned by warden, 0700,
 *   empty), never through a name the agent could have swapped meanwhile.
 */
import { chmodSync, chownSync, closeSync, constants, fchmodSync, fchownSync, fstatSync, fsyncSync, mkdirSync, openSync, readdirSync, type Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { errnoCode } from '../common/errors.js';
import { baseOf, dirOf } from '../common/rel-path.js';
import { O_PATH, at, lstatAt, moveAt, safeClose, typeOf, withDir, type WriteOptions } from '../fsx/beneath.js';
import type { AlertReason } from '../store/alert-types.js';
import { dirXattrsIfRecorded, setDirXattrsAt, type XattrSet } from '../fsx/xattrs.js';
import { dirAttrReasons } from './attrs.js';
import type { BaselineState } from '../store/baseline-state.js';
import type { Quarantine } from './quarantine.js';
import { besideName, judgeDir, type Ident, type Standing } from './root-path.js';

export function standingOf(st: Stats | null): Standing | null {
  if (!st) return null;
  return { type: typeOf(st), dev: st.dev, ino: st.ino, uid: st.uid, gid: st.gid, mode: st.mode & 0o7777 };
}

/** One approved directory that is not as approved. */
export interface DirFinding {
  path: string;
  reason: AlertReason;
  also: AlertReason[];
  /** What stands at the path (null: nothing). */
  seen: Standing | null;
  /** Not warden's: moved aside whole, never changed (root-path.ts judgeDir). */
  foreign: boolean;
}

/**
 * Every approved directory, shallowest first; the children of one that is broken (missing,
 * foreign) are left to the next pass, after it is made anew. Records the identity of a
 * directory verified for the first time (`ids`), and forgets those no longer approved.
 * The root itself is looked at through the descriptor the guard holds: always warden's.
 */
export function lookDirs(rootFd: number, state: BaselineState, ids: Map<string, Ident>): DirFinding[] {
  const out: DirFinding[] = [];
  const approved = state.index.dirs;
  for (const d of [...ids.keys()]) if (!Object.hasOwn(approved, d)) ids.delete(d);
  const dirs = Object.keys(approved).sort((a, b) => a.split('/').length - b.split('/').length);
  const broken: string[] = [];
  for (const d of dirs) {
    if (broken.some((b) => b === '' ? false : d.startsWith(b + '/'))) continue;
    const want = approved[d];
    if (!want) continue;
    const looked = d === '' ? { at: fstatSync(rootFd), x: dirXattrsIfRecorded(want.xattrs, rootFd, '.') } : withDir(rootFd, dirOf(d), (fd) => ({ at: lstatAt(fd, baseOf(d)), x: dirXattrsIfRecorded(want.xattrs, fd, baseOf(d)) }), () => null);
    const st = looked?.at;
    if (st === undefined) continue; // the parent cannot be walked: its own finding covers it
    const seen = standingOf(st);
    const j = d === '' ? { kind: 'ours' as const, first: false } : judgeDir(seen, ids.get(d), want.uid);
    if (j.kind === 'absent' || j.kind === 'foreign') {
      broken.push(d);
      ids.delete(d);
      const reason: AlertReason = !seen ? 'deleted' : seen.type === 'symlink' ? 'symlink' : seen.type !== 'dir' ? 'not-regular' : 'dir-replaced';
      out.push({ path: d, reason, also: [], seen, foreign: j.kind === 'foreign' });
      continue;
    }
    if (!seen) continue;
    if (j.first) ids.set(d, { dev: seen.dev, ino: seen.ino });
    // An ACL first: setting one moves the mode's group bits (its mask) too.
    const reasons: AlertReason[] = seen.type === 'dir' ? dirAttrReasons(want.xattrs, looked?.x) : [];
    if (seen.mode !== want.mode) reasons.push('mode');
    if (seen.uid !== want.uid || seen.gid !== want.gid) reasons.push('owner');
    const [reason, ...also] = reasons;
    if (reason) out.push({ path: d, reason, also, seen, foreign: false });
  }
  return out;
}

/** Where a foreign object went, and what it was as found there. */
export interface Kept { label: string; seen: Standing | null }

/**
 * Rename the object at `name` (in `dirFd`) out of the way, whole: into quarantine, or, when
 * the store is on another file system, beside the root under besideName() in the root's
 * parent (opened by path, never created). Throws (nothing moved) when neither can be done.
 */
export function moveAsideWhole(q: Quarantine, id: string, dirFd: number, name: string, root: string, rel: string): Kept {
  try {
    const label = q.moveWhole(id, dirFd, name);
    return { label, seen: standingOf(q.lstatKept(id, name)) };
  } catch (err) {
    // EXDEV: the store is on another file system. EINVAL: the store is inside it (an embedded
    // store in a root found foreign at start): beside the root, the store goes along.
    const code = errnoCode(err);
    if (code !== 'EXDEV' && code !== 'EINVAL') throw err;
  }
  const parent = openParentNoFollow(root);
  try {
    const to = besideName(basename(root), rel, id);
    // rename(2) would replace what is there: the name is warden's own, and never reused.
    if (lstatAt(parent, to)) throw Object.assign(new Error(`${to} exists`), { code: 'EEXIST' });
    moveAt(dirFd, name, parent, to);
    try { fsyncSync(parent); } catch { /* best effort: the alert is the record */ }
    return { label: join(dirname(root), to), seen: standingOf(lstatAt(parent, to)) };
  } finally { safeClose(parent); }
}

/**
 * Open the directory that holds `path` (absolute) without following a symlink at any
 * component (but root's own: the agent can make only links it owns): the agent who owns a directory above the root can put a link there, and the
 * root-path repair would then move aside and make anew an entry of whatever directory the
 * link names (a directory of root's, as / holds /root), acting where the agent cannot
 * (docs/ARCHITECTURE.md, invariant 19). Another user's link on the way throws ELOOP: the
 * repair fails closed and says so.
 */
export function openParentNoFollow(path: string): number {
  const parts = dirname(path).split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw Object.assign(new Error(`${path} is not a normalised absolute path`), { code: 'EINVAL' });
  let fd = openSync('/', O_PATH | constants.O_DIRECTORY);
  try {
    for (const [i, part] of parts.entries()) {
      const last = i === parts.length - 1;
      // A link the system made (root's, in a directory of root's no one else can write:
      // /home -> /var/home) is followed; the agent can make only links of its own, and can
      // swap in its own only where it may write.
      const link = lstatAt(fd, part);
      const dir = fstatSync(fd);
      if (link?.isSymbolicLink() && (link.uid !== 0 || dir.uid !== 0 || (dir.mode & 0o022) !== 0)) throw Object.assign(new Error(`${path}: a symlink of uid ${link.uid} above the root`), { code: 'ELOOP' });
      const follow = link?.isSymbolicLink() ? 0 : constants.O_NOFOLLOW;
      let next: number;
      try {
        next = openSync(at(fd, part), (last ? constants.O_RDONLY : O_PATH) | constants.O_DIRECTORY | follow);
      } catch (err) {
        if (!last || errnoCode(err) !== 'EACCES') throw err;
        next = openSync(at(fd, part), O_PATH | constants.O_DIRECTORY | follow);
      }
      safeClose(fd);
      fd = next;
    }
    return fd;
  } catch (err) { safeClose(fd); throw err; }
}

/**
 * mkdir `name` in `dirFd`, then set the approved owner and mode through a descriptor of the
 * directory just made, after checking it is that one (owned by this process, 0700, empty,
 * born since the mkdir began: bornSince): a directory swapped in between the mkdir and the
 * open is never chowned. Returns its identity.
 */
export function makeOwnDirAt(dirFd: number, name: string, opts: WriteOptions, xattrs?: XattrSet): Ident {
  const startedMs = Date.now();
  mkdirSync(at(dirFd, name), 0o700);
  const fd = openSync(at(dirFd, name), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    const st = fstatSync(fd);
    const uid = process.geteuid?.() ?? st.uid;
    if (st.uid !== uid || (st.mode & 0o7777) !== 0o700 || !bornSince(st, startedMs) || readdirSync(`/proc/self/fd/${fd}`).length !== 0) {
      throw Object.assign(new Error(`${name} was swapped for another directory while it was made`), { code: 'ESWAPPED' });
    }
    // Its approved ACLs exactly (an inherited default ACL of the parent goes), then owner and mode (which sets the ACL mask).
    if (xattrs) setDirXattrsAt(at(fd, '.'), xattrs);
    const wantUid = opts.uid ?? uid, wantGid = opts.gid ?? process.getegid?.() ?? st.gid;
    if (st.uid !== wantUid || st.gid !== wantGid) fchownSync(fd, wantUid, wantGid);
    if ((opts.mode & 0o7777) !== 0o700 || xattrs) fchmodSync(fd, opts.mode & 0o7777);
    if (opts.durable ?? true) { try { fsyncSync(dirFd); } catch { /* O_PATH or odd file system */ } }
    return { dev: st.dev, ino: st.ino };
  } finally { closeSync(fd); }
}

/**
 * Slack for the kernel's coarse file clock, which lags the wall clock by up to a tick. A
 * directory of this process's user, 0700 and empty, is not yet proved to be the one just
 * made: the agent (who owns the parent) can exchange in one it does not own of the same
 * shape (the guard as root: an empty locked ~/.ssh of root's) between the mkdir and the
 * open. Its birth time gives it away: the agent cannot make a directory of another user's,
 * so one born before the mkdir is foreign (docs/ARCHITECTURE.md, invariant 19). A file
 * system that keeps no birth time (0) leaves the shape check alone.
 */
export const BIRTH_SLACK_MS = 200;

/** Was the directory (fstat'ed) born no earlier than `sinceMs` (or is its birth time unknown)? */
export function bornSince(st: { birthtimeMs: number }, sinceMs: number): boolean {
  return st.birthtimeMs <= 0 || st.birthtimeMs >= sinceMs - BIRTH_SLACK_MS;
}

/**
 * Put back the mode and owner of warden's own directory `name` (identity `id`): through a
 * descriptor of the directory, after checking it is that one, so a directory swapped in
 * between the look and the fix is never changed (it is found foreign at the next look).
 * A directory made unreadable (chmod 0100) is opened O_PATH and changed through its /proc
 * magic link, which names the very inode opened.
 */
export function fixOwnDirAt(dirFd: number, name: string, id: Ident, opts: WriteOptions, xattrs?: XattrSet): void {
  let fd: number;
  try {
    fd = openSync(at(dirFd, name), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    if (errnoCode(err) !== 'EACCES') throw err;
    fd = openSync(at(dirFd, name), O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  }
  try {
    const was = fstatSync(fd);
    if (was.dev !== id.dev || was.ino !== id.ino) throw Object.assign(new Error(`${name} was swapped for another directory`), { code: 'ESWAPPED' });
    // The approved ACLs first: removing one the agent set leaves its mask in the mode's group bits.
    if (xattrs) setDirXattrsAt(at(fd, '.'), xattrs);
    const st = xattrs ? fstatSync(fd) : was;
    const self = `/proc/self/fd/${fd}`;
    const uid = opts.uid ?? process.geteuid?.() ?? st.uid, gid = opts.gid ?? process.getegid?.() ?? st.gid;
    if (st.uid !== uid || st.gid !== gid) chownSync(self, uid, gid);
    if ((st.mode & 0o7777) !== (opts.mode & 0o7777)) chmodSync(self, opts.mode & 0o7777);
  } finally { closeSync(fd); }
}

/** Open the directory at `name` without following a link, and check it is `id`. */
export function openOwnDirAt(dirFd: number, name: string, id: Ident): number {
  const fd = openSync(at(dirFd, name), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  const st = fstatSync(fd);
  if (st.dev !== id.dev || st.ino !== id.ino) {
    safeClose(fd);
    throw Object.assign(new Error(`${name} was swapped for another directory while it was made`), { code: 'ESWAPPED' });
  }
  return fd;
}
