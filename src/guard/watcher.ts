/**
 * Watch the protected directories (docs/ARCHITECTURE.md, "Watching, and what it costs").
 * Events are hints only: each one makes the guard go and look.
 *
 * With inotify, each watched directory (the root, the protected ones, the store's, and every
 * directory below a `**` glob base, to any depth within the bounds of inspect.ts) has one
 * plain fs.watch: no per-entry state. A directory watch sees every create, delete, rename,
 * write and chmod made through it, naming the child. A write through a hard link elsewhere
 * passes through no watched directory: the stamp poll's inode watches see it
 * (open-watch.ts), for every approved file; this file keeps no per-file watch.
 *
 * Every watch follows the object now at its path. A watch is on an inode, not a path: a
 * directory deleted and made again (or exchanged, or put back by the guard's repair) leaves
 * the old watch on the old inode, and the kernel often hands the freed inode number to the
 * new directory at once, so a directory is known by device, inode and birth time. Whenever
 * an event names a directory that should be watched (a parent's event naming the child, the
 * directory's own move or deletion), the directory at the path now is armed if it is not the
 * one watched, then listed: its names made before the watch existed become hints (arm first,
 * then list, so nothing falls in between), and its subdirectories that should be watched are
 * armed the same way. So a tree made with `mkdir -p` and filled at once is seen whole.
 * Polling (inotify exhausted) uses chokidar, which must track files to see inside them.
 *
 * Errors: an exhausted inotify shows as fs.watch throwing ENOSPC/EMFILE while arming, or as
 * an `error` event later. Both go to onError — also while arming, before the caller holds
 * the handle (watch-supervisor.ts copes with that). A tree past the bounds (inspect.ts
 * MAX_DEPTH, MAX_REL_BYTES; MAX_DIR_WATCHES here) goes to onLimit, once per watcher.
 */
import { hasRawBytes, nameFromBytes, nameToBytes } from '../common/names.js';
import type { FSWatcher } from 'chokidar';
import { closeSync, constants as fsc, existsSync, fstatSync, lstatSync, openSync, opendirSync, watch as fsWatch, type Dir, type FSWatcher as NodeWatcher, type Stats } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { errnoCode } from '../common/errors.js';
import type { ProtectedSet } from '../config/protected-set.js';
import { MAX_DEPTH, MAX_REL_BYTES, eachName, withinDepth } from './inspect.js';
import { watchSeams } from './test-seams.js';

export interface WatchEvents {
  onEvent(rel: string, isDirEvent: boolean): void;
  /** The watcher broke (error event); the caller rescans and may switch to polling. */
  onError(err: Error & { code?: string }): void;
  /** A tree reached a bound (depth, path length, the watch limit): what is past it is not watched. Once per watcher. */
  onLimit?(path: string, detail: string): void;
}

export interface WatchHandle {
  readonly polling: boolean;
  /** False after an error until re-armed. */
  alive(): boolean;
  /** Re-arm directories now at their paths that are not the ones watched (and watch new ones); returns them. */
  rearmChanged(): string[];
  close(): Promise<void>;
}

/** Directory watches at most (inotify watches are a per-user kernel resource). */
export const MAX_DIR_WATCHES = 10_000;

const STORE_DIRS = /^snapshots(\/(baseline|blobs|secrets))?$/;
const STORE_FILES = /^snapshots\/(baseline\/index|(blobs|secrets)\/[0-9a-f]{64}|alerts\.jsonl|quarantine|pending|journal|control|outbox|notify|history)$/;
const FIXED_STORE_DIRS = ['snapshots', 'snapshots/baseline', 'snapshots/blobs', 'snapshots/secrets'];


/** Is this path (relative to the root) worth an event? Everything else is not even descended into. */
export function relevantPath(rel: string, pset: ProtectedSet): boolean {
  if (rel === '') return true;
  if (pset.isProtectedDir(rel) || pset.kindOf(rel) !== null) return true;
  if (STORE_DIRS.test(rel) || STORE_FILES.test(rel)) return true;
  return pset.inDeepGlob(rel);
}

/** Is `rel` a directory the inotify watcher keeps a watch on (when one is there)? Pure. */
export function wantsWatch(rel: string, pset: ProtectedSet): boolean {
  if (rel === '' || STORE_DIRS.test(rel)) return true;
  // The store's other directories (quarantine, control, …) are never watched, whatever a glob says.
  if (rel === 'snapshots' || rel.startsWith('snapshots/')) return false;
  return pset.isProtectedDir(rel) || pset.inDeepGlob(rel);
}

/** Which directory is at a path: device, inode and birth time (an inode number alone is handed out again at once). */
export function dirIdentity(st: Pick<Stats, 'dev' | 'ino' | 'birthtimeMs'>): string {
  return `${st.dev}:${st.ino}:${st.birthtimeMs}`;
}

export async function startWatcher(root: string, pset: ProtectedSet, events: WatchEvents, polling: boolean): Promise<WatchHandle> {
  return polling ? startPolling(root, pset, events) : startInotify(root, pset, events);
}

/** Test seam (test-seams.ts `watchFault`, CODE[:early|:flood]): the next inotify watcher fails; taken once. */
function takeFault(): { code: string; when: string } | null {
  const v = watchSeams.watchFault;
  if (!v) return null;
  watchSeams.watchFault = null;
  const [code = 'ENOSPC', when = 'late'] = v.split(':');
  return { code, when };
}

/**
 * Test seam (test-seams.ts `dirWatchBlind`, a path below the root): every event of that
 * directory's watch is dropped, as if the kernel had raised none (test/guard/full-sweep.test.ts:
 * a name swapped there, which only the rescan's directory check then finds).
 */
const blindDir = (): string | null => watchSeams.dirWatchBlind;

/** `self`: the name the kernel gives the directory's own events (the last part of the path first watched for its inode). */
interface DirWatch { id: string; watcher: NodeWatcher; self: string }

const PROC_FD = existsSync('/proc/self/fd');

/**
 * A watch on the directory at `path` that is `id` (dirIdentity), or null when another object
 * is there now. inotify follows a link at the path it is given, so a watch armed by path
 * could land on whatever a link swapped in after the lstat names (a directory exchanged with
 * a link, renameat2 RENAME_EXCHANGE, between the lstat and the watch): that directory's
 * events would be read as this one's, and this one would go unwatched until the rescan.
 * So the directory is opened without following a link, checked to be `id`, and watched
 * through its descriptor (/proc/self/fd/N names the object opened, whatever the path names
 * now). The kernel reports the directory's own events (moved, deleted) under the last part
 * of the path first watched for its inode (libuv keeps one path per inode: `self` of the
 * watch this one replaces on the same inode, else the descriptor's number): those are
 * handed on as the directory's own (name null), and as a name too, in case a name in it
 * is that one.
 */
function watchDirAt(path: Buffer, id: string, inherited: string | undefined, on: (type: string, name: string | null) => void): { watcher: NodeWatcher; self: string } | null {
  if (!PROC_FD) {
    const w = fsWatch(path, { persistent: false, encoding: 'buffer' }, (type, name) => on(type, name === null ? null : nameFromBytes(name)));
    let st: Stats | undefined;
    try { st = lstatSync(path, { throwIfNoEntry: false }); } catch { st = undefined; }
    if (st?.isDirectory() && dirIdentity(st) === id) return { watcher: w, self: inherited ?? basename(path.toString()) };
    w.close();
    return null;
  }
  const fd = openSync(path, fsc.O_RDONLY | fsc.O_DIRECTORY | fsc.O_NOFOLLOW);
  try {
    if (dirIdentity(fstatSync(fd)) !== id) return null;
    const self = inherited ?? String(fd);
    const watcher = fsWatch(`/proc/self/fd/${fd}`, { persistent: false, encoding: 'buffer' }, (type, name) => {
      const n = name === null ? null : nameFromBytes(name);
      if (n === self) on(type, null);
      on(type, n);
    });
    return { watcher, self };
  } finally {
    closeSync(fd);
  }
}

async function startInotify(root: string, pset: ProtectedSet, events: WatchEvents): Promise<WatchHandle> {
  let alive = true;
  const fault = takeFault();
  const fail = (err: Error & { code?: string }) => {
    if (!alive) return;
    alive = false;
    events.onError(err);
  };
  let limited = false;
  const limit = (rel: string, detail: string) => {
    if (limited || !alive) return;
    limited = true;
    events.onLimit?.(rel === '' ? '.' : rel, detail);
  };
  // The watches are armed by absolute path: past PATH_MAX (4,096 bytes with its NUL) a
  // directory cannot be named, by warden or by any path-based reader; said, not skipped silently.
  const rootBytes = Buffer.byteLength(root);
  const nameable = (rel: string) => withinDepth(rel) && rootBytes + 1 + Buffer.byteLength(rel) < 4096;
  const tooDeep = (rel: string) => `a path longer than ${MAX_REL_BYTES} bytes below the root (no path names what lies beyond; at most ${MAX_DEPTH} levels): ${rel} is watched and checked, what is below it is not`;
  const abs = (rel: string) => nameToBytes(rel === '' ? root : join(root, rel));
  const dirWatches = new Map<string, DirWatch>();
  const unwatchDir = (rel: string) => {
    const dw = dirWatches.get(rel);
    if (dw) { dw.watcher.close(); dirWatches.delete(rel); }
  };
  /** Drop the watches of `rel` and of everything below it (the directory is gone from the path). */
  const unwatchTree = (rel: string) => {
    unwatchDir(rel);
    const prefix = rel === '' ? '' : `${rel}/`;
    for (const k of [...dirWatches.keys()]) if (k.startsWith(prefix) && k !== '') unwatchDir(k);
  };

  /**
   * Make sure the directory at `rel` is the one watched (and, below a `**` base, every
   * directory below it). A directory armed anew is listed after its watch exists: with
   * `hint`, every relevant name in it becomes a hint (what was made before the watch).
   * Iterative: a queue of directories, never a recursion per level. Returns the armed ones.
   */
  const ensure = (first: string, hint: boolean, descendAll = false, force = false): string[] => {
    const armed: string[] = [];
    const todo = [first];
    while (todo.length && alive) {
      const rel = todo.pop() as string;
      let st: Stats | undefined;
      try { st = lstatSync(abs(rel), { throwIfNoEntry: false }); } catch { st = undefined; }
      if (!st || !st.isDirectory()) { if (dirWatches.has(rel)) unwatchTree(rel); continue; }
      const id = dirIdentity(st);
      const known = dirWatches.get(rel);
      // Without a birth time (a file system that keeps none) a reused inode number looks the
      // same: after an event that may have replaced the directory, it is armed again anyway.
      const fresh = known?.id !== id || (force && rel === first && st.birthtimeMs === 0);
      if (fresh) {
        if (!known && dirWatches.size >= MAX_DIR_WATCHES) {
          limit(rel, `more than ${MAX_DIR_WATCHES.toLocaleString('en-US')} directories to watch: ${rel || '.'} and what is below it are not watched; changes there are found only by the backstop rescan (remove the excess directories or narrow the ** glob)`);
          continue;
        }
        if (!arm(rel, id)) continue;
        armed.push(rel);
      }
      // Listed: a directory armed anew (its names and subdirectories from before the watch), and
      // every directory below a `**` base when asked to walk (the start, the rescan's re-arm).
      if (!fresh && !(descendAll && pset.inDeepGlob(rel))) continue;
      // At the start nothing needs a hint (the startup pass checks everything), and every
      // directory outside a `**` base that wants a watch is in the settings' list already.
      if (!hint && !pset.inDeepGlob(rel)) continue;
      if (STORE_DIRS.test(rel)) {
        // The store's own directories: one hint for the directory; the store check looks inside.
        if (hint && fresh) events.onEvent(rel, true);
        for (const d of FIXED_STORE_DIRS) if (dirname(d) === rel) todo.push(d);
        continue;
      }
      list(rel, hint && fresh, (child) => todo.push(child));
    }
    return armed;
  };

  /** A watch on the directory at `rel` now (known as `id`): the new one first, then the old one closed. */
  const arm = (rel: string, id: string): boolean => {
    try {
      if (fault?.when === 'early') throw Object.assign(new Error(`simulated ${fault.code}`), { code: fault.code });
      // Names are bytes (docs/CONTRACT.md §Detection): the event's name undecoded, carried losslessly (common/names.ts).
      const prev = dirWatches.get(rel);
      const w = watchDirAt(abs(rel), id, prev?.id === id ? prev.self : undefined, (type, name) => onDirEvent(rel, type, name));
      if (!w) return false; // replaced since it was looked at: the event that replaced it arms the one there now
      const { watcher } = w;
      watcher.on('error', (err) => {
        if (dirWatches.get(rel)?.watcher === watcher) dirWatches.delete(rel);
        watcher.close();
        const code = errnoCode(err);
        if (code === 'ENOSPC' || code === 'EMFILE' || code === 'ENFILE') fail(err as Error & { code?: string });
        else events.onEvent(rel, true);
      });
      dirWatches.get(rel)?.watcher.close();
      dirWatches.set(rel, { id, watcher, self: w.self });
      return true;
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EACCES' || code === 'ELOOP') return false; // the guard repairs it, then re-arms
      fail(err as Error & { code?: string });
      return false;
    }
  };

  /**
   * The names in the directory at `rel`, streamed (opendir: a directory flooded with a million
   * names costs one pass, never an array): each relevant one a hint when `hint`; each
   * subdirectory that wants a watch handed to `sub`, within the depth bounds.
   */
  const list = (rel: string, hint: boolean, sub: (child: string) => void): void => {
    try {
      eachName(abs(rel), (name, isDir) => {
        const child = rel === '' ? name : `${rel}/${name}`;
        if (hint && relevantPath(child, pset)) events.onEvent(child, false);
        if (!isDir || !wantsWatch(child, pset)) return;
        if (nameable(child)) sub(child);
        else limit(child, tooDeep(rel));
      });
    } catch { /* gone or unreadable: the guard's check of the directory repairs it, then re-arms */ }
  };

  const onDirEvent = (watched: string, type: string, name: string | null) => {
    if (!alive) return;
    if (watched === blindDir()) return;
    const self = name === null || name === basename(watched === '' ? root : join(root, watched));
    // No name: the directory itself or an overflow. A name equal to the directory's own
    // (chmod of the directory itself, or its own move or deletion) is a hint on the directory too.
    if (self) events.onEvent(watched, true);
    // Its own move or deletion ('rename'): is the directory at the path still the one watched?
    if (self && type === 'rename' && watched !== '') ensure(watched, true, false, true);
    if (name === null) return;
    const rel = watched === '' ? name : `${watched}/${name}`;
    if (relevantPath(rel, pset)) events.onEvent(rel, false);
    // A directory that should be watched, created, deleted, renamed or exchanged here: the
    // one at the path now gets the watch (a chmod, 'change', leaves the same one there).
    if (type === 'rename' || !dirWatches.has(rel)) {
      if (!wantsWatch(rel, pset)) return;
      if (nameable(rel)) ensure(rel, true, false, type === 'rename');
      else limit(rel, tooDeep(watched));
    }
  };

  for (const d of new Set(['', ...pset.dirs, ...FIXED_STORE_DIRS])) { if (!alive) break; ensure(d, false, true); }
  // docs/CONTRACT.md §Detection: the root is a path. Its parent is watched for the root's own name (a rename of
  // the root, or something put in its place); the guard then checks what the path names.
  let parentWatch: NodeWatcher | null = null;
  try {
    parentWatch = fsWatch(dirname(root), { persistent: false }, (_type, name) => {
      if (alive && (name === null || String(name) === basename(root))) events.onEvent('', true);
    });
    parentWatch.on('error', () => { parentWatch?.close(); parentWatch = null; events.onEvent('', true); });
  } catch { /* the root's parent cannot be watched: the guard's 100 ms root check remains */ }

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
      if (!alive) return changed;
      for (const d of new Set(['', ...pset.dirs, ...FIXED_STORE_DIRS])) changed.push(...ensure(d, true, true));
      // Watches whose directory is gone from its path (or no longer wanted): dropped.
      for (const k of [...dirWatches.keys()]) {
        if (!wantsWatch(k, pset)) { unwatchDir(k); continue; }
        let st: Stats | undefined;
        try { st = lstatSync(abs(k), { throwIfNoEntry: false }); } catch { st = undefined; }
        if (!st || !st.isDirectory() || dirIdentity(st) !== dirWatches.get(k)?.id) changed.push(...ensure(k, true));
      }
      return changed;
    },
    async close() {
      alive = false;
      parentWatch?.close();
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
  // Names are bytes (docs/CONTRACT.md §Detection). chokidar lists names as UTF-8 strings: a name that is not
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
    async close() { alive = false; await w.close(); },
  };
}
