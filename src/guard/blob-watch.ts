/**
 * Which store blobs the backstop rescan must lstat (idle CPU). One inotify watch on
 * each held blob directory (blobs/, secrets/: src/fsx/inotify.ts), armed on the directory's
 * inode through the descriptor the store check holds (`.` inside withCwdAt), so it sees the
 * real store whatever happens to its path. A directory watch reports, naming the child, every
 * create, delete, rename in or out, write, truncate, chmod/chown and open made through a name
 * in that directory:
 *
 *   IN_CREATE/DELETE/MOVED_*   a blob added, removed or renamed: that name is looked at
 *   IN_MODIFY/ATTRIB/CLOSE_WRITE   written, truncated, chmod'ed: looked at
 *   IN_OPEN                    opened: looked at at every rescan until its close (an open for
 *                              writing may hold a shared mapping whose stores raise nothing)
 *   IN_DELETE_SELF/MOVE_SELF/IGNORED  the directory itself went: no skip until re-armed
 *   IN_Q_OVERFLOW              events were lost: no skip in any directory until re-armed
 *
 * What a directory watch cannot see: a write through a hard link made outside the directory
 * (the event goes to the other name's parent), and an open from before the watch existed.
 * So a blob that had more than one link when last looked at is looked at every rescan, the
 * first pass after arming looks at every blob, and every STORE_FULL_CHECK_EVERY-th rescan
 * looks at every blob whatever the watch says: a change no event reported is still found
 * within that many rescans (test/guard/store-full-check.test.ts). Only on a file system where
 * the kernel raises every change (LOCAL_FS, open-watch.ts).
 */
import { fstatSync } from 'node:fs';
import { withCwdAt } from '../fsx/beneath.js';
import {
  IN_ATTRIB, IN_CLOSE_NOWRITE, IN_CLOSE_WRITE, IN_CREATE, IN_DELETE, IN_DELETE_SELF, IN_IGNORED, IN_MODIFY,
  IN_MOVED_FROM, IN_MOVED_TO, IN_MOVE_SELF, IN_ONLYDIR, IN_OPEN, IN_Q_OVERFLOW,
  closeInotify, drainInotify, loadInotify, type Inotify,
} from '../fsx/inotify.js';
import { FULL_SWEEP_EVERY, localFsHere } from './open-watch.js';
import { watchSeams } from './test-seams.js';

/** Every STORE_FULL_CHECK_EVERY-th rescan lstat's every blob (at most this × rescan_seconds to find what no event said). */
export const STORE_FULL_CHECK_EVERY = FULL_SWEEP_EVERY;

const MASK = IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE
  | IN_OPEN | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR;

interface DirWatch {
  wd: number; dev: number; ino: number;
  /** False until a pass that looked at every blob has run since the watch was armed. */
  settled: boolean;
  /** Names with an event since the last pass. */
  dirty: Set<string>;
  /** Names opened and not closed yet (a possible shared mapping): looked at every pass. */
  open: Map<string, number>;
}

export class BlobDirWatch {
  private readonly lib: Inotify | null;
  private fd = -1;
  private readonly dirs = new Map<string, DirWatch>();
  private readonly byWd = new Map<number, string>();
  private readonly buf = Buffer.alloc(64 * 1024);
  /** Blobs seen with more than one link: a write through the other name raises nothing here. */
  readonly linked = new Set<string>();
  /**
   * Test seam (test-seams.ts `storeWatchBlind`): every event of the blob-directory watches is
   * dropped as it is read, as if the kernel had raised none (test/guard/store-full-check): a
   * damaged blob is then found only by the full check.
   */
  private readonly blind = watchSeams.storeWatchBlind;

  constructor(lib: Inotify | null = loadInotify()) {
    this.lib = lib;
    if (lib) { this.fd = lib.init(); if (this.fd < 0) this.fd = -1; }
  }

  private drain(): void {
    if (this.fd < 0) return;
    for (const e of drainInotify(this.fd, this.buf, true)) {
      if (e.mask & IN_Q_OVERFLOW) { for (const d of this.dirs.values()) d.settled = false; continue; }
      const dir = this.byWd.get(e.wd);
      const d = dir === undefined ? undefined : this.dirs.get(dir);
      if (!d || d.wd !== e.wd) continue;
      if (e.mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) { this.drop(dir as string); continue; }
      if (this.blind || !e.name) continue;
      d.dirty.add(e.name);
      if (e.mask & IN_OPEN) d.open.set(e.name, (d.open.get(e.name) ?? 0) + 1);
      if (e.mask & (IN_CLOSE_WRITE | IN_CLOSE_NOWRITE)) {
        const n = (d.open.get(e.name) ?? 0) - 1;
        if (n > 0) d.open.set(e.name, n); else d.open.delete(e.name);
      }
    }
  }

  private drop(dir: string): void {
    const d = this.dirs.get(dir);
    if (!d) return;
    this.dirs.delete(dir);
    if (this.byWd.get(d.wd) === dir) { this.byWd.delete(d.wd); this.lib?.removeWatch(this.fd, d.wd); }
  }

  /**
   * Before a rescan's pass over the blobs of `dir` (held as `dirFd`): null when every blob
   * must be looked at (a full check, no watch, just armed, the directory not the one
   * watched, events lost, not a local file system); else the test of which blobs to look at.
   * The events read now are consumed: the caller's pass looks at every blob they name.
   */
  plan(dir: string, dirFd: number, full: boolean): ((sha: string) => boolean) | null {
    if (this.fd < 0 || !this.lib) return null;
    this.drain();
    let st;
    try { st = fstatSync(dirFd); } catch { return null; }
    let d = this.dirs.get(dir);
    if (d && (d.dev !== st.dev || d.ino !== st.ino)) { this.drop(dir); d = undefined; }
    if (!d) {
      // Armed before this pass, which looks at everything: every later change is an event or caught by the full check.
      const lib = this.lib, ifd = this.fd;
      const r = withCwdAt(dirFd, () => (localFsHere() ? lib.addWatch(ifd, '.', MASK) : -1));
      const wd = r?.value ?? -1;
      if (wd < 0) return null;
      d = { wd, dev: st.dev, ino: st.ino, settled: false, dirty: new Set(), open: new Map() };
      this.dirs.set(dir, d);
      this.byWd.set(wd, dir);
      return null;
    }
    if (full || !d.settled) { d.settled = true; d.dirty.clear(); return null; }
    const dirty = d.dirty;
    d.dirty = new Set();
    const open = d.open, linked = this.linked;
    return (sha) => dirty.has(sha) || open.has(sha) || linked.has(sha);
  }

  close(): void {
    if (this.fd >= 0) closeInotify(this.fd);
    this.fd = -1;
    this.dirs.clear();
    this.byWd.clear();
  }
}
