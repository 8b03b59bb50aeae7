/**
 * The revert: put one finding right through the descriptor of its directory
 * (docs/ARCHITECTURE.md, "The pipeline", step "act"). A path that should not exist is moved
 * into quarantine (removeFinding); an approved file gets its approved bytes back
 * (restoreFinding): set the rejected object aside, write the approved bytes, settle the
 * quarantine copy. Each returns an outcome and raises nothing: the guard turns the outcome
 * into an alert (alert-build.ts) or a failed revert retried with backoff.
 */
import { errnoCode } from '../common/errors.js';
import { DIR_MOVED, readHeldHead, replaceFileAt, rewriteInPlaceAt, safeClose, unlinkAt } from '../fsx/beneath.js';
import { exactXattrs } from '../fsx/xattrs.js';
import type { FileEntry } from '../store/baseline.js';
import { baseOf } from '../common/rel-path.js';
import { moveAsideWhole } from './dir-repair.js';
import type { Finding } from './inspect.js';
import type { LateWrites } from './late-writes.js';
import type { Quarantine, QuarantineQuota } from './quarantine.js';
import type { RuntimeWrites } from './runtime-writes.js';

/** What a revert works with (the guard's, by reference). */
export interface RevertDeps {
  root: string;
  quarantine: Quarantine;
  quota: QuarantineQuota;
  late: LateWrites;
  maxBytes: () => number;
  /** The approved owner of a path (its entry's, else its directory's, else the root's): quarantine secures only what that user owns. */
  approvedOwner?: (path: string) => number | undefined;
  /** A profile's runtime writing a file itself (runtime-writes.ts): judged before anything is restored. */
  runtimeWrites?: RuntimeWrites;
}

/** The approved entry of a path and its approved bytes (read from the store, authenticated). */
export interface Approved { entry: FileEntry; bytes: Buffer }

export type Outcome =
  | {
    ok: true;
    /** The quarantine label of the rejected object, or null when it was not kept. */
    quarantine: string | null;
    /** False when the quota was used up and a rejected file's content was not kept. */
    keep: boolean;
    /** The rejected inode is hard-linked into quarantine (its late writes are kept). */
    linked: boolean;
    /** Set when the disk was full and the approved bytes were written in place. */
    fullNote?: string | undefined;
    /** Rejected bytes the full disk kept out of quarantine: the guard writes them when there is room. */
    owe?: Buffer | undefined;
    /** Left as it is (runtime-writes.ts): the runtime's own write, approved and alerted already, or one under way, looked at again shortly. */
    leftAlone?: true;
    /** What the alert adds about whose write it was (runtime-writes.ts). */
    note?: string | undefined;
  }
  | { ok: false; err: unknown; quarantine: string | null; restored: boolean };

/** A path that should not exist: moved into quarantine, or dropped when the quota is used up. */
export function removeFinding(d: RevertDeps, id: string, fd: number, f: Finding): Outcome {
  const { obs } = f;
  const name = baseOf(f.path);
  try {
    // Only a plain file can be dropped when the quota is used up; anything else is moved.
    const keep = d.quota.take() || obs.type !== 'file';
    // No fsync here: a removal lost in a crash leaves the file where it was, and the
    // startup check removes it again (a storm of them must not cost two fsyncs each).
    // A regular file is moved and secured (quarantine.ts); anything else is not warden's
    // to change and is moved whole (docs/ARCHITECTURE.md, invariant 19).
    let quarantine: string | null = null;
    if (keep) quarantine = obs.type === 'file' ? d.quarantine.move(id, fd, name, d.maxBytes(), false, d.approvedOwner?.(f.path)) : moveAsideWhole(d.quarantine, id, fd, name, d.root, f.path).label;
    else unlinkAt(fd, name);
    return { ok: true, quarantine, keep, linked: false };
  } catch (err) {
    return { ok: false, err, quarantine: null, restored: false };
  }
}

/** The rejected object while a restore is under way (what to undo if it fails). */
interface Aside { quarantine: string | null; linked: boolean; heldFd: number | null; movedAside: boolean }

/**
 * Put the approved bytes back at `f.path`. `keep`: the quota allows keeping the rejected
 * content; `stillHere`: is the directory `fd` holds still at its place (checked just before the rename)?
 */
export function restoreFinding(d: RevertDeps, id: string, fd: number, f: Finding, approved: Approved, keep: boolean, stillHere: () => boolean): Outcome {
  const name = baseOf(f.path);
  const aside: Aside = { quarantine: null, linked: false, heldFd: null, movedAside: false };
  let restored = false;
  // The runtime's own write is accepted, not fought; one on the user's behalf is reverted and filed as a request.
  const judged = d.runtimeWrites?.judge(id, f, approved);
  if (judged?.leave) return { ok: true, quarantine: null, keep, linked: false, leftAlone: true };
  try {
    setAside(d, id, fd, name, f, keep, aside);
    const fullDisk = writeApproved(d, id, fd, name, f, approved, aside, stillHere);
    restored = true;
    const owe = settle(d, id, name, f, keep, aside, fullDisk);
    return { ok: true, quarantine: aside.quarantine, keep, linked: aside.linked, fullNote: fullDisk ? fullDiskNote(fullDisk, owe !== undefined) : undefined, owe, note: judged && !judged.leave ? judged.note : undefined };
  } catch (err) {
    if (aside.heldFd !== null) safeClose(aside.heldFd);
    if (aside.linked && !aside.quarantine) d.quarantine.discard(id, name);
    return { ok: false, err, quarantine: aside.quarantine, restored };
  }
}

/**
 * Before the rename. Things that cannot be replaced by rename (dir) or must be kept as they
 * are (link, FIFO, socket, device) are moved aside whole. A rejected file is hard-linked into
 * quarantine, so late writes into it are kept (docs/ARCHITECTURE.md, "Revert"); on another file
 * system its inode is held open instead (late-writes.ts); neither, and never read whole: moved aside.
 */
function setAside(d: RevertDeps, id: string, fd: number, name: string, f: Finding, keep: boolean, aside: Aside): void {
  const { obs } = f;
  if (obs.type !== 'file' && obs.type !== 'absent') {
    aside.quarantine = moveAsideWhole(d.quarantine, id, fd, name, d.root, f.path).label;
    aside.movedAside = true;
    return;
  }
  if (obs.type !== 'file' || !keep) return;
  aside.linked = d.quarantine.linkBefore(id, fd, name, obs.ino);
  if (!aside.linked) aside.heldFd = d.quarantine.hold(fd, name, obs.ino);
  if (!aside.linked && aside.heldFd === null && obs.bytes === null) {
    aside.quarantine = d.quarantine.move(id, fd, name, d.maxBytes(), true, d.approvedOwner?.(f.path));
    aside.movedAside = true;
  }
}

/**
 * The approved bytes at the path: O_EXCL temp, rename. A full file system (the agent can fill
 * it first): written over the rejected file's own blocks, its bytes having been read whole
 * (kept from memory). Returns that errno (ENOSPC, EDQUOT), or null; throws what it cannot put right.
 */
function writeApproved(d: RevertDeps, id: string, fd: number, name: string, f: Finding, approved: Approved, aside: Aside, stillHere: () => boolean): string | null {
  const { entry } = approved;
  try {
    replaceFileAt(fd, name, approved.bytes, { mode: entry.mode, uid: entry.uid, gid: entry.gid, prepare: exactXattrs(entry.xattrs), stillHere });
    return null;
  } catch (err) {
    // Never move a file aside and then leave its path missing.
    if (aside.movedAside && d.quarantine.putBack(id, fd, name)) aside.quarantine = null;
    const code = errnoCode(err);
    if (code === DIR_MOVED) throw err;
    const { obs } = f;
    if ((code !== 'ENOSPC' && code !== 'EDQUOT') || aside.movedAside || obs.type !== 'file' || obs.bytes === null) throw err;
    if (aside.linked) { d.quarantine.discard(id, name); aside.linked = false; }
    if (!rewriteInPlaceAt(fd, name, approved.bytes, obs.ino, { mode: entry.mode, uid: entry.uid, gid: entry.gid, prepare: exactXattrs(entry.xattrs) })) throw err;
    return code;
  }
}

/**
 * After the restore (kept off the revert's critical path): the quarantined inode secured, or
 * the bytes we hold copied; a held inode tracked for late writes. Returns bytes owed to
 * quarantine when a full disk left no room for them (their label is given now).
 */
function settle(d: RevertDeps, id: string, name: string, f: Finding, keep: boolean, aside: Aside, fullDisk: string | null): Buffer | undefined {
  const { obs } = f;
  if (obs.type === 'file' && !aside.quarantine && keep) {
    const bytes = obs.bytes ?? (aside.heldFd !== null && !fullDisk ? readHeldHead(aside.heldFd, d.maxBytes()) : null);
    aside.quarantine = d.quarantine.settle(id, name, aside.linked, bytes, d.maxBytes(), d.approvedOwner?.(f.path));
  }
  // Written in place (a full disk), the held inode is the live file again: nothing late to keep from it.
  if (aside.heldFd !== null) {
    if (aside.quarantine && !fullDisk) d.late.track(aside.heldFd, id, name); else safeClose(aside.heldFd);
    aside.heldFd = null;
  }
  // No room for the copy either (quarantine on the same full file system): held in memory.
  if (!fullDisk || aside.quarantine || !keep || !obs.bytes) return undefined;
  aside.quarantine = d.quarantine.label(id, name);
  return obs.bytes;
}

function fullDiskNote(code: string, owed: boolean): string {
  return `the file system is full (${code}): no temp file could be written, so the approved bytes were written over the rejected file in place`
    + (owed ? '; the rejected bytes are held in memory and written to quarantine as soon as there is room' : '');
}
