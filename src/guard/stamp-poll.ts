/**
 * Shared mappings (SPEC §4, issue 21): a write through mmap(MAP_SHARED) raises no inotify
 * event, but the kernel still moves the file's mtime/ctime when the page is dirtied. So the
 * stat stamps of the approved files (inode, size, ctime: ctime moves with every content or
 * metadata change, and no user can set it) are polled in
 * slices: one tick every TICK_MS looks at 1/SLICES of them, so each file is looked at once
 * per CYCLE_MS (800 ms: the rest of the 1 s budget is the revert). A stamp that differs from the one recorded when the file was last verified
 * clean becomes a hint, and the ordinary check (hash, not stamp) decides.
 *
 * Cost: one lstat per file per cycle, by plain name from inside each directory (no path
 * walk); nothing is read or hashed unless a stamp moved.
 */
import { lstatSync } from 'node:fs';
import { withCwdAt } from '../fsx/beneath.js';
import { DirCache, baseOf, dirOf } from './inspect.js';

/** What a stamp says, parsed once: inode, size and ctime (every content or metadata change moves ctime, which no user can set). */
interface Parsed { stamp: string; ino: number; size: number; ctimeMs: number }

export const TICK_MS = 100;
const SLICES = 8;
export const CYCLE_MS = TICK_MS * SLICES;

export interface StampSource {
  /** The root descriptor now (it changes after a root swap is put right). */
  rootFd(): number;
  /** The approved files: the same array while the baseline is unchanged, a new one when it changed. */
  paths(): readonly string[];
  /** The stamp recorded when `rel` was last verified clean, if any. */
  cleanStamp(rel: string): string | undefined;
  /** A stamp moved (or the file is gone / not a file): check it. */
  hint(rel: string): void;
}

export class StampPoll {
  private list: readonly string[] = [];
  private listOf: readonly string[] | null = null;
  private cursor = 0;
  private readonly parsed = new Map<string, Parsed>();

  constructor(private readonly src: StampSource) {}

  /** One slice. Returns the number of hints raised. */
  tick(): number {
    if (this.cursor >= this.list.length) {
      // A new cycle: the current list, grouped by directory (one cwd change per group); sorted again only when it changed.
      const now = this.src.paths();
      if (now !== this.listOf) { this.listOf = now; this.list = [...now].sort(); this.parsed.clear(); }
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
            let p = this.parsed.get(rel);
            if (p?.stamp !== want) {
              const f = want.split(':');
              p = { stamp: want, ino: Number(f[0]), size: Number(f[1]), ctimeMs: Number(f[6]) };
              this.parsed.set(rel, p);
            }
            const st = lstatSync(baseOf(rel), { throwIfNoEntry: false });
            if (!st || !st.isFile() || st.ino !== p.ino || st.size !== p.size || st.ctimeMs !== p.ctimeMs) moved.push(rel);
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
