/**
 * Rejected content is kept in the store's quarantine/ (docs/CONTRACT.md §Revert): a rejected
 * regular file as quarantine/<alert-id> itself (one inode, no folder: an entry costs what its
 * content costs), anything moved whole as quarantine/<alert-id>/<name>.
 *
 * - A rejected regular file is hard-linked there *before* the restore renames over it, so
 *   the quarantine holds the rejected inode itself: what a writer that is still writing
 *   (`echo … >` truncates first; a program writes in pieces) puts into it after the revert
 *   lands in quarantine too. When linking is refused (another file system, protected
 *   hard links), the bytes we read are written there instead, as before.
 * - Links, directories, FIFOs and sockets are moved there whole (moveWhole) and left
 *   exactly as they were: they are not warden's (docs/ARCHITECTURE.md, invariant 19).
 * - Unexpected regular files are moved there.
 * - Then every entry `move` kept is secured: 0600 (directories 0700), owned by warden, and a file
 *   keeps the rejected inode only when no other name of it remains ("cannot reach": no
 *   path outside quarantine names that inode; a writer that still holds an open
 *   descriptor may go on writing, which is how late writes are kept, but can never open
 *   it again). A file that still has another name (the attacker kept a hard link) or whose
 *   owner or mode we cannot set is replaced by a copy: the bytes we read, or its first
 *   max_bytes for a too-large file.
 */
import { nameFromBytes } from '../common/names.js';
import { fsyncSync } from 'node:fs';
import { errnoCode } from '../common/errors.js';
import {
  createFileAt, ensureDirBeneath, holdFileAt, linkAt, lstatAt, moveAt, readHeadAt, readHeldHead, safeClose, setModeAt, unlinkAt, withDir,
} from '../fsx/beneath.js';
import { QUARANTINE_DIR } from '../store/layout.js';
import type { Store } from '../store/store.js';
import { readdirSync, readlinkSync, rmdirSync, symlinkSync } from 'node:fs';
import { at } from '../fsx/beneath.js';

const MAX_SECURED_ENTRIES = 10_000;

export class Quarantine {
  constructor(
    private readonly store: Store,
    private readonly log: (line: string) => void,
    /** Repair a damaged layout entry (quarantine/ planted as a link or a file); true when it did. */
    private readonly repair: (name: string) => boolean = () => false,
  ) {}

  /**
   * Where a rejected inode held open across file systems goes (late-writes.ts), so what a
   * writer still puts into it is copied into quarantine; unset, the descriptor is closed.
   */
  onHeld: ((fd: number, id: string, name: string) => void) | null = null;

  /** quarantine/ itself, where a rejected regular file is kept as <alert-id>. */
  private top(): number {
    try {
      return ensureDirBeneath(this.store.fd, QUARANTINE_DIR, 0o700);
    } catch (err) {
      if (!this.repair(QUARANTINE_DIR)) throw err;
      return ensureDirBeneath(this.store.fd, QUARANTINE_DIR, 0o700);
    }
  }

  /** How alerts name a rejected regular file kept flat (snapshots/quarantine/ID). */
  private flatRel(id: string): string {
    return this.store.label(`${QUARANTINE_DIR}/${id}`);
  }

  private dir(id: string): number {
    try {
      return ensureDirBeneath(this.store.fd, `${QUARANTINE_DIR}/${id}`, 0o700);
    } catch (err) {
      // Never followed: a quarantine/ that is a link or a file is moved aside and recreated.
      if (!this.repair(QUARANTINE_DIR)) throw err;
      return ensureDirBeneath(this.store.fd, `${QUARANTINE_DIR}/${id}`, 0o700);
    }
  }

  /** How alerts name a quarantined entry (root-relative for the embedded store, else absolute). */
  /** How an entry is named in alerts (snapshots/quarantine/ID/NAME, or the store's label). */
  label(id: string, _name: string): string { return this.flatRel(id); }

  private rel(id: string, name: string): string {
    return this.store.label(`${QUARANTINE_DIR}/${id}/${name}`);
  }

  /**
   * Move the regular file `name` out of `dirFd` to quarantine/<id>, then secure it.
   * `owner`: the path's approved owner (secure changes only what that user, or warden, owns).
   */
  move(id: string, dirFd: number, name: string, maxBytes: number, durable = true, owner?: number): string {
    const q = this.top();
    try {
      try { moveAt(dirFd, name, q, id); }
      catch (err) { if (errnoCode(err) !== 'EXDEV' || !this.copyAcross(id, dirFd, name, q, maxBytes)) throw err; }
      // Moved is kept: a failure to secure it (not ours to chmod, unreadable to copy) must not
      // lose track of it, or a failed restore could not put it back (docs/CONTRACT.md §Revert).
      try { this.secure(q, id, maxBytes, null, owner); }
      catch (err) { this.log(`<3>warden: kept ${this.flatRel(id)} but could not secure it (${errnoCode(err) ?? err})`); }
      if (durable) fsyncQuiet(q);
    } finally { safeClose(q); }
    return this.flatRel(id);
  }

  /**
   * Move `name` into the alert's quarantine directory as it is (docs/ARCHITECTURE.md,
   * invariant 19): renamed whole and nothing else, never chowned, chmodded, copied, written
   * into or emptied; for an object that is not warden's (a foreign directory, a link, a FIFO,
   * a socket). Throws EXDEV when the store is on another file system (nothing moved).
   */
  moveWhole(id: string, dirFd: number, name: string): string {
    const q = this.dir(id);
    try {
      moveAt(dirFd, name, q, name);
      fsyncQuiet(q);
    } catch (err) {
      // Nothing moved: no empty folder is left to name an alert that kept nothing here.
      try { withDir(this.store.fd, QUARANTINE_DIR, (top) => rmdirSync(at(top, id)), () => undefined); } catch { /* not empty, or gone */ }
      throw err;
    } finally { safeClose(q); }
    return this.rel(id, name);
  }

  /** lstat of what quarantine/<id>/<name> holds now (null when nothing). */
  lstatKept(id: string, name: string): ReturnType<typeof lstatAt> {
    try {
      const q = this.dir(id);
      try { return lstatAt(q, name); } finally { safeClose(q); }
    } catch { return null; }
  }

  /**
   * The store is on another file system (rename and link say EXDEV): a regular file is
   * copied (its first max_bytes), held open for late writes and unlinked; a symlink is
   * recreated and unlinked. False for anything else (a directory, a FIFO): not moved.
   */
  private copyAcross(id: string, dirFd: number, name: string, q: number, maxBytes: number): boolean {
    const st = lstatAt(dirFd, name);
    if (st?.isSymbolicLink()) {
      symlinkSync(readlinkSync(at(dirFd, name), { encoding: 'buffer' }), at(q, id)); // the target as bytes, too
      unlinkAt(dirFd, name);
      return true;
    }
    if (!st?.isFile()) return false;
    const fd = holdFileAt(dirFd, name, st.ino);
    if (fd === null) return false;
    try {
      createFileAt(q, id, readHeldHead(fd, maxBytes), 0o600);
      unlinkAt(dirFd, name);
    } catch (err) { safeClose(fd); throw err; }
    this.held(fd, id, name);
    return true;
  }

  /** Hold the rejected inode `ino` open (it could not be linked): late writes are copied. */
  hold(dirFd: number, name: string, ino: number): number | null {
    return holdFileAt(dirFd, name, ino);
  }

  /** Hand a held descriptor on (or close it). */
  held(fd: number, id: string, name: string): void {
    if (this.onHeld) this.onHeld(fd, id, name); else safeClose(fd);
  }

  /** Replace the kept copy quarantine/<id> with `bytes` (temp + rename: never a torn copy). */
  rewrite(id: string, _name: string, bytes: Buffer): void {
    const q = this.top();
    try {
      const tmp = `.${id}.warden-late.tmp`;
      if (lstatAt(q, tmp)) unlinkAt(q, tmp);
      createFileAt(q, tmp, bytes, 0o600, false);
      moveAt(q, tmp, q, id);
    } finally { safeClose(q); }
  }

  /**
   * Before a restore: hard-link the rejected file (inode `ino`, as observed) into quarantine.
   * Returns false when it could not be linked (the caller keeps a copy after the restore).
   */
  linkBefore(id: string, dirFd: number, name: string, ino: number): boolean {
    let q: number;
    try { q = this.top(); } catch { return false; }
    try {
      linkAt(dirFd, name, q, id);
      // Swapped between our look and the link: not the inode we judged, drop it.
      if (lstatAt(q, id)?.ino !== ino) { unlinkAt(q, id); return false; }
      return true;
    } catch {
      return false;
    } finally { safeClose(q); }
  }

  /** After the restore: secure what linkBefore kept (or keep a copy of `bytes`). */
  settle(id: string, name: string, linked: boolean, bytes: Buffer | null, maxBytes: number, owner?: number): string | null {
    if (!linked) return bytes ? this.write(id, name, bytes) : null;
    try {
      const q = this.top();
      try { this.secure(q, id, maxBytes, bytes, owner); fsyncQuiet(q); } finally { safeClose(q); }
      return this.flatRel(id);
    } catch (err) {
      this.log(`<3>warden: could not secure the rejected content of ${name} in quarantine: ${errnoCode(err) ?? err}`);
      return bytes ? this.write(id, name, bytes) : null;
    }
  }

  /** What a quarantined regular file holds now, up to `maxBytes` (null when it cannot be read). */
  readBack(id: string, _name: string, maxBytes: number): Buffer | null {
    try {
      const q = this.top();
      try { const st = lstatAt(q, id); return st && st.isFile() && st.size <= maxBytes ? readHeadAt(q, id, maxBytes) : null; } finally { safeClose(q); }
    } catch { return null; }
  }

  /** The size of a quarantined regular file (null when it is not one, or not there). */
  sizeOf(id: string, _name: string): number | null {
    try {
      const q = this.top();
      try { const st = lstatAt(q, id); return st && st.isFile() ? st.size : null; } finally { safeClose(q); }
    } catch { return null; }
  }

  /**
   * A restore failed after the rejected entry was moved into quarantine: move it back, so
   * the path is never left missing (nothing else took its place). True when it was put back.
   */
  putBack(id: string, dirFd: number, name: string): boolean {
    try {
      const q = this.top();
      try {
        if (lstatAt(dirFd, name) !== null) return false;
        moveAt(q, id, dirFd, name);
        fsyncQuiet(dirFd);
        return true;
      } finally { safeClose(q); }
    } catch (err) {
      this.log(`<2>warden: could not put ${name} back after a failed restore: ${errnoCode(err) ?? String(err)}; it is in ${this.flatRel(id)}`);
      return false;
    }
  }

  /** The restore failed after linkBefore: the path still holds the file, so drop the link. */
  discard(id: string, _name: string): void {
    try { const q = this.top(); try { if (lstatAt(q, id)?.isFile()) unlinkAt(q, id); } finally { safeClose(q); } } catch { /* nothing to drop */ }
  }

  /** Keep bytes already read. A failure is logged; the revert itself has happened. */
  write(id: string, name: string, bytes: Buffer): string | null {
    try {
      const q = this.top();
      try {
        if (lstatAt(q, id)?.isFile()) unlinkAt(q, id);
        createFileAt(q, id, bytes, 0o600);
      } finally { safeClose(q); }
      return this.flatRel(id);
    } catch (err) {
      this.log(`<3>warden: could not keep rejected content of ${name} in quarantine: ${errnoCode(err) ?? err}`);
      return null;
    }
  }

  /**
   * 0600/0700, warden's, and no inode that has a name outside quarantine. Only what the
   * path's approved owner (`approvedUid`) or warden owns is changed: a third user's file the
   * agent moved in is another foreign object (docs/ARCHITECTURE.md, invariant 19), kept as it
   * is (its only name is now in the store's 0700 quarantine: nobody reaches it by path), or,
   * with another name left elsewhere, copied.
   */
  private secure(q: number, name: string, maxBytes: number, bytes: Buffer | null, approvedUid?: number, budget = { left: MAX_SECURED_ENTRIES }): void {
    if (budget.left-- <= 0) return;
    const st = lstatAt(q, name);
    if (!st || st.isSymbolicLink()) return; // a link's own mode means nothing on Linux
    const owner = { uid: process.geteuid?.() ?? st.uid, gid: process.getegid?.() ?? st.gid };
    const ours = approvedUid === undefined || st.uid === approvedUid || st.uid === owner.uid;
    if (st.isDirectory()) {
      if (!ours) return;
      setModeAt(q, name, 0o700, owner);
      withDir(q, name, (fd) => { for (const child of readdirSync(at(fd, '.'), { encoding: 'buffer' }).map(nameFromBytes)) this.secure(fd, child, maxBytes, null, approvedUid, budget); }, () => undefined);
      return;
    }
    if (!st.isFile()) { if (ours) setModeAt(q, name, 0o600, owner); return; } // FIFO, socket, device: never opened
    if (!ours && st.nlink === 1) return;
    if (st.nlink === 1) {
      try { setModeAt(q, name, 0o600, owner); return; } catch { /* not ours to change: keep a copy instead */ }
    }
    const copy = bytes ?? readHeadAt(q, name, maxBytes);
    unlinkAt(q, name);
    createFileAt(q, name, copy, 0o600);
  }
}

/**
 * Storms are bounded on disk too: at most `perWindow` new quarantine entries per window
 * (371,000 new files once put 3.1 GB into snapshots/). Beyond it the rejected content is
 * not kept; the alert says so (folded alerts count how many), so the overflow is recorded.
 */
export class QuarantineQuota {
  private windowStart = 0;
  private used = 0;
  overflowed = 0;
  constructor(readonly perWindow = 1000, readonly windowMs = 60_000, private readonly now: () => number = Date.now) {}
  take(): boolean {
    const t = this.now();
    if (t - this.windowStart >= this.windowMs) { this.windowStart = t; this.used = 0; }
    if (this.used >= this.perWindow) { this.overflowed++; return false; }
    this.used++;
    return true;
  }
  get note(): string { return `quarantine quota reached (${this.perWindow} entries per ${this.windowMs / 1000} s): this content was not kept`; }
}

/** Durability of a move is best effort: the alert, fsynced, is the record that matters. */
export function fsyncQuiet(fd: number): void {
  try { fsyncSync(fd); } catch { /* e.g. EINVAL on odd filesystems */ }
}
