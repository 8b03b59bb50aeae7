/**
 * Which directory listings the guard made lately (docs/ARCHITECTURE.md, "Watching, and what
 * it costs"). A listing at or above a directory that began after the event behind a hint saw
 * a state at least as new, so the hint needs no listing of its own: in the same event-loop
 * turn (events are read before the turn's work) or after the hint was queued. A tree made
 * level by level then costs each level once, not once per level above it. Trailing checks
 * (hints.ts) look again regardless, so an event that came later is never covered.
 */
const KEPT = 64;

interface Listing { prefix: string; at: number; turn: number }

export class RecentListings {
  private readonly listings: Listing[] = [];
  private turn = 0;
  private turnPending = false;

  /** Is `prefix` ('' or a directory and a slash) covered for a hint queued at `queuedAt` (performance.now())? */
  covers(prefix: string, queuedAt?: number): boolean {
    return this.listings.some((l) => prefix.startsWith(l.prefix) && (l.turn === this.turn || (queuedAt !== undefined && l.at > queuedAt)));
  }

  /** A listing of `prefix` begins now. */
  record(prefix: string): void {
    if (!this.turnPending) { this.turnPending = true; setImmediate(() => { this.turnPending = false; this.turn++; }); }
    this.listings.push({ prefix, at: performance.now(), turn: this.turn });
    if (this.listings.length > KEPT) this.listings.shift();
  }
}
