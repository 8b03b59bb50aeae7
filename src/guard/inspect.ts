/**
 * Read-only inspection: what differs from the baseline right now. Used by `warden verify`
 * (which changes nothing) and by the guard before it acts.
 */
import { nameFromBytes } from '../common/names.js';
import { fstatSync, opendirSync, type Dir, type Dirent } from 'node:fs';
import { at, lstatAt, tryOpenDir, safeClose, typeOf, withDir } from '../fsx/beneath.js';
import { classify, type Observation, type Verdict } from './classify.js';
import { observe } from './observe.js';
import { dirAttrReasons } from './attrs.js';
import { dirXattrsIfRecorded } from '../fsx/xattrs.js';
import type { ProtectedSet, FileKind } from '../config/protected-set.js';
import type { BaselineState } from '../store/baseline-state.js';
import type { AlertReason } from '../store/alert-types.js';

export interface Finding {
  path: string;
  isDir: boolean;
  kind: FileKind | null;
  verdict: Verdict;
  obs: Observation;
}

import { baseOf, dirOf } from '../common/rel-path.js';
/** Re-exported for the callers that import them from here. */
export { baseOf, dirOf };

/** What is put right on the directory in place (not a broken path: what is below it is looked at too). */
const IN_PLACE: ReadonlySet<AlertReason> = new Set(['mode', 'owner', 'acl', 'xattr']);

/** Check each baseline directory (parents first): present, a real directory, same mode, owner and ACLs (when recorded). */
export function inspectDirs(rootFd: number, state: BaselineState): Finding[] {
  const out: Finding[] = [];
  const dirs = Object.keys(state.index.dirs).sort((a, b) => a.split('/').length - b.split('/').length);
  const broken: string[] = [];
  for (const d of dirs) {
    if (broken.some((b) => d.startsWith(b + '/'))) continue; // its parent's finding covers it
    const want = state.index.dirs[d];
    if (!want) continue;
    // The root itself: look through the descriptor we hold (its path may be unreadable now).
    const looked = d === '' ? { at: fstatSync(rootFd), x: dirXattrsIfRecorded(want.xattrs, rootFd, '.') } : withDir(rootFd, dirOf(d), (fd) => ({ at: lstatAt(fd, baseOf(d)), x: dirXattrsIfRecorded(want.xattrs, fd, baseOf(d)) }), () => null);
    const st = looked?.at;
    if (st === undefined) continue; // the parent cannot be walked: its own finding covers it
    const reasons: AlertReason[] = [];
    const type = st ? typeOf(st) : 'absent';
    if (!st) reasons.push('deleted');
    else if (type === 'symlink') reasons.push('symlink');
    else if (type !== 'dir') reasons.push('not-regular');
    else {
      // As lookDirs (dir-repair.ts): an ACL first, which moves the mode's group bits too.
      reasons.push(...dirAttrReasons(want.xattrs, looked?.x));
      if ((st.mode & 0o7777) !== want.mode) reasons.push('mode');
      if (st.uid !== want.uid || st.gid !== want.gid) reasons.push('owner');
    }
    const [reason, ...also] = reasons;
    if (reason) {
      if (!IN_PLACE.has(reason)) broken.push(d);
      out.push({
        path: d, isDir: true, kind: null, verdict: { reason, also, action: 'reverted' },
        obs: { type, size: st?.size ?? 0, mode: st ? st.mode & 0o7777 : 0, uid: st?.uid ?? -1, gid: st?.gid ?? -1, ino: st?.ino ?? 0, sha256: null, bytes: null },
      });
    }
  }
  return out;
}

/** Every path that is protected now: baseline paths, exact paths, and what the globs match on disk. */
export function candidatePaths(rootFd: number, state: BaselineState, pset: ProtectedSet): readonly string[] {
  const deep = (base: string) => pset.patterns.some((p) => p.base === base && p.deep);
  const flat = pset.listedDirs.some(deep) ? null : pset.listedDirs.map((base) => flatMatches(rootFd, base, pset));
  // Nothing changed since the last call (same baseline, settings and glob listings): the
  // same list. A rescan of 10,000 files then builds no Set and sorts nothing.
  if (flat && memo && memo.files === state.index.files && memo.pset === pset && memo.rootFd === rootFd
    && memo.flat.length === flat.length && memo.flat.every((m, i) => m === flat[i])) return memo.paths;
  const set = new Set<string>(state.paths());
  for (const p of pset.exactPaths) set.add(p);
  pset.listedDirs.forEach((base, i) => {
    if (flat) { for (const rel of flat[i] ?? []) set.add(rel); return; }
    if (!deep(base)) { for (const rel of flatMatches(rootFd, base, pset)) set.add(rel); return; }
    // Baseline paths are protected by definition: skip the glob matcher for them.
    listDir(rootFd, base, MAX_DEPTH, (rel) => { if (!set.has(rel) && pset.kindOf(rel)) set.add(rel); });
  });
  const paths = Object.freeze([...set].sort());
  memo = flat ? { rootFd, files: state.index.files, pset, flat, paths } : null;
  return paths;
}

/**
 * The candidate paths at or below `prefix` ('' or a directory and a slash): what
 * candidatePaths would give that starts with `prefix`, but a `**` base is listed only below
 * the directory named, not whole. So a directory event deep in a tree costs its own subtree.
 */
export function candidatePathsBelow(rootFd: number, state: BaselineState, pset: ProtectedSet, prefix: string): string[] {
  if (prefix === '') return [...candidatePaths(rootFd, state, pset)];
  const dir = prefix.slice(0, -1);
  const set = new Set<string>();
  for (const p of state.paths()) if (p.startsWith(prefix)) set.add(p);
  for (const p of pset.exactPaths) if (p.startsWith(prefix)) set.add(p);
  for (const base of pset.listedDirs) {
    const baseSlash = base === '' ? '' : `${base}/`;
    const deep = pset.patterns.some((p) => p.base === base && p.deep);
    if (baseSlash.startsWith(prefix)) {
      // The base is at or below the directory: all of it, as candidatePaths lists it.
      if (deep) listDir(rootFd, base, MAX_DEPTH, (rel) => { if (!set.has(rel) && pset.kindOf(rel)) set.add(rel); });
      else for (const rel of flatMatches(rootFd, base, pset)) set.add(rel);
    } else if (deep && prefix.startsWith(baseSlash)) {
      // The directory is inside a ** base: only what is below it.
      listDir(rootFd, dir, MAX_DEPTH, (rel) => { if (!set.has(rel) && pset.kindOf(rel)) set.add(rel); });
    }
  }
  return [...set].sort();
}

let memo: { rootFd: number; files: object; pset: ProtectedSet; flat: readonly string[][]; paths: readonly string[] } | null = null;

/**
 * The names in one (non-recursive) glob directory that match, listed again only when the
 * directory changed: an entry added, removed or renamed changes its ctime, which no user
 * can set back. So a million names that match nothing cost one listing, not one per rescan.
 */
const listings = new Map<string, { stamp: string; pset: ProtectedSet; matches: string[] }>();
function flatMatches(rootFd: number, base: string, pset: ProtectedSet): string[] {
  const key = `${rootFd}:${base}`;
  const st = withDir(rootFd, base, (fd) => fstatSync(fd), () => null);
  if (!st) { listings.delete(key); return []; }
  const stamp = [st.ino, st.size, st.mtimeMs, st.ctimeMs].join(':');
  // ctime has coarse (clock-tick) granularity: a change in the same tick as the last one
  // would not show, so a directory changed within the last two seconds is never cached.
  const recent = Date.now() - st.ctimeMs < 2000;
  const known = listings.get(key);
  if (known && known.stamp === stamp && known.pset === pset) return known.matches;
  const matches: string[] = [];
  listDir(rootFd, base, 1, (rel) => { if (pset.kindOf(rel)) matches.push(rel); });
  if (listings.size > 64) listings.clear();
  if (recent) listings.delete(key); else listings.set(key, { stamp, pset, matches });
  return matches;
}

/**
 * How far below a `**` glob's base the watches and the rescan go: every level a path can
 * name (docs/ARCHITECTURE.md, "Watching, and what it costs"). A directory whose path below
 * the root is longer than MAX_REL_BYTES (PATH_MAX: no path-based reader, the runtime
 * included, can name what lies beyond) is not descended into; MAX_DEPTH is the most levels
 * such a path holds (a one-byte name and a slash each), so depth alone never stops a walk
 * short of what a reader can open. Nor is any directory past MAX_LISTED_DIRS listed in one
 * pass. The watcher, whose own walk stops at the same length (and at its watch limit, lower
 * than MAX_LISTED_DIRS), raises a `watch-degraded` alert naming the limit when a tree reaches one.
 */
export const MAX_DEPTH = 2048;
export const MAX_REL_BYTES = 4096;
export const MAX_LISTED_DIRS = 100_000;

/** Is `rel` (a directory below the root) within MAX_DEPTH and MAX_REL_BYTES? Pure. */
export function withinDepth(rel: string): boolean {
  if (rel.length > MAX_REL_BYTES) return false; // a UTF-16 unit is at least one byte
  let levels = 1;
  for (let i = rel.indexOf('/'); i !== -1; i = rel.indexOf('/', i + 1)) if (++levels > MAX_DEPTH) return false;
  return Buffer.byteLength(rel) <= MAX_REL_BYTES;
}

/**
 * Every name in the directory at `path` (a path, or `at(fd, '.')`), streamed (opendir): a
 * directory holding a million names costs one pass, never an array. Listed as UTF-8 first
 * (one string per name: a flood of names costs no Buffer each); only when some name did not
 * decode (it holds U+FFFD) is the directory listed again as bytes, and the names that did not
 * decode are handed over then, carried losslessly (common/names.ts). So every name is handed
 * over once, as its own bytes. Throws what opendir throws (the caller decides).
 */
export function eachName(path: string | Buffer, fn: (name: string, isDir: boolean) => void): void {
  let undecoded = false;
  stream(path, 'utf8', (ent) => {
    const name = ent.name as string;
    if (name.includes('\uFFFD')) undecoded = true;
    else fn(name, ent.isDirectory());
  });
  if (!undecoded) return;
  stream(path, 'buffer', (ent) => {
    const raw = ent.name as unknown as Buffer;
    if (raw.toString('utf8').includes('\uFFFD')) fn(nameFromBytes(raw), ent.isDirectory());
  });
}

function stream(path: string | Buffer, encoding: 'utf8' | 'buffer', fn: (ent: Dirent) => void): void {
  const d: Dir = opendirSync(path, { bufferSize: 256, encoding: encoding as BufferEncoding });
  try {
    for (let ent = d.readSync(); ent !== null; ent = d.readSync()) fn(ent);
  } finally {
    try { d.closeSync(); } catch { /* closed */ }
  }
}

/**
 * Hand every entry below `dir` to `each`, `depth` levels down, streaming (opendir): a
 * directory holding a million names that match nothing costs one pass, never an array of
 * a million entries. Iterative, depth first, no recursion: the subdirectories still to list
 * wait as paths (at most MAX_LISTED_DIRS), each opened from its parent's descriptor while
 * that is among the few kept open (ParentFds).
 */
function listDir(rootFd: number, dir: string, depth: number, each: (rel: string) => void): void {
  const todo: { rel: string; depth: number }[] = [{ rel: dir, depth }];
  const parents = new ParentFds(rootFd);
  let listed = 0;
  try {
    while (todo.length) {
      const { rel: at0, depth: left } = todo.pop() as { rel: string; depth: number };
      if (++listed > MAX_LISTED_DIRS) return;
      const fd = parents.open(at0);
      if (fd === null) continue;
      try {
        // Names are bytes (docs/CONTRACT.md §Detection): carried losslessly (eachName, common/names.ts).
        eachName(at(fd, '.'), (name, isDir) => {
          const rel = at0 === '' ? name : `${at0}/${name}`;
          each(rel);
          if (left > 1 && isDir && withinDepth(rel) && todo.length < MAX_LISTED_DIRS) todo.push({ rel, depth: left - 1 });
        });
      } catch { /* vanished while listing: the next event or rescan looks again */ }
    }
  } finally { parents.close(); }
}

/**
 * The last few directories a depth-first walk listed, kept open, so each next directory is
 * opened from its parent's descriptor (one openat, O_NOFOLLOW) rather than walked from the
 * root one component at a time: a 2,000-level tree costs 2,000 opens, not two million. At
 * most PARENT_FDS are open at once; a directory whose parent was let go is walked from the root.
 */
const PARENT_FDS = 32;
class ParentFds {
  private readonly fds = new Map<string, number>();
  constructor(private readonly rootFd: number) {}
  open(rel: string): number | null {
    const slash = rel.lastIndexOf('/');
    const parent = rel === '' ? undefined : this.fds.get(slash === -1 ? '' : rel.slice(0, slash));
    const r = parent === undefined ? tryOpenDir(this.rootFd, rel) : tryOpenDir(parent, slash === -1 ? rel : rel.slice(slash + 1));
    if (!r.ok) return null;
    this.fds.set(rel, r.fd);
    if (this.fds.size > PARENT_FDS) {
      const [oldest, fd] = this.fds.entries().next().value as [string, number];
      this.fds.delete(oldest);
      safeClose(fd);
    }
    return r.fd;
  }
  close(): void {
    for (const fd of this.fds.values()) safeClose(fd);
    this.fds.clear();
  }
}

/** Inspect one file, its directory already open. Null when it matches the baseline. */
export function inspectFileAt(dirFd: number, state: BaselineState, pset: ProtectedSet, rel: string, maxBytes: number,
  seen?: (obs: Observation) => void): Finding | null {
  const entry = state.entry(rel);
  const kind = entry?.kind ?? pset.kindOf(rel);
  if (!entry && !kind) return null;
  const obs = observe(dirFd, baseOf(rel), maxBytes);
  seen?.(obs);
  const verdict = classify(entry, obs);
  return verdict ? { path: rel, isDir: false, kind, verdict, obs } : null;
}

/**
 * Open each directory once for a whole pass (a pass touches thousands of files in a few
 * directories). A directory that cannot be walked maps to null. close() when done.
 */
export class DirCache {
  private readonly fds = new Map<string, number | null>();
  constructor(private readonly rootFd: number) {}
  get(dir: string): number | null {
    let fd = this.fds.get(dir);
    if (fd !== undefined) return fd;
    // Held until close(), so not withDir: tryOpenDir leaves nothing open on failure.
    const w = tryOpenDir(this.rootFd, dir); fd = w.ok ? w.fd : null;
    this.fds.set(dir, fd);
    return fd;
  }
  /** Drop a directory (after it was repaired) so the next get() walks to it again. */
  forget(dir: string): void {
    const fd = this.fds.get(dir);
    if (fd !== undefined && fd !== null) safeClose(fd);
    this.fds.delete(dir);
  }
  close(): void {
    for (const fd of this.fds.values()) if (fd !== null) safeClose(fd);
    this.fds.clear();
  }
}

export function inspectAll(rootFd: number, state: BaselineState, pset: ProtectedSet, maxBytes: number): Finding[] {
  const dirFindings = inspectDirs(rootFd, state);
  const files: Finding[] = [];
  const dirs = new DirCache(rootFd);
  try {
  for (const rel of candidatePaths(rootFd, state, pset)) {
    const fd = dirs.get(dirOf(rel));
    const f = fd === null ? null : inspectFileAt(fd, state, pset, rel, maxBytes);
    if (f) files.push(f);
    else if (state.entry(rel) && dirFindings.some((d) => rel.startsWith(d.path + '/') && d.verdict.reason !== 'mode' && d.verdict.reason !== 'owner')) {
      // The file's directory is gone or replaced: the file is missing from where it belongs.
      files.push({ path: rel, isDir: false, kind: state.entry(rel)?.kind ?? null, verdict: { reason: 'deleted', also: [], action: 'reverted' }, obs: { type: 'absent', size: 0, mode: 0, uid: -1, gid: -1, ino: 0, sha256: null, bytes: null } });
    }
  }
  } finally {
    dirs.close();
  }
  return [...dirFindings, ...files];
}
