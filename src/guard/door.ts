/**
 * The one door into the guard (docs/ARCHITECTURE.md, "The pipeline"): every detector turns
 * what it saw into a hint for a path on the hint queue (hints.ts), or asks for a sweep. The
 * guard receives its detectors at construction, built on this door, and asks them only what
 * a sweep needs to know (which files the inode watches vouch for) and what a repair changes
 * (a directory to watch again).
 */
import type { WardenConfig } from '../config/warden-config.js';
import type { ProtectedSet } from '../config/protected-set.js';
import type { AlertReason } from '../store/alert-types.js';

/** What a detector is handed: where its hints go, and what it may read of the guard. */
export interface Door {
  /** Something at `rel` (relative to the root) may have changed: the hint queue (urgent paths at once). */
  hint(rel: string, isDirEvent: boolean): void;
  /** The backstop rescan: every protected path looked at (a watcher that broke, the rescan timer). */
  sweep(): void;
  /** An alert that reverts nothing (a degraded watcher). */
  flag(reason: AlertReason, path: string, detail: string): void;
  /** Does the root path still name the directory the guard holds? (lstat only; a hint on '' puts it right.) */
  rootPathHolds(): boolean;
  /** The root directory held now (it changes after a root swap is put right). */
  rootFd(): number;
  /** The protected set and the settings now (a sanctioned change or SIGHUP swaps them). */
  pset(): ProtectedSet;
  config(): WardenConfig;
  /** The approved files: the same array while the baseline is unchanged, a new one when it changed. */
  approvedPaths(): readonly string[];
  /** The stat stamp recorded when `rel` was last verified clean by hash. */
  cleanStamp(rel: string): string | undefined;
}

/** The inode watches (stamp-poll.ts): the one detector a sweep asks before it skips a file. */
export interface InodeWatches {
  /** A clean stamp changed (null: all forgotten): watch the new inode. */
  cleanChanged(rel: string | null): void;
  /** Nothing can have changed `rel` unseen (stamp-poll.ts `vouches`). */
  vouches(rel: string): boolean;
  /** Read the watches' events now (before a rescan decides what it may skip). */
  drainNow(): void;
}

/** The directory watches (watch-supervisor.ts): told when a protected directory was made anew. */
export interface DirWatches {
  /** Watch the directories now at their paths that are not the ones watched; returns them. */
  rearmChanged(): string[];
}

/** A guard's detectors. Absent: none of that kind (an in-process test calls the entry points itself). */
export interface Detectors {
  inodes?: InodeWatches;
  dirs?: DirWatches;
}
