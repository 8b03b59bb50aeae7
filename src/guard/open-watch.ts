/**
 * Which approved files could hold a shared writable mapping (docs/CONTRACT.md §Detection), from
 * one inotify watch on each file's inode (src/fsx/inotify.ts). A writable MAP_SHARED mapping
 * needs an open for writing, and an inode watch sees every open of the inode by any path:
 *
 *   IN_OPEN            the file is open: hot until the matching close
 *   IN_CLOSE_*         sent when the last reference to that open file goes, and a mapping is
 *                      one: closing the descriptor of a mapped file sends nothing, the munmap
 *                      (or the mapper's exit) sends IN_CLOSE_WRITE (measured, kernel 6.18).
 *                      So "opens not closed yet" covers every live mapping; CLOSE_WRITE is a hint
 *   IN_MODIFY/ATTRIB   written or chmod'ed through any path (a hard link outside the root): a hint now
 *   IN_MOVE_SELF       renamed away or exchanged (the name may name another file now): hot, so
 *                      its name is lstat'ed on the fast cycle (a hint when it names another inode)
 *   IN_IGNORED         the watch went with the inode: hot until watched again
 *   IN_Q_OVERFLOW      events were lost, so the counts are unknown: every watched file stays hot
 *                      until the path names another inode (a revert or a sanctioned change)
 *
 * A file with no watch on the inode its clean stamp names (not watched yet, the watch limit
 * reached, no koffi) is hot too. The stamp poll looks at hot files fast and at the rest on a
 * slow cycle, so what this cannot see (a mapping made while the guard was stopped) still
 * shows within that cycle. This file only keeps the state; the stamp poll does the I/O.
 *
 * What the watch cannot see is an open from before it was armed. Right after arming, the
 * kernel is asked whether the inode is open for writing by anyone (settle): when it is not,
 * every open that could ever map it writable raises IN_OPEN on this watch, so the file is
 * *quiet* and the slow cycle skips it (idle CPU); when it is, the file counts as
 * open; when that cannot be told, the slow cycle looks at it as before.
 */
import { statfsSync } from 'node:fs';
import {
  IN_ATTRIB, IN_CLOSE_NOWRITE, IN_CLOSE_WRITE, IN_IGNORED, IN_MODIFY, IN_MOVE_SELF, IN_OPEN, IN_Q_OVERFLOW,
  closeInotify, drainInotify, loadInotify, type Inotify,
} from '../fsx/inotify.js';
import { watchSeams } from './test-seams.js';

/**
 * IN_MOVE_SELF: the inode was renamed (moved away from its name, or exchanged with another
 * entry: RENAME_EXCHANGE). Unlike a rename over it or an unlink (both IN_ATTRIB: its link
 * count), nothing else on the inode says so, and the name may now name another file: the
 * file is hot (never vouched for; its name looked at within one fast cycle).
 */
const MASK = IN_OPEN | IN_CLOSE_WRITE | IN_CLOSE_NOWRITE | IN_MODIFY | IN_ATTRIB | IN_MOVE_SELF;

/**
 * File systems whose inode events are raised by the kernel for every change, whoever makes
 * it: the changes all pass through this kernel. Not on this list (and so never trusted for a
 * skipped lstat): network and FUSE file systems (a change made by another client or the
 * server raises nothing here), overlayfs (a change to a layer underneath raises nothing on
 * the overlay's inode), anything unknown.
 */
const LOCAL_FS = new Set<number>([
  0xef53, // ext2/3/4
  0x58465342, // xfs
  0x9123683e, // btrfs
  0x01021994, // tmpfs
  0xf2f52010, // f2fs
]);

/** Is the current directory on a file system where an inode watch sees every change (LOCAL_FS)? */
export function localFsHere(): boolean {
  try { return LOCAL_FS.has(statfsSync('.').type); } catch { return false; }
}

/**
 * Every FULL_SWEEP_EVERY-th backstop rescan lstat's every approved file, vouched for or not
 * (the others skip the files the stamp poll vouches for in directories whose entries did not
 * change: guard.ts). So if a watch ever missed a change it should have seen, the change is
 * still found within FULL_SWEEP_EVERY rescans, at most FULL_SWEEP_EVERY × rescan_seconds
 * (5 min at the default 30 s; rescans run at least that often, more after an overflow or a
 * reload). test/guard/full-sweep.test.ts.
 */
export const FULL_SWEEP_EVERY = 10;

/**
 * `quiet`: when the watch was armed, no open file description of the inode was open for
 * writing (the kernel said so: Inotify.writers), so every open since is one this watch saw.
 */
interface Watched {
  rel: string; wd: number; ino: number; opens: number; unsure: boolean; quiet: boolean;
  /** Our own probe's open and close (settle), still to come as events: not counted, no hint. */
  ownOpen: number; ownClose: number;
}

export class OpenWatch {
  private readonly lib: Inotify | null;
  private fd = -1;
  private readonly byWd = new Map<number, Watched>();
  private readonly byRel = new Map<string, Watched>();
  private readonly buf = Buffer.alloc(64 * 1024);
  /** Why watches cannot be added (the limit, no binding); shown by the bench and the log. */
  whyNot = '';
  /**
   * Test seam (test-seams.ts `inodeWatchBlind`, read when the watch is made): every event of
   * that file's inode watch is dropped as it is read, as if the kernel had raised none;
   * nothing else changes (its watch is armed and settled as usual, so it stays quiet).
   * test/guard/full-sweep.test.ts uses it for a change a watch missed, which the rescan's
   * full sweep must still find.
   */
  private readonly blind = watchSeams.inodeWatchBlind;

  constructor(lib: Inotify | null = loadInotify()) {
    this.lib = lib;
    if (!lib) { this.whyNot = 'no inotify binding'; return; }
    this.fd = lib.init();
    if (this.fd < 0) { this.whyNot = `inotify_init1 failed (errno ${lib.errno()})`; this.fd = -1; }
  }

  /** Is `rel` (whose clean stamp names inode `ino`) possibly open or mapped for writing, or not watched? */
  hot(rel: string, ino: number): boolean {
    const w = this.byRel.get(rel);
    return w === undefined || w.ino !== ino || w.opens > 0 || w.unsure;
  }

  /** Is `rel` open now (a live mapping included), or are its counts unknown? Then its stamp alone cannot be trusted. */
  open(rel: string): boolean {
    const w = this.byRel.get(rel);
    return w !== undefined && (w.opens > 0 || w.unsure);
  }

  watched(rel: string, ino: number): boolean {
    const w = this.byRel.get(rel);
    return w !== undefined && w.ino === ino;
  }

  /**
   * Watch the inode that `name` (a plain name, resolved in the current directory: the caller
   * runs this inside withCwdAt) names now, recorded as `rel` at inode `ino`. The caller checks
   * afterwards that the name still names `ino` and calls forget() when it does not.
   */
  watch(rel: string, name: string, ino: number): boolean {
    if (!this.lib || this.fd < 0) return false;
    this.forget(rel);
    const wd = this.lib.addWatch(this.fd, name, MASK);
    if (wd < 0) { this.whyNot = `inotify_add_watch failed (errno ${this.lib.errno()}: ENOSPC is the max_user_watches limit)`; return false; }
    const other = this.byWd.get(wd);
    // The same inode under two approved names (hard links): the first keeps the watch, the second stays hot.
    if (other && other.rel !== rel) return false;
    const w: Watched = { rel, wd, ino, opens: 0, unsure: false, quiet: false, ownOpen: 0, ownClose: 0 };
    this.byWd.set(wd, w);
    this.byRel.set(rel, w);
    return true;
  }

  /**
   * Right after watch() (and the caller's check that `name` still names `ino`): was the inode
   * open for writing by anyone before its watch existed? None: every later open raises
   * IN_OPEN, so the file needs no slow-cycle look (quiet). Some: an open from before the
   * watch (a mapping made while the guard was stopped, or before the new inode was watched)
   * may write unseen, so it counts as open (checked by hash on each fast look) until the path
   * names another inode. Not known: the slow cycle keeps looking at it, as before.
   */
  settle(rel: string, name: string): void {
    const w = this.byRel.get(rel);
    if (!w || !this.lib) return;
    const { writers: now, opened } = this.lib.writers(name, w.ino);
    if (opened) { w.ownOpen++; w.ownClose++; }
    if (now === 'none') w.quiet = true;
    else if (now === 'some') w.unsure = true;
  }

  /** Watched on inode `ino` since before any open for writing still alive, and idle: the slow cycle can skip it. */
  quiet(rel: string, ino: number): boolean {
    const w = this.byRel.get(rel);
    return w !== undefined && w.ino === ino && w.quiet && w.opens === 0 && !w.unsure;
  }

  forget(rel: string): void {
    const w = this.byRel.get(rel);
    if (!w) return;
    this.byRel.delete(rel);
    if (this.byWd.get(w.wd) === w) {
      this.byWd.delete(w.wd);
      this.lib?.removeWatch(this.fd, w.wd);
    }
  }

  /** Read what happened since the last call: `touched` gets every file with an event, `written` true when written or chmod'ed. */
  drain(touched: (rel: string, written: boolean) => void): void {
    if (this.fd < 0) return;
    for (const e of drainInotify(this.fd, this.buf)) {
      if (e.mask & IN_Q_OVERFLOW) {
        // Opens may have been missed: every watched inode counts as possibly open (until replaced).
        for (const w of this.byRel.values()) { w.unsure = true; touched(w.rel, false); }
        continue;
      }
      const w = this.byWd.get(e.wd);
      if (!w) continue;
      if (w.rel === this.blind) continue;
      // Our own probe: one open and one read-only close (whoever's they are, the counts come out the same).
      if (e.mask === IN_OPEN && w.ownOpen > 0) { w.ownOpen--; continue; }
      if (e.mask === IN_CLOSE_NOWRITE && w.ownClose > 0) { w.ownClose--; continue; }
      if (e.mask & IN_OPEN) w.opens++;
      if (e.mask & (IN_CLOSE_WRITE | IN_CLOSE_NOWRITE)) w.opens = Math.max(0, w.opens - 1);
      if (e.mask & IN_IGNORED) { this.byWd.delete(e.wd); if (this.byRel.get(w.rel) === w) this.byRel.delete(w.rel); }
      // IN_MOVE_SELF only makes the file hot (its name looked at on the fast cycle), not a
      // hint: a restore that moves the file aside and back would otherwise hint itself again.
      touched(w.rel, (e.mask & (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE)) !== 0);
    }
  }

  /** Counts for the bench and tests. */
  size(): number { return this.byRel.size; }

  close(): void {
    if (this.fd >= 0) closeInotify(this.fd);
    this.fd = -1;
    this.byWd.clear();
    this.byRel.clear();
  }
}
