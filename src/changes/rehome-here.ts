/**
 * `warden rehome --here`: the owner's way to make the directory now at the root path the
 * root (docs/ARCHITECTURE.md, invariant 19; docs/DEPLOY.md, "Moving a root"): a file
 * system of its own mounted at the path, or a directory put there on purpose. The guard
 * never adopts such a directory by itself; the owner does, with the guard stopped:
 *
 *   1. what stands at the path is checked: a real directory (no symlink, at the path or
 *      above it), owned by the root's approved owner or by root;
 *   2. its device and inode are recorded as the root (the store's root record, the key's);
 *   3. the approved directories and files it lacks are written into it (approved owner and
 *      mode), and the root's own mode and owner are set as approved, as far as this account
 *      may; a file that is there but differs is left to the guard, which reverts it at start
 *      and alerts (its content is kept in quarantine).
 *
 * The guard then starts on it as on its own root.
 */
import { constants, fstatSync, lstatSync, openSync } from 'node:fs';
import { basename } from 'node:path';
import { WardenError, errnoCode } from '../common/errors.js';
import { escapeText } from '../common/escape.js';
import { baseOf, dirOf } from '../common/rel-path.js';
import { O_PATH, at, ensureDirBeneath, fixRoot, lstatAt, replaceFileAt, safeClose, withDir } from '../fsx/beneath.js';
import { makeOwnDirAt, openParentNoFollow } from '../guard/dir-repair.js';
import { CONTROL_DIR, LOCK_NAME } from '../store/layout.js';
import { LockHeldError, acquireLock } from '../store/lock.js';
import { loadKey } from '../store/keys.js';
import { loadBaseline } from '../store/load-baseline.js';
import { recordKeyOwner } from '../store/rehome.js';
import { NotInitialised, Store } from '../store/store.js';
import { EMBEDDED_STORE } from '../store/location.js';

export interface HereResult {
  root: string;
  /** The directory now recorded as the root. */
  dev: number;
  ino: number;
  uid: number;
  /** It was the recorded root already. */
  already: boolean;
  /** Approved directories and files written into it (paths below the root). */
  written: string[];
  /** What this account could not put right (left to the guard at its start), with why. */
  left: string[];
}

function refuse(msg: string): never {
  throw new WardenError(msg, 1);
}

/** Open the directory at `root` without following a symlink anywhere; EACCES: O_PATH (enough to record and fstat it). */
function openAtPath(root: string): { fd: number; readable: boolean } {
  const parent = openParentNoFollow(root);
  try {
    try { return { fd: openSync(at(parent, basename(root)), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW), readable: true }; } catch (err) {
      if (errnoCode(err) !== 'EACCES') throw err;
      return { fd: openSync(at(parent, basename(root)), O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW), readable: false };
    }
  } finally { safeClose(parent); }
}

export async function rehomeHere(root: string, log: (l: string) => void): Promise<HereResult> {
  const seen = lstatSync(root, { throwIfNoEntry: false });
  if (!seen) refuse(`nothing stands at ${escapeText(root)}: make the directory (or mount the file system) there first`);
  if (seen.isSymbolicLink()) refuse(`${escapeText(root)} is a symlink: warden adopts only a real directory at the root path (mount the file system at the path itself)`);
  if (!seen.isDirectory()) refuse(`${escapeText(root)} is not a directory`);
  let store: Store;
  try { store = Store.open(root); } catch (err) {
    if (err instanceof NotInitialised) refuse(`no store for ${escapeText(root)} here: a root whose store is inside it (${EMBEDDED_STORE}/) carries it along; copy the old root's ${EMBEDDED_STORE}/ into the directory now at the path (cp -a OLD/${EMBEDDED_STORE} ${escapeText(root)}/), then run this again. (${err.message})`);
    throw err;
  }
  try {
    const controlFd = ensureDirBeneath(store.fd, CONTROL_DIR);
    let lock;
    try { lock = await acquireLock(controlFd, { role: 'command', waitMs: 3000, key: loadKey(root, false), label: store.label(`${CONTROL_DIR}/${LOCK_NAME}`), log }); }
    catch (err) {
      if (err instanceof LockHeldError && err.holder?.role === 'daemon') {
        refuse(`the guard (pid ${err.holder.pid}) is running for this root: stop it first ('systemctl stop warden-guard', or stop 'warden run'), run 'warden rehome --here' again, then start the guard`);
      }
      throw err;
    } finally { safeClose(controlFd); }
    try {
      const l = loadBaseline(root, { blobs: true });
      try { return adopt(root, seen.dev, seen.ino, l); } finally { l.close(); }
    } finally { lock.release(); }
  } finally { store.close(); }
}

function adopt(root: string, dev: number, ino: number, l: ReturnType<typeof loadBaseline>): HereResult {
  const want = l.state.index.dirs[''];
  const { fd, readable } = openAtPath(root);
  try {
    const st = fstatSync(fd);
    if (st.dev !== dev || st.ino !== ino) refuse(`${escapeText(root)} changed while warden looked at it; nothing was recorded. Run this again.`);
    const owners = [0, ...(want ? [want.uid] : [])];
    if (!owners.includes(st.uid)) {
      refuse(`${escapeText(root)} is owned by uid ${st.uid}, not by the root's approved owner${want ? ` (uid ${want.uid})` : ''} or root: warden will not adopt it. Nothing was recorded.`);
    }
    const already = l.store.rootReplaced(fd) === null;
    const written: string[] = [];
    const left: string[] = [];
    if (readable) restoreMissing(fd, l, written, left);
    else left.push(`. (this account cannot read ${escapeText(root)}: the guard writes what is missing when it starts)`);
    if (want && ((st.mode & 0o7777) !== want.mode || st.uid !== want.uid || st.gid !== want.gid)) {
      try { fixRoot(fd, { mode: want.mode, uid: want.uid, gid: want.gid }); } catch (err) { left.push(`. (its mode and owner: ${errnoCode(err) ?? String(err)})`); }
    }
    l.store.recordRoot(fd);
    recordKeyOwner(root, fd);
    return { root, dev, ino, uid: st.uid, already, written, left };
  } finally { safeClose(fd); }
}

/** The approved directories (shallowest first) and files the new root lacks, written as approved. */
function restoreMissing(rootFd: number, l: ReturnType<typeof loadBaseline>, written: string[], left: string[]): void {
  const dirs = Object.keys(l.state.index.dirs).filter((d) => d !== '').sort((a, b) => a.split('/').length - b.split('/').length);
  for (const d of dirs) {
    const e = l.state.index.dirs[d];
    if (!e) continue;
    withDir(rootFd, dirOf(d), (p) => {
      if (lstatAt(p, baseOf(d))) return;
      try { makeOwnDirAt(p, baseOf(d), { mode: e.mode, uid: e.uid, gid: e.gid }); written.push(`${d}/`); } catch (err) { left.push(`${d}/ (${errnoCode(err) ?? String(err)})`); }
    }, (f) => { left.push(`${d}/ (${f.code})`); });
  }
  for (const f of l.state.paths()) {
    const e = l.state.entry(f);
    if (!e) continue;
    withDir(rootFd, dirOf(f), (p) => {
      if (lstatAt(p, baseOf(f))) return;
      const bytes = l.state.bytesOf(l.store.fd, f);
      if (!bytes) { left.push(`${f} (its approved content is missing from the store)`); return; }
      try { replaceFileAt(p, baseOf(f), bytes, { mode: e.mode, uid: e.uid, gid: e.gid }); written.push(f); } catch (err) { left.push(`${f} (${errnoCode(err) ?? String(err)})`); }
    }, (w) => { left.push(`${f} (${w.code})`); });
  }
}
