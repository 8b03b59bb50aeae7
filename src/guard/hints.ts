/**
 * Coalesce watcher hints, urgent ones first.
 *
 * Urgent hints (an approved file, a directory, the store) are acted on at once — the revert
 * path stays short — and several for one path in the same turn become one check; each gets
 * one trailing check shortly after its last hint, because the kernel coalesces and
 * chokidar filters some events (a chmod with atime > mtime, the last write of a storm).
 *
 * Everything else (new, unexpected files: a storm of 371,000 of them) waits in a bounded
 * set and is worked off in slices of a few milliseconds, one slice per event-loop turn,
 * so the I/O phase (and with it the next urgent hint) always comes in between. They get no
 * trailing timer. When the set is full, further hints are dropped and `onOverflow` runs
 * once the set is empty (a rescan finds whatever was dropped).
 */
export interface HintQueueOptions {
  settleMs?: number;
  urgent?: (rel: string, isDirEvent: boolean) => boolean;
  /** The low-priority set overflowed and has been worked off: look again (a rescan). */
  onOverflow?: () => void;
  maxPending?: number;
  sliceMs?: number;
}

export class HintQueue {
  private readonly pending = new Map<string, boolean>();
  private readonly trailing = new Map<string, NodeJS.Timeout>();
  private scheduled = false;
  private readonly handledThisTurn = new Set<string>();
  /** Each waiting path and when it was last queued. */
  private readonly low = new Map<string, number>();
  private lowScheduled = false;
  private overflowed = false;
  private closed = false;
  private readonly settleMs: number;
  private readonly urgent: (rel: string, isDirEvent: boolean) => boolean;
  private readonly maxPending: number;
  private readonly sliceMs: number;

  constructor(
    /** `queuedAt` (performance.now()) for a hint that waited in the low set: when it was last queued. */
    private readonly handle: (rel: string, isDirEvent: boolean, queuedAt?: number) => void,
    opts: HintQueueOptions | number = {},
  ) {
    const o = typeof opts === 'number' ? { settleMs: opts } : opts;
    this.settleMs = o.settleMs ?? 30;
    this.urgent = o.urgent ?? (() => true);
    this.maxPending = o.maxPending ?? 50_000;
    this.sliceMs = o.sliceMs ?? 8;
    this.onOverflow = o.onOverflow ?? (() => {});
  }

  private readonly onOverflow: () => void;

  /** Paths waiting behind urgent work. */
  get backlog(): number { return this.low.size; }

  hint(rel: string, isDirEvent: boolean): void {
    if (this.closed) return;
    if (!this.urgent(rel, isDirEvent)) { this.later(rel); return; }
    if (!this.handledThisTurn.has(rel)) {
      // The first hint for a path is acted on at once (the revert path stays short); later
      // hints for it in the same turn are folded into one check at the end of the turn.
      this.handledThisTurn.add(rel);
      this.handle(rel, isDirEvent);
    } else {
      this.pending.set(rel, (this.pending.get(rel) ?? false) || isDirEvent);
    }
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
    const old = this.trailing.get(rel);
    if (old) clearTimeout(old);
    this.trailing.set(rel, setTimeout(() => {
      this.trailing.delete(rel);
      if (!this.closed) this.handle(rel, isDirEvent);
    }, this.settleMs));
  }

  /** Queue a non-urgent path (also used by the rescan for new files). */
  later(rel: string): void {
    if (this.closed) return;
    if (this.low.size >= this.maxPending && !this.low.has(rel)) this.overflowed = true;
    else this.low.set(rel, performance.now()); // a path queued again keeps its place, with the new time
    if (!this.lowScheduled) { this.lowScheduled = true; setImmediate(() => this.drain()); }
  }

  private flush(): void {
    this.scheduled = false;
    this.handledThisTurn.clear();
    const batch = [...this.pending];
    this.pending.clear();
    for (const [rel, isDir] of batch) if (!this.closed) this.handle(rel, isDir);
  }

  private drain(): void {
    this.lowScheduled = false;
    if (this.closed) return;
    const until = Date.now() + this.sliceMs;
    for (const [rel, queuedAt] of this.low) {
      this.low.delete(rel);
      this.handle(rel, false, queuedAt);
      if (Date.now() >= until) break;
    }
    if (this.low.size) { this.lowScheduled = true; setImmediate(() => this.drain()); return; }
    if (this.overflowed) { this.overflowed = false; this.onOverflow(); }
  }

  close(): void {
    this.closed = true;
    for (const t of this.trailing.values()) clearTimeout(t);
    this.trailing.clear();
    this.pending.clear();
    this.low.clear();
  }
}
