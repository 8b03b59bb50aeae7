/**
 * Putting the root path and the protected directories right (docs/ARCHITECTURE.md,
 * invariants 2 and 19): each step returns what it did and raises nothing; the guard turns
 * the outcome into an alert, or a failed revert retried with backoff. The decisions are
 * root-path.ts's, the I/O primitives dir-repair.ts's.
 */
import { basename } from 'node:path';
import { baseOf, dirOf } from '../common/rel-path.js';
import { at, fixRoot, lstatAt, safeClose, withDir } from '../fsx/beneath.js';
import { setDirXattrsAt } from '../fsx/xattrs.js';
import type { DirEntry } from '../store/baseline.js';
import { fixOwnDirAt, makeOwnDirAt, moveAsideWhole, openOwnDirAt, openParentNoFollow, standingOf, type DirFinding, type Kept } from './dir-repair.js';
import type { Quarantine } from './quarantine.js';
import { CannotMoveAside, REFUSALS } from './blocked.js';
import { errnoCode } from '../common/errors.js';
import { foreignDetail, judgeRoot, type Ident, type Standing } from './root-path.js';

/** What a repair did: what its alert says, or why it failed. */
export type Repaired = { ok: true; quarantine: string | null; detail?: string | undefined } | { ok: false; err: unknown };

/**
 * One approved directory put right (`want`: as approved). The root's own mode/owner through
 * the descriptor held; warden's own directory (known by device and inode) through its
 * descriptor once checked to be that very directory; anything else at the path moved aside
 * whole and the directory made anew (recorded in `dirIds`). Null: its parent cannot be
 * reached (the deeper repair waits for the parent's).
 */
export function repairDir(rootFd: number, root: string, q: Quarantine, dirIds: Map<string, Ident>, f: DirFinding, want: DirEntry, id: string): Repaired | null {
  const opts = { mode: want.mode, uid: want.uid, gid: want.gid };
  if (f.path === '') {
    // The root's own mode/owner (chmod 0300 ROOT would blind every walk): put back through our descriptor.
    try {
      if (want.xattrs) setDirXattrsAt(at(rootFd, '.'), want.xattrs);
      fixRoot(rootFd, opts);
      return { ok: true, quarantine: null };
    } catch (err) { return { ok: false, err }; }
  }
  return withDir(rootFd, dirOf(f.path), (parent): Repaired => {
    try {
      const name = baseOf(f.path);
      if (!f.foreign && f.seen) { fixOwnDirAt(parent, name, f.seen, opts, want.xattrs); return { ok: true, quarantine: null }; }
      let kept: Kept | null = null;
      if (f.seen) kept = aside(f.seen, () => moveAsideWhole(q, id, parent, name, root, f.path));
      dirIds.set(f.path, makeOwnDirAt(parent, name, opts, want.xattrs));
      const detail = kept?.seen ? foreignDetail(f.path, kept.seen, kept.label, 'the approved directory was made anew by warden') : undefined;
      return { ok: true, quarantine: kept?.label ?? null, detail };
    } catch (err) {
      return { ok: false, err };
    }
  }, () => null);
}

/**
 * A move aside that failed (a mount point, a read-only or unwritable parent) moved and
 * changed nothing: said as CannotMoveAside, so the guard leaves the object alone and waits
 * (blocked.ts) instead of acting at or below the path. Only for the errors that say the
 * object cannot be moved (REFUSALS): a full file system is a failed repair, retried.
 */
function aside(seen: Standing, move: () => Kept): Kept {
  try { return move(); } catch (err) { throw REFUSALS.has(errnoCode(err) ?? '') ? new CannotMoveAside(seen, err) : err; }
}

/** A directory warden made at the root path, held open (`fd`), with what its alert says. */
export interface NewRoot { fd: number; made: Ident; quarantine: string | null; detail: string }

/**
 * The root path does not name the directory held (`held`): whatever stands there is not
 * warden's, so it is moved aside whole, never adopted, and a directory warden makes is put
 * at the path (mode/owner as approved, `want`). The moved-away original is not followed (its
 * place is the agent's choice). Null: the path holds after all. Throws when it cannot.
 */
export function remakeRoot(q: Quarantine, root: string, held: Ident, want: DirEntry | undefined, id: string): NewRoot | null {
  // The parent is opened without following a symlink in any component (dir-repair.ts).
  const parentFd = openParentNoFollow(root);
  try {
    const name = basename(root);
    const seen = standingOf(lstatAt(parentFd, name));
    const judged = judgeRoot(seen, held);
    if (judged === 'holds') return null;
    const kept = judged === 'foreign' && seen ? aside(seen, () => moveAsideWhole(q, id, parentFd, name, root, '')) : null;
    const made = makeOwnDirAt(parentFd, name, want ? { mode: want.mode, uid: want.uid, gid: want.gid } : { mode: 0o755 }, want?.xattrs);
    const fd = openOwnDirAt(parentFd, name, made);
    const after = 'the approved tree was put back at the path in a directory warden made (the directory warden guarded was renamed away; it is not followed)';
    const detail = kept?.seen ? foreignDetail(root, kept.seen, kept.label, after)
      : kept ? `something was put at ${root} and moved to ${kept.label}; ${after}` : `${root} named nothing; ${after}`;
    return { fd, made, quarantine: kept?.label ?? null, detail };
  } finally {
    safeClose(parentFd);
  }
}
