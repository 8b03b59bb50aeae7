/**
 * Watch the protected directories with chokidar. Events are hints only: each one makes
 * the guard go and look. Known traps (NOTES.md): a watch can be lost silently when a
 * directory is recreated, and an exhausted inotify limit arrives only as an `error`
 * event. So we watch from the root down (the root itself is never recreated), re-arm a
 * directory whose inode changed, and fall back to polling on ENOSPC/EMFILE.
 *
 * Cost: with inotify we watch directories with a plain fs.watch each (one inotify watch,
 * no listing, no per-entry state): a directory watch sees every create, delete, rename,
 * write and chmod made through it, naming the child. chokidar instead lists a watched
 * directory at start and again on changes, so a million names that match nothing cost it
 * gigabytes and a core; here they cost one name match per event. A write through a hard
 * link elsewhere is seen only by a watch on the file's inode, so the first
 * FILE_WATCH_LIMIT approved files also get a plain per-file fs.watch (re-armed when the
 * inode changes); beyond that, the backstop rescan finds such a write. Polling (inotify
 * exhausted) uses chokidar, which must track files to see inside them.
 *
 * Errors: an exhausted inotify shows as fs.watch throwing ENOSPC/EMFILE while arming, or as
 * an `error` event later. Both go to onError — also while arming, before the caller holds
 * the handle (watch-supervisor.ts copes with that).
 */
import { hasRawBytes, nameFromBytes, nameToBytes } from '../common/names.js';
import type { FSWatcher } from 'chokidar';
import { lstatSync, opendirSync, readdirSync, watch as fsWatch, type Dir, type FSWatcher as NodeWatcher, type Stats } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { errnoCode } from '../common/errors.js';
import type { ProtectedSet } from '../config/protected-set.js';
import { watchSeams } from './test-seams.js';

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


/** Is this path (relative to the root) worth an event? Everything else is not even descended into. */
export function relevantPath(rel: string, pset: ProtectedSet): boolean {
  if (rel === '') return true;
  if (pset.isProtectedDir(rel) || pset.kindOf(rel) !== null) return true;
  if (STORE_DIRS.test(rel) || STORE_FILES.test(rel)) return true;
  return pset.inDeepGlob(rel);
}

export async function startWatcher(root: string, pset: ProtectedSet, events: WatchEvents, polling: boolean): Promise<WatchHandle> {
  return polling ? startPolling(root, pset, events) : startInotify(root, pset, events);
}

/** Test seam (WARDEN_TEST_WATCH_FAULT=CODE[:early|:flood]): the first inotify watcher of the process fails. */
let faultUsed = false;
function takeFault(): { code: string; when: string } | null {
  const v = process.env.WARDEN_TEST_WATCH_FAULT;
  if (!v || faultUsed) return null;
  faultUsed = true;
  const [code = 'ENOSPC', when = 'late'] = v.split(':');
  return { code, when };
}

/**
 * Test seam (test-seams.ts `dirWatchBlind`, a path below the root): every event of that
 * directory's watch is dropped, as if the kernel had raised none (test/guard/full-sweep.test.ts:
 * a name swapped there, which only the rescan's directory check then finds).
 */
const blindDir = (): string | null => watchSeams.dirWatchBlind;

const MAX_DIR_WATCHES = 10_000;

/** Directories to watch: the root, the protected ones, the store's, and every directory below a `**` glob base. */
function dirsToWatch(root: string, pset: ProtectedSet): string[] {
  const out = new Set<string>(['', ...pset.dirs, 'snapshots', 'snapshots/baseline', 'snapshots/blobs', 'snapshots/secrets']);
  const walk = (rel: string, depth: number) => {
    if (depth === 0 || out.size >= MAX_DIR_WATCHES) return;
    let names: string[];
    try { names = readdirSync(nameToBytes(join(root, rel)), { withFileTypes: true, encoding: 'buffer' }).filter((e) => e.isDirectory()).map((e) => nameFromBytes(e.name)); } catch { return; }
    for (const n of names) { const r = rel === '' ? n : `${rel}/${n}`; out.add(r); walk(r, depth - 1); }
  };
  for (const p of pset.patterns) if (p.deep) walk(p.base, 8);
  return [...out];
}

async function startInotify(root: string, pset: ProtectedSet, events: WatchEvents): Promise<WatchHandle> {
  let alive = true;
  const fault = takeFault();
  const fail = (err: Error & { code?: string }) => {
    if (!alive) return;
    alive = false;
    events.onError(err);
  };
  const inode = (rel: string) => { try { return lstatSync(nameToBytes(join(root, rel))).ino; } catch { return -1; } };
  const dirWatches = new Map<string, { ino: number; watcher: NodeWatcher }>();
  const unwatchDir = (rel: string) => {
    const dw = dirWatches.get(rel);
    if (dw) { dw.watcher.close(); dirWatches.delete(rel); }
  };
  const onDirEvent = (watched: string, name: string | null) => {
    if (!alive) return;
    if (watched === blindDir()) return;
    // No name: the directory itself or an overflow. A name equal to the directory's own
    // (chmod of the directory itself) is a hint on the directory too.
    if (name === null || name === basename(join(root, watched)) || watched === '' && name === basename(root)) events.onEvent(watched, true);
    if (name === null) return;
    const rel = watched === '' ? name : `${watched}/${name}`;
    if (relevantPath(rel, pset)) events.onEvent(rel, false);
    // A new directory below a `**` glob base gets its own watch.
    if (pset.inDeepGlob(rel) && !dirWatches.has(rel) && dirWatches.size < MAX_DIR_WATCHES) {
      try { if (lstatSync(nameToBytes(join(root, rel))).isDirectory()) watchDir(rel); } catch { /* gone again */ }
    }
  };
  const watchDir = (rel: string): void => {
    const ino = inode(rel);
    if (ino === -1) return;
    try {
      if (fault?.when === 'early') throw Object.assign(new Error(`simulated ${fault.code}`), { code: fault.code });
      // Names are bytes (SPEC §4): the event's name undecoded, carried losslessly (common/names.ts).
      const watcher = fsWatch(nameToBytes(join(root, rel)), { persistent: false, encoding: 'buffer' }, (_type, name) => onDirEvent(rel, name === null ? null : nameFromBytes(name)));
      watcher.on('error', (err) => {
        unwatchDir(rel);
        const code = errnoCode(err);
        if (code === 'ENOSPC' || code === 'EMFILE' || code === 'ENFILE') fail(err as Error & { code?: string });
        else events.onEvent(rel, true);
      });
      dirWatches.set(rel, { ino, watcher });
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES' || code === 'ELOOP') return; // the guard repairs it, then re-arms
      fail(err as Error & { code?: string });
    }
  };
  for (const d of dirsToWatch(root, pset)) { if (!alive) break; watchDir(d); }
  // SPEC §4: the root is a path. Its parent is watched for the root's own name (a rename of
  // the root, or something put in its place); the guard then checks what the path names.
  let parentWatch: NodeWatcher | null = null;
  try {
    parentWatch = fsWatch(dirname(root), { persistent: false }, (_type, name) => {
      if (alive && (name === null || String(name) === basename(root))) events.onEvent('', true);
    });
    parentWatch.on('error', () => { parentWatch?.close(); parentWatch = null; events.onEvent('', true); });
  } catch { /* the root's parent cannot be watched: the guard's 100 ms root check remains */ }

  const fileWatches = new Map<string, { ino: number; watcher: NodeWatcher }>();
  const unwatchFile = (rel: string) => {
    const fw = fileWatches.get(rel);
    if (fw) { fw.watcher.close(); fileWatches.delete(rel); }
  };
  const refreshFile = (rel: string) => {
    if (!alive) return;
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

  if (fault && fault.when !== 'early') {
    const err = () => Object.assign(new Error(`simulated ${fault.code}`), { code: fault.code });
    if (fault.when === 'flood') {
      // 20,000 errors in bursts, as a full descriptor table produces them: each must not become an alert or a line.
      let left = 20_000;
      const burst = () => { for (let i = 0; i < 1000 && left > 0; i++, left--) events.onError(err()); if (left > 0) setImmediate(burst); };
      setTimeout(() => { alive = false; burst(); }, 50);
    } else {
      setTimeout(() => fail(err()), 50);
    }
  }

  return {
    polling: false,
    alive: () => alive,
    rearmChanged() {
      const changed: string[] = [];
      for (const d of dirsToWatch(root, pset)) {
        const ino = inode(d);
        const known = dirWatches.get(d);
        if (ino === (known?.ino ?? -1)) continue;
        unwatchDir(d);
        if (ino !== -1 && alive) { watchDir(d); changed.push(d); }
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
      parentWatch?.close();
      for (const rel of [...fileWatches.keys()]) unwatchFile(rel);
      for (const rel of [...dirWatches.keys()]) unwatchDir(rel);
    },
  };
}

/** The names in `dir` that are not UTF-8 (common/names.ts), streamed, at most `max` of them. */
function rawNamesIn(dir: string, max = 1000): string[] {
  const out: string[] = [];
  let d: Dir | null = null;
  try {
    d = opendirSync(dir, { bufferSize: 256, encoding: 'buffer' as BufferEncoding });
    for (let ent = d.readSync(); ent !== null && out.length < max; ent = d.readSync()) {
      const name = nameFromBytes(ent.name as unknown as Buffer);
      if (hasRawBytes(name)) out.push(name);
    }
  } catch { /* gone or unreadable: the rescan looks again */ }
  finally { try { d?.closeSync(); } catch { /* closed */ } }
  return out;
}

/** Polling (inotify exhausted): chokidar stats what it tracks; it must track the protected files themselves. */
async function startPolling(root: string, pset: ProtectedSet, events: WatchEvents): Promise<WatchHandle> {
  const toRel = (abs: string) => relative(root, abs).split(sep).join('/');
  let alive = true;
  // chokidar loads only when polling (inotify exhausted): the usual guard never needs it.
  const { watch } = await import('chokidar');
  const w: FSWatcher = watch(root, {
    ignoreInitial: true,
    followSymlinks: false,
    atomic: false, // would hold unlink events ~100 ms
    awaitWriteFinish: false, // would add ~2 s
    ignorePermissionErrors: true,
    usePolling: true,
    interval: 100,
    binaryInterval: 100,
    ignored: (abs: string) => !relevantPath(toRel(abs), pset),
  });
  w.on('all', (event, abs) => {
    const rel = toRel(abs);
    if (rel.startsWith('..')) return;
    events.onEvent(rel, event === 'addDir' || event === 'unlinkDir');
  });
  // Names are bytes (SPEC §4). chokidar lists names as UTF-8 strings: a name that is not
  // UTF-8 comes back as U+FFFD, its stat fails, and chokidar emits nothing for it (seen with
  // chokidar 5). Its only trace is the raw change of the polled directory: a listed
  // directory that changed is listed again here, as bytes, and each such name is a hint.
  w.on('raw', (_ev, abs) => {
    if (!alive || typeof abs !== 'string') return;
    const rel = toRel(abs);
    if (rel.startsWith('..') || !pset.listedDirs.includes(rel)) return;
    for (const name of rawNamesIn(abs)) events.onEvent(rel === '' ? name : `${rel}/${name}`, false);
  });
  w.on('error', (err) => {
    alive = false;
    events.onError(err as Error & { code?: string });
  });
  await new Promise<void>((resolve) => w.once('ready', () => resolve()));
  const armed = new Map<string, number>();
  const inode = (rel: string) => { try { return lstatSync(join(root, rel)).ino; } catch { return -1; } };
  for (const d of pset.dirs) armed.set(d, inode(d));
  return {
    polling: true,
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
    syncFiles() { /* chokidar polls the files themselves */ },
    refreshFile() { /* idem */ },
    async close() { alive = false; await w.close(); },
  };
}
