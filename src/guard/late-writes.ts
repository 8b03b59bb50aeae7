/**
 * Late writes across file systems (docs/CONTRACT.md §Revert: nothing is lost across file systems). When the
 * store is on another file system than the root, the rejected inode cannot be hard-linked
 * into quarantine before the restore renames over it, so a writer that still holds it open
 * (`echo … >` truncates first; a program writes in pieces, or after a pause) would write
 * into an inode nobody keeps. Instead the guard opens the rejected inode read-only before
 * the rename and holds that descriptor here: every POLL_MS each held inode's stamp (size,
 * mtime, ctime) is looked at, and when it changed its content (the first max_bytes) is
 * copied into the alert's quarantine file again. An inode quiet for QUIET_MS is released
 * (after one last look); at most MAX_HELD are held, the oldest released first. Nothing of
 * this is on the revert path: the copy runs on the timer, after the restore.
 *
 * No fanotify and no privilege: the descriptor keeps the inode alive, the stamp says when
 * to copy. The cost is one fstat per held inode per tick, and a timer only while one is held.
 */
import { closeSync, fstatSync } from 'node:fs';
import { readHeldHead } from '../fsx/beneath.js';

export const POLL_MS = 200;
export const QUIET_MS = 60_000;
export const MAX_HELD = 256;

interface Held { fd: number; id: string; name: string; stamp: string; quietSince: number }

const stampOf = (fd: number): string => {
  const st = fstatSync(fd, { bigint: true });
  return `${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
};

export class LateWrites {
  private readonly held: Held[] = [];
  private timer: NodeJS.Timeout | null = null;

  constructor(
    /** Put the bytes into quarantine/<id>/<name> again (replacing what is there). */
    private readonly keep: (id: string, name: string, bytes: Buffer) => void,
    private readonly maxBytes: () => number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Hold `fd` (the rejected inode of alert `id`); its content is copied on every change. */
  track(fd: number, id: string, name: string): void {
    this.held.push({ fd, id, name, stamp: '', quietSince: this.now() });
    while (this.held.length > MAX_HELD) this.release(0);
    // The first copy was written with the alert; the first tick (≤ POLL_MS) copies whatever came since.
    if (!this.timer) { this.timer = setInterval(() => this.tick(), POLL_MS); this.timer.unref?.(); }
  }

  get size(): number { return this.held.length; }

  /** One look at every held inode. */
  tick(): void {
    const t = this.now();
    for (let i = this.held.length - 1; i >= 0; i--) {
      const h = this.held[i]!;
      if (!this.look(h) && t - h.quietSince >= QUIET_MS) this.release(i, false);
    }
    if (this.held.length === 0 && this.timer) { clearInterval(this.timer); this.timer = null; }
  }

  /** Copy when the stamp changed; true when it did. A descriptor that fails is let go. */
  private look(h: Held): boolean {
    try {
      const s = stampOf(h.fd);
      if (s === h.stamp) return false;
      this.keep(h.id, h.name, readHeldHead(h.fd, this.maxBytes()));
      h.stamp = s;
      h.quietSince = this.now();
      return true;
    } catch {
      h.quietSince = -Infinity; // released at this tick
      return false;
    }
  }

  private release(i: number, lastLook = true): void {
    const h = this.held[i]!;
    if (lastLook) this.look(h);
    this.held.splice(i, 1);
    try { closeSync(h.fd); } catch { /* already gone */ }
  }

  /** At stop: one last copy of each, then every descriptor closed. */
  stop(): void {
    while (this.held.length) this.release(this.held.length - 1);
    if (this.timer) { clearInterval(this.timer); this.timer = null; }
  }
}
