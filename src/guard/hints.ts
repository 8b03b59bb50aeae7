/**
 * Coalesce watcher hints. Several hints for one path in the same turn become one check;
 * and every hinted path gets one trailing check shortly after its last hint, because
 * chokidar throttles and filters change events (a chmod with atime > mtime, or the last
 * write of a storm, can arrive as no event at all).
 */
export class HintQueue {
  private readonly pending = new Map<string, boolean>();
  private readonly trailing = new Map<string, NodeJS.Timeout>();
  private scheduled = false;
  private readonly handledThisTurn = new Set<string>();
  private closed = false;

  constructor(
    private readonly handle: (rel: string, isDirEvent: boolean) => void,
    private readonly settleMs = 30,
  ) {}

  hint(rel: string, isDirEvent: boolean): void {
    if (this.closed) return;
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

  private flush(): void {
    this.scheduled = false;
    this.handledThisTurn.clear();
    const batch = [...this.pending];
    this.pending.clear();
    for (const [rel, isDir] of batch) if (!this.closed) this.handle(rel, isDir);
  }

  close(): void {
    this.closed = true;
    for (const t of this.trailing.values()) clearTimeout(t);
    this.trailing.clear();
    this.pending.clear();
  }
}
