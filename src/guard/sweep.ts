/**
 * The sweep: every protected path looked at, a directory at a time (the startup pass, the
 * backstop rescan, and the whole tree after the root path was put right). Read-only but for
 * what it hands back to the guard (act, check) for the revert path (docs/ARCHITECTURE.md,
 * "The pipeline"). Which files the ordinary rescan may skip is decided here: those the stamp
 * poll vouches for in a directory found unchanged, and those unchanged since verified clean.
 */
import { fstatSync } from 'node:fs';
import { AT_FDCWD, withCwdAt } from '../fsx/beneath.js';
import type { ProtectedSet } from '../config/protected-set.js';
import type { BaselineState } from '../store/baseline-state.js';
import { DirCache, candidatePaths, dirOf, inspectFileAt, type Finding } from './inspect.js';
import { FULL_SWEEP_EVERY, localFsHere } from './open-watch.js';

/** A directory ctime this recent (ms) is not trusted to show a later change (dirUnchanged). */
const DIR_RACY_MS = 2_000;

export type SweepCause = 'startup' | 'rescan' | 'root';

/** What the sweep needs of the guard. */
export interface SweepHost {
  readonly rootFd: number;
  readonly state: BaselineState;
  readonly pset: ProtectedSet;
  readonly maxBytes: number;
  /** Work on paths that are not approved files, run after the waiting reverts (null: inline). */
  readonly defer: ((rel: string) => void) | null;
  vouched(rel: string): boolean;
  safely<T>(what: string, fn: () => T): T | undefined;
  fixDirs(whileStopped: boolean): number;
  unchangedSinceClean(rel: string, fd: number): boolean;
  markClean(rel: string, dirFd?: number, stamp?: string): void;
  countCheck(): void;
  stillAt(fd: number, dir: string): boolean;
  act(f: Finding, whileStopped: boolean, dirFd?: number, movedUp?: boolean): true | 'moved';
  check(rel: string, whileStopped: boolean, dirs?: DirCache, again?: boolean): boolean;
}

export class Sweeper {
  /** Rescans since start: every FULL_SWEEP_EVERY-th one sweeps every file. */
  rescans = 0;
  /** Files the last rescan skipped because the stamp poll vouched for them (for the bench and tests). */
  lastRescanVouched = 0;
  /**
   * Per directory (its path below the root): device, inode and ctime of the directory as the
   * last rescan found it before looking at its files (dirUnchanged). Only a directory found
   * the same by the next rescan may have files skipped as vouched.
   */
  private readonly dirStamps = new Map<string, string>();

  constructor(private readonly g: SweepHost) {}

  sweep(cause: SweepCause, full: boolean): number {
    const g = this.g;
    let n = g.safely('repairing directories', () => g.fixDirs(cause === 'startup')) ?? 0;
    const dirs = new DirCache(g.rootFd);
    // Per directory, decided once per sweep (a directory's files can come in more than one group).
    const dirSame = new Map<string, boolean>();
    try {
      const paths = g.safely('listing protected paths', () => candidatePaths(g.rootFd, g.state, g.pset)) ?? [];
      // Sorted, so each directory's files come together: one group per directory.
      for (let i = 0; i < paths.length;) {
        const dir = dirOf(paths[i] as string);
        let j = i + 1;
        while (j < paths.length && dirOf(paths[j] as string) === dir) j++;
        n += this.group(paths.slice(i, j), dir, cause, full, dirs, dirSame);
        i = j;
      }
    } finally {
      dirs.close();
    }
    return n;
  }

  /**
   * The files of one directory. They are looked at from inside it (withCwdAt: a plain name
   * per lstat/open instead of a walk through /proc/self/fd for each), read-only; what needs
   * putting right is acted on afterwards, through the descriptor as always.
   */
  private group(group: readonly string[], dir: string, cause: SweepCause, full: boolean, dirs: DirCache, dirSame: Map<string, boolean>): number {
    const g = this.g;
    const whileStopped = cause === 'startup';
    let n = 0;
    const todo: string[] = [];
    for (const rel of group) {
      // New files are worked off after waiting reverts (a storm of them must not stall a revert).
      if (cause === 'rescan' && g.defer && !g.state.entry(rel)) { g.defer(rel); continue; }
      todo.push(rel);
    }
    const fd = todo.length ? dirs.get(dir) : null;
    const found: Finding[] = [];
    // The ordinary rescan trusts the inode watches (the stamp poll's) only on a local file
    // system, where every change to an inode raises its events, whoever makes it, by any path,
    // and only in a directory whose entries did not change since the previous rescan: an
    // inode watch says nothing about which inode the name names (a file renamed away and
    // another put in its place, a directory swapped). Every FULL_SWEEP_EVERY-th rescan trusts
    // nothing. The directory is looked at (and recorded) every rescan, before its files.
    let same = false;
    // The startup pass looks at every file; it records the directories too, so that the first
    // rescan may already trust the watches (it would otherwise lstat every file once more).
    if (cause !== 'root' && fd !== null) {
      const known = dirSame.get(dir);
      same = known ?? (g.safely(`looking at ${dir || '.'}`, () => this.dirUnchanged(dir, fd)) ?? false);
      dirSame.set(dir, same);
    }
    const trust = cause === 'rescan' && !full && same && this.rescans % FULL_SWEEP_EVERY !== 0;
    const looked = fd === null ? null : withCwdAt(fd, () => {
      const watchSeesAll = trust && localFsHere();
      for (const rel of todo) {
        g.safely(`checking ${rel}`, () => {
          if (watchSeesAll && g.vouched(rel)) { this.lastRescanVouched++; return; }
          if (!full && g.unchangedSinceClean(rel, AT_FDCWD)) return;
          g.countCheck();
          let lastStamp: string | undefined;
          const f = inspectFileAt(AT_FDCWD, g.state, g.pset, rel, g.maxBytes, (o) => { lastStamp = o.stamp; });
          if (f) found.push(f); else g.markClean(rel, AT_FDCWD, lastStamp);
        });
      }
    });
    if (looked && fd !== null) {
      for (let k = 0; k < found.length; k++) {
        const f = found[k] as Finding;
        // The held descriptor follows the directory wherever it goes: one moved out of the
        // root meanwhile must not receive our writes. Not there any more: forget it and check
        // the rest afresh from the root (which repairs the directory first).
        // The check before the act, and the act's own just before its rename (the temp
        // file's fsync can take long on a loaded machine).
        let moved = !g.stillAt(fd, dir);
        if (!moved) {
          const r = g.safely(`checking ${f.path}`, () => g.act(f, whileStopped, fd, true));
          if (r === 'moved') moved = true; else if (r) n++;
        }
        if (moved) {
          dirs.forget(dir);
          for (const rest of found.slice(k)) if (g.safely(`checking ${rest.path}`, () => g.check(rest.path, whileStopped, dirs))) n++;
          return n;
        }
      }
      return n;
    }
    // The directory is broken (check repairs it first) or cannot be entered: one check per file.
    for (const rel of todo) {
      if (g.safely(`checking ${rel}`, () => (!full && fd !== null && g.unchangedSinceClean(rel, fd)) ? false : g.check(rel, whileStopped, dirs))) n++;
    }
    return n;
  }

  /**
   * Has the directory `fd` holds (at `dir`) had no entry created, removed, renamed or
   * exchanged, and has no other directory been put at its path, since the previous rescan
   * looked at it? Every such change moves the directory's ctime (which no user can set), and
   * a directory put at the path is another inode. Recorded now for the next rescan; a ctime
   * within DIR_RACY_MS of now is not recorded (a change within the same coarse clock tick
   * would leave it where it is), so the next rescan looks at every file there again.
   */
  private dirUnchanged(dir: string, fd: number): boolean {
    const st = fstatSync(fd, { bigint: true });
    const stamp = `${st.dev}:${st.ino}:${st.ctimeNs}`;
    const same = this.dirStamps.get(dir) === stamp;
    if (Number(st.ctimeNs / 1_000_000n) < Date.now() - DIR_RACY_MS) this.dirStamps.set(dir, stamp);
    else this.dirStamps.delete(dir);
    return same;
  }
}
