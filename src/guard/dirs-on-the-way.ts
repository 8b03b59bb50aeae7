/**
 * The directories an approved file is reached through. The settings name some protected
 * directories (config/, orgs/, a glob's base); below a `**` glob's base an approved file
 * can sit deeper (deep/a/b/one.txt), and a reader reaches it through deep/a and deep/a/b.
 * docs/CONTRACT.md §Detection, "the promise is about paths": those directories are approved too (recorded in
 * the baseline with their mode, owner and ACLs, put back when moved, swapped or chmodded), or
 * moving deep/a away would take the approved file with it and nothing would put it back.
 */
import { dict } from '../common/dict.js';
import { baseOf, dirOf } from '../common/rel-path.js';
import { lstatAt, withDir } from '../fsx/beneath.js';
import { approvedDirXattrsAt } from '../fsx/xattrs.js';
import type { ProtectedSet } from '../config/protected-set.js';
import type { BaselineIndex } from '../store/baseline.js';
import type { BaselineState } from '../store/baseline-state.js';

type Dirs = BaselineIndex['dirs'];

/** Every directory on the way to one of `paths` (the root excluded). Pure. */
export function dirsOnTheWayTo(paths: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const p of paths) {
    for (let d = dirOf(p); d !== '' && !out.has(d); d = dirOf(d)) out.add(d);
  }
  return out;
}

/**
 * `dirs` for a baseline whose files are `paths`: the settings' directories and the root as
 * recorded, every directory on the way to a file (a new one as it is on disk now; one that
 * is not a directory there gets the entry of the nearest recorded directory above it), and
 * nothing else (the last approved file of deep/b removed: deep/b is no longer approved).
 * Returns `dirs` itself when nothing changes, so a caller can tell.
 */
export function withDirsOnTheWay(rootFd: number, paths: Iterable<string>, dirs: Dirs, pset: ProtectedSet): Dirs {
  const need = dirsOnTheWayTo(paths);
  const out: Dirs = dict();
  let changed = false;
  for (const [d, e] of Object.entries(dirs)) {
    if (d === '' || pset.isProtectedDir(d) || need.has(d)) out[d] = e;
    else changed = true;
  }
  // Parents first: a missing directory takes its nearest recorded parent's entry.
  for (const d of [...need].sort((a, b) => a.split('/').length - b.split('/').length)) {
    if (Object.hasOwn(out, d)) continue;
    changed = true;
    const found = withDir(rootFd, dirOf(d), (fd) => {
      const st = lstatAt(fd, baseOf(d));
      return st?.isDirectory() ? { mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, ...approvedDirXattrsAt(fd, baseOf(d)) } : null;
    }, () => null);
    if (found) { out[d] = found; continue; }
    let up = dirOf(d);
    while (up !== '' && !Object.hasOwn(out, up)) up = dirOf(up);
    const e = out[up];
    // The parent's mode and owner; its attributes are its own (a directory made anew gets none recorded).
    if (e) out[d] = { mode: e.mode, uid: e.uid, gid: e.gid };
  }
  return changed ? out : dirs;
}

/**
 * The guard's start, `verify` and `status` on a baseline recorded before these directories
 * were (or by a journal's recovery): they are approved as they are now, in memory, until
 * the next sanctioned change records them.
 */
export function completeDirs(rootFd: number, state: BaselineState, pset: ProtectedSet): void {
  const dirs = withDirsOnTheWay(rootFd, state.paths(), state.index.dirs, pset);
  if (dirs !== state.index.dirs) state.setDirs(dirs);
}
