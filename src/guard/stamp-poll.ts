/**
 * Shared mappings (docs/CONTRACT.md §Detection): a write through mmap(MAP_SHARED) raises no inotify
 * event, but on disk file systems the kernel still moves the file's mtime/ctime when the page is
 * dirtied (not on tmpfs: see the open-file rule below). So the
 * stat stamps of the approved files (inode, size, ctime: ctime moves with every content or
 * metadata change, and no user can set it) are polled. A stamp that differs from the one
 * recorded when the file was last verified clean becomes a hint, and the ordinary check
 * (hash, not stamp) decides.
 *
 * Two speeds (idle CPU). A file that is open (a live mapping counts: it holds the file open), or that has
 * no inode watch yet (src/guard/open-watch.ts says which: "hot"), is looked at once per
 * HOT_CYCLE_MS (800 ms: the rest of the 1 s budget is the revert). Every other file is looked
 * at once per COLD_CYCLE_MS, which bounds what the watch cannot see (a mapping made while the
 * guard was stopped), unless the kernel said, when the watch was armed, that nobody had the
 * inode open for writing (quiet: open-watch.ts); then every later open is an event, and the
 * slow cycle skips it. Without inotify every file is hot: one lstat per file per 800 ms.
 *
 * A file that is open right now is handed to the check (hash) on each fast look whatever its
 * stamp says: on tmpfs a store into a shared mapping moves no stamp at all.
 *
 * Cost: one lstat per looked-at file, by plain name from inside its directory (no path walk);
 * nothing is read or hashed unless a stamp moved or the file is open.
 */
import { lstatSync } from 'node:fs';
import { nameToBytes } from '../common/names.js';
import { withCwdAt } from '../fsx/beneath.js';
import { DirCache, baseOf, dirOf } from './inspect.js';
import { OpenWatch } from './open-watch.js';

/** What a stamp says, parsed once: inode, size and ctime (every content or metadata change moves ctime, which no user can set). */
interface Parsed { stamp: string; ino: number; size: number; ctimeMs: number }

export const TICK_MS = 100;
const HOT_SLICES = 8;
const COLD_SLICES = 80;
export const HOT_CYCLE_MS = TICK_MS * HOT_SLICES;
export const COLD_CYCLE_MS = TICK_MS * COLD_SLICES;

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
  private approved: ReadonlySet<string> = new Set();
  private listOf: readonly string[] | null = null;
  /** Which tick of the slow cycle this is. */
  private cold = 0;
  private readonly parsed = new Map<string, Parsed>();
  /** Files looked at on the fast cycle: possibly open or mapped for writing, or not watched. */
  private readonly hot = new Set<string>();
  private hotQueue: string[] = [];
  private hotPerTick = 1;
  /** Files written or chmod'ed, read from the watch by drainNow: hinted at the next tick. */
  private pending = new Set<string>();

  constructor(private readonly src: StampSource, private readonly opens: OpenWatch = new OpenWatch()) {}

  /** The clean stamp of `rel` changed (verified clean again, or forgotten): look at it fast until watched. */
  cleanChanged(rel: string | null): void {
    if (rel === null) { for (const p of this.list) this.hot.add(p); return; }
    this.hot.add(rel);
  }

  /** One tick: the watch's events, a slice of the hot files, a slice of all. Returns the hints raised. */
  tick(): number {
    const now = this.src.paths();
    if (now !== this.listOf) {
      // A new baseline: sorted (grouped by directory, one cwd change per group), every file hot until watched.
      this.listOf = now; this.list = [...now].sort(); this.approved = new Set(now); this.parsed.clear(); this.cold = 0;
      this.hot.clear(); for (const p of this.list) this.hot.add(p);
      this.hotQueue = [];
    }
    if (this.list.length === 0) return 0;
    const moved = this.pending;
    this.pending = new Set<string>();
    this.opens.drain((rel, written) => { this.hot.add(rel); if (written) moved.add(rel); });
    // The fast cycle: the hot files in slices, so each is looked at once per HOT_CYCLE_MS.
    if (this.hotQueue.length === 0 && this.hot.size) { this.hotQueue = [...this.hot].sort(); this.hotPerTick = Math.ceil(this.hotQueue.length / HOT_SLICES); }
    const fast = this.hotQueue.splice(0, this.hotPerTick);
    // The slow cycle: a slice of every file, so each is looked at once per COLD_CYCLE_MS.
    // Tick k of COLD_SLICES looks at files [k·n/S, (k+1)·n/S): a few files are not looked at faster.
    const n = this.list.length;
    const slow = this.list.slice(Math.floor(this.cold * n / COLD_SLICES), Math.floor((this.cold + 1) * n / COLD_SLICES));
    this.cold = (this.cold + 1) % COLD_SLICES;
    const dirs = new DirCache(this.src.rootFd());
    try {
      this.look(fast, dirs, moved);
      // Quiet files (watched since before any writer still alive: open-watch.ts) raise an
      // event for anything a look could find; only the others are looked at.
      this.look(slow.filter((rel) => !this.hot.has(rel) && !this.quietNow(rel)), dirs, moved);
    } finally {
      dirs.close();
    }
    for (const rel of moved) this.src.hint(rel);
    return moved.size;
  }

  /** lstat each of `rels` (sorted) from inside its directory; watch the ones that match their clean stamp. */
  private look(rels: readonly string[], dirs: DirCache, moved: Set<string>): void {
    let i = 0;
    while (i < rels.length) {
      const dir = dirOf(rels[i] as string);
      let j = i + 1;
      while (j < rels.length && dirOf(rels[j] as string) === dir) j++;
      // A path that is not approved (checked once, its stamp forgotten) leaves the fast cycle:
      // the poll keeps no path it has nothing to compare with, and opens no directory for it.
      const group = rels.slice(i, j).filter((rel) => this.src.cleanStamp(rel) !== undefined || this.approved.has(rel) || (this.hot.delete(rel), false));
      i = j;
      if (group.length === 0) continue;
      const fd = dirs.get(dir);
      // A directory that cannot be entered: its files are hinted (the check repairs it).
      const looked = fd === null ? null : withCwdAt(fd, () => { for (const rel of group) this.lookAt(rel, moved); });
      if (!looked) for (const rel of group) if (this.src.cleanStamp(rel) !== undefined) moved.add(rel);
    }
  }

  private lookAt(rel: string, moved: Set<string>): void {
    const want = this.src.cleanStamp(rel);
    if (want === undefined) return; // not verified clean yet: the check that runs will record it (and cleanChanged)
    let p = this.parsed.get(rel);
    if (p?.stamp !== want) {
      const f = want.split(':');
      p = { stamp: want, ino: Number(f[0]), size: Number(f[1]), ctimeMs: Number(f[6]) };
      this.parsed.set(rel, p);
    }
    const name = baseOf(rel);
    // Names are bytes (common/names.ts): a name that is not UTF-8 is looked up by its own bytes.
    const bytes = nameToBytes(name);
    const st = lstatSync(bytes, { throwIfNoEntry: false });
    if (!st || !st.isFile() || st.ino !== p.ino || st.size !== p.size || st.ctimeMs !== p.ctimeMs) { moved.add(rel); this.hot.add(rel); return; }
    if (!this.opens.watched(rel, p.ino)) {
      // Watch the inode, then make sure the name still names it (a swap in between would watch another one).
      if (!this.opens.watch(rel, name, p.ino)) return;
      const again = lstatSync(bytes, { throwIfNoEntry: false });
      if (!again || again.ino !== p.ino || again.ctimeMs !== p.ctimeMs) { this.opens.forget(rel); moved.add(rel); return; }
      // Then: was it open for writing before the watch existed (a mapping that writes unseen)?
      this.opens.settle(rel, name);
    }
    // An open file is checked by hash, not by stamp: a store into a shared mapping moves no
    // stamp on tmpfs (no page_mkwrite there) nor within one coarse clock tick elsewhere.
    if (this.opens.open(rel)) moved.add(rel);
    else if (!this.opens.hot(rel, p.ino)) this.hot.delete(rel);
  }

  private quietNow(rel: string): boolean {
    const want = this.src.cleanStamp(rel);
    if (want === undefined) return false;
    const p = this.parsed.get(rel);
    if (p?.stamp !== want) return false; // a new clean stamp: looked at (and parsed) first
    return this.opens.quiet(rel, p.ino);
  }

  /**
   * For the backstop rescan (guard.ts `vouched`): `rel` is quiet (its inode, the one its clean
   * stamp names, watched since before any writer still alive, nobody has it open, no overflow
   * since) and no event of it is still to be read; then nothing can have changed it unseen on
   * a file system where the kernel raises every inode event (the caller checks that).
   */
  vouches(rel: string): boolean {
    return !this.hot.has(rel) && this.quietNow(rel);
  }

  /** Read the watches' events now (before a rescan decides what it may skip). */
  drainNow(): void {
    this.opens.drain((rel, written) => { this.hot.add(rel); if (written) this.pending.add(rel); });
  }

  /** For the bench and tests: files watched, files on the fast cycle, files the slow cycle skips, why watches are missing. */
  counts(): { watched: number; hot: number; quiet: number; whyNot: string } {
    let quiet = 0;
    for (const rel of this.list) if (this.quietNow(rel)) quiet++;
    return { watched: this.opens.size(), hot: this.hot.size, quiet, whyNot: this.opens.whyNot };
  }

  close(): void { this.opens.close(); }
}
