/**
 * Shared mappings (SPEC §4, issue 21): a write through mmap(MAP_SHARED) raises no inotify
 * event, but the kernel still moves the file's mtime/ctime when the page is dirtied. So the
 * stat stamps (inode, size, mode, owner, mtime, ctime) of the approved files are polled in
 * slices: one tick every TICK_MS looks at 1/SLICES of them, so each file is looked at once
 * per CYCLE_MS. A stamp that differs from the one recorded when the file was last verified
 * clean becomes a hint, and the ordinary check (hash, not stamp) decides.
 *
 * Cost: one lstat per file per cycle, by plain name from inside each directory (no path
 * walk); nothing is read or hashed unless a stamp moved.
 */
import { lstatSync } from 'node:fs';
import { withCwdAt } from '../fsx/beneath.js';
import { DirCache, baseOf, dirOf } from './inspect.js';
import { statStamp } from './observe.js';

export const TICK_MS = 100;
const SLICES = 5;
export const CYCLE_MS = TICK_MS * SLICES;

export interface StampSource {
  /** The root descriptor now (it changes after a root swap is put right). */
  rootFd(): number;
  /** The approved files; a new array when the baseline changed. */
  paths(): readonly string[];
  /** The stamp recorded when `rel` was last verified clean, if any. */
  cleanStamp(rel: string): string | undefined;
  /** A stamp moved (or the file is gone / not a file): check it. */
  hint(rel: string): void;
}

export class StampPoll {
  private list: readonly string[] = [];
  private cursor = 0;

  constructor(private readonly src: StampSource) {}

  /** One slice. Returns the number of hints raised. */
  tick(): number {
    if (this.cursor >= this.list.length) {
      // A new cycle: take the current list, grouped by directory (one cwd change per group).
      this.list = [...this.src.paths()].sort();
      this.cursor = 0;
      if (this.list.length === 0) return 0;
    }
    const end = Math.min(this.list.length, this.cursor + Math.ceil(this.list.length / SLICES));
    const moved: string[] = [];
    const dirs = new DirCache(this.src.rootFd());
    try {
      let i = this.cursor;
      while (i < end) {
        const dir = dirOf(this.list[i] as string);
        let j = i + 1;
        while (j < end && dirOf(this.list[j] as string) === dir) j++;
        const fd = dirs.get(dir);
        const group = this.list.slice(i, j);
        // A directory that cannot be entered: its files are hinted (the check repairs it).
        const looked = fd === null ? null : withCwdAt(fd, () => {
          for (const rel of group) {
            const want = this.src.cleanStamp(rel);
            if (want === undefined) continue; // not verified clean yet: the check that runs will record it
            const st = lstatSync(baseOf(rel), { throwIfNoEntry: false });
            if (!st || !st.isFile() || statStamp(st) !== want) moved.push(rel);
          }
        });
        if (!looked) for (const rel of group) if (this.src.cleanStamp(rel) !== undefined) moved.push(rel);
        i = j;
      }
      this.cursor = end;
    } finally {
      dirs.close();
    }
    for (const rel of moved) this.src.hint(rel);
    return moved.length;
  }
}
