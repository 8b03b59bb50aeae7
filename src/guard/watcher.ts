/**
 * Watch the protected directories with chokidar. Events are hints only: each one makes
 * the guard go and look. Known traps (NOTES.md): a watch can be lost silently when a
 * directory is recreated, and an exhausted inotify limit arrives only as an `error`
 * event. So we watch from the root down (the root itself is never recreated), re-arm a
 * directory whose inode changed, and fall back to polling on ENOSPC/EMFILE.
 */
import { watch, type FSWatcher } from 'chokidar';
import { lstatSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { ProtectedSet } from '../config/protected-set.js';

export interface WatchEvents {
  onEvent(rel: string, isDirEvent: boolean): void;
  /** The watcher broke (error event); the caller rescans and may switch to polling. */
  onError(err: Error & { code?: string }): void;
}

export interface WatchHandle {
  readonly polling: boolean;
  /** False after an error until re-armed. */
  alive(): boolean;
  /** Re-add directories whose inode changed since they were armed. */
  rearmChanged(): string[];
  close(): Promise<void>;
}

const STORE_WATCHED = /^snapshots(\/(baseline(\/index)?|blobs(\/[0-9a-f]{64})?|secrets(\/[0-9a-f]{64})?))?$/;

/** Is this path (relative to the root) worth an event? Everything else is not even descended into. */
export function relevantPath(rel: string, pset: ProtectedSet): boolean {
  if (rel === '') return true;
  if (pset.isProtectedDir(rel) || pset.kindOf(rel) !== null) return true;
  if (STORE_WATCHED.test(rel)) return true;
  // Inside a recursive glob's base, descend into subdirectories.
  return pset.patterns.some((p) => p.glob && p.pattern.includes('**') && (rel === p.base || rel.startsWith(p.base + '/')));
}

export async function startWatcher(root: string, pset: ProtectedSet, events: WatchEvents, polling: boolean): Promise<WatchHandle> {
  const toRel = (abs: string) => relative(root, abs).split(sep).join('/');
  let alive = true;
  const w: FSWatcher = watch(root, {
    ignoreInitial: true,
    followSymlinks: false,
    atomic: false, // would hold unlink events ~100 ms
    awaitWriteFinish: false, // would add ~2 s
    ignorePermissionErrors: true,
    usePolling: polling,
    interval: 100,
    binaryInterval: 100,
    ignored: (abs: string) => !relevantPath(toRel(abs), pset),
  });
  w.on('all', (event, abs) => {
    const rel = toRel(abs);
    if (rel.startsWith('..')) return;
    events.onEvent(rel, event === 'addDir' || event === 'unlinkDir');
  });
  // Raw inotify events as extra hints: chokidar drops a 'change' when only metadata changed
  // and atime > mtime (a chmod of a file we just read), which would leave chmod to the rescan.
  w.on('raw', (event: string, path: string, opts: unknown) => {
    const details = opts as { watchedPath?: string } | undefined;
    if ((event !== 'change' && event !== 'rename') || !details?.watchedPath) return;
    const watched = toRel(details.watchedPath);
    const rel = pset.isProtectedDir(watched) || watched === '' ? (watched === '' ? path : `${watched}/${path}`) : watched;
    if (!rel.startsWith('..') && relevantPath(rel, pset)) events.onEvent(rel, false);
  });
  w.on('error', (err) => {
    alive = false;
    events.onError(err as Error & { code?: string });
  });
  await new Promise<void>((resolve) => w.once('ready', () => resolve()));

  const armed = new Map<string, number>();
  const inode = (rel: string) => { try { return lstatSync(join(root, rel)).ino; } catch { return -1; } };
  for (const d of pset.dirs) armed.set(d, inode(d));

  // Test seam: simulate the inotify limit being hit after the watcher is armed.
  const fault = process.env.WARDEN_TEST_WATCH_FAULT;
  if (fault && !polling) setTimeout(() => w.emit('error', Object.assign(new Error(`simulated ${fault}`), { code: fault })), 50);

  return {
    polling,
    alive: () => alive,
    rearmChanged() {
      const changed: string[] = [];
      for (const d of pset.dirs) {
        const ino = inode(d);
        if (ino !== armed.get(d)) {
          armed.set(d, ino);
          if (ino !== -1) { w.unwatch(join(root, d)); w.add(join(root, d)); changed.push(d); }
        }
      }
      return changed;
    },
    async close() { alive = false; await w.close(); },
  };
}
