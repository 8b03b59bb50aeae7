/**
 * Watch the protected directories with chokidar. Events are hints only: each one makes
 * the guard go and look. Known traps (NOTES.md): a watch can be lost silently when a
 * directory is recreated, and an exhausted inotify limit arrives only as an `error`
 * event. So we watch from the root down (the root itself is never recreated), re-arm a
 * directory whose inode changed, and fall back to polling on ENOSPC/EMFILE.
 *
 * Memory: chokidar keeps two watchers and a Stats object per file it tracks, which is
 * ~25 MB per 10,000 files. With inotify we let chokidar track directories only and take
 * every child event from its raw directory events; a directory watch sees every create,
 * delete, rename, write and chmod made through that directory. A write through a hard
 * link elsewhere is seen only by a watch on the file's inode, so the first
 * FILE_WATCH_LIMIT approved files also get a plain per-file fs.watch (re-armed when the
 * inode changes); beyond that, the backstop rescan finds such a write.
 */
import { watch, type FSWatcher } from 'chokidar';
import { lstatSync, watch as fsWatch, type FSWatcher as NodeWatcher, type Stats } from 'node:fs';
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
  /** Keep per-file inode watches on these approved files (up to the limit). */
  syncFiles(paths: string[]): void;
  /** After a check: re-arm the file's inode watch if the inode changed. */
  refreshFile(rel: string): void;
  close(): Promise<void>;
}

export const FILE_WATCH_LIMIT = 1000;

const STORE_DIRS = /^snapshots(\/(baseline|blobs|secrets))?$/;
const STORE_FILES = /^snapshots\/(baseline\/index|(blobs|secrets)\/[0-9a-f]{64}|alerts\.jsonl|quarantine|pending|journal|control|outbox|notify|history)$/;

function inRecursiveGlob(rel: string, pset: ProtectedSet): boolean {
  return pset.patterns.some((p) => p.glob && p.pattern.includes('**') && (rel === p.base || rel.startsWith(p.base + '/')));
}

/** Is this path (relative to the root) worth an event? Everything else is not even descended into. */
export function relevantPath(rel: string, pset: ProtectedSet): boolean {
  if (rel === '') return true;
  if (pset.isProtectedDir(rel) || pset.kindOf(rel) !== null) return true;
  if (STORE_DIRS.test(rel) || STORE_FILES.test(rel)) return true;
  return inRecursiveGlob(rel, pset);
}

/** With inotify, chokidar tracks directories only; files come through raw events. */
function relevantDir(rel: string, pset: ProtectedSet, stats?: Stats): boolean {
  if (rel === '' || pset.isProtectedDir(rel) || STORE_DIRS.test(rel)) return true;
  return inRecursiveGlob(rel, pset) && !(stats && !stats.isDirectory());
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
    // Polling cannot see inside a file through its directory: then track files too.
    ignored: polling
      ? (abs: string) => !relevantPath(toRel(abs), pset)
      : (abs: string, stats?: Stats) => !relevantDir(toRel(abs), pset, stats),
  });
  w.on('all', (event, abs) => {
    const rel = toRel(abs);
    if (rel.startsWith('..')) return;
    events.onEvent(rel, event === 'addDir' || event === 'unlinkDir');
  });
  // Raw inotify events of the watched directories name the child that changed: create,
  // delete, rename, write, chmod. They also cover what chokidar filters out (a chmod of a
  // file whose atime > mtime).
  w.on('raw', (event: string, path: string, opts: unknown) => {
    const details = opts as { watchedPath?: string } | undefined;
    if ((event !== 'change' && event !== 'rename') || !details?.watchedPath) return;
    const watched = toRel(details.watchedPath);
    if (watched.startsWith('..')) return;
    if (!relevantDir(watched, pset)) {
      if (relevantPath(watched, pset)) events.onEvent(watched, false); // a file's own watcher (polling)
      return;
    }
    if (!path) { events.onEvent(watched, true); return; } // no name: the directory itself, or an overflow
    const rel = watched === '' ? path : `${watched}/${path}`;
    if (relevantPath(rel, pset)) events.onEvent(rel, false);
  });
  w.on('error', (err) => {
    alive = false;
    events.onError(err as Error & { code?: string });
  });
  await new Promise<void>((resolve) => w.once('ready', () => resolve()));

  const armed = new Map<string, number>();
  const inode = (rel: string) => { try { return lstatSync(join(root, rel)).ino; } catch { return -1; } };
  for (const d of pset.dirs) armed.set(d, inode(d));

  const fileWatches = new Map<string, { ino: number; watcher: NodeWatcher }>();
  const unwatchFile = (rel: string) => {
    const fw = fileWatches.get(rel);
    if (fw) { fw.watcher.close(); fileWatches.delete(rel); }
  };
  const refreshFile = (rel: string) => {
    if (polling || !alive) return;
    const known = fileWatches.get(rel);
    if (!known && fileWatches.size >= FILE_WATCH_LIMIT) return;
    let st: Stats | null = null;
    try { st = lstatSync(join(root, rel)); } catch { st = null; }
    if (!st || !st.isFile()) { if (known) unwatchFile(rel); return; }
    if (known?.ino === st.ino) return;
    unwatchFile(rel);
    try {
      const watcher = fsWatch(join(root, rel), { persistent: false }, () => events.onEvent(rel, false));
      watcher.on('error', () => unwatchFile(rel));
      fileWatches.set(rel, { ino: st.ino, watcher });
    } catch { /* vanished or limit: the directory watch and the rescan remain */ }
  };

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
    syncFiles(paths) {
      const want = new Set(paths.slice(0, FILE_WATCH_LIMIT));
      for (const rel of [...fileWatches.keys()]) if (!want.has(rel)) unwatchFile(rel);
      for (const rel of want) refreshFile(rel);
    },
    refreshFile(rel) {
      if (fileWatches.has(rel) || fileWatches.size < FILE_WATCH_LIMIT) refreshFile(rel);
    },
    async close() {
      alive = false;
      for (const rel of [...fileWatches.keys()]) unwatchFile(rel);
      await w.close();
    },
  };
}
