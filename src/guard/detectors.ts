/**
 * The daemon's detectors (docs/ARCHITECTURE.md, "The pipeline"), each built on the guard's
 * one door (door.ts) and feeding it: the directory watches (watch-supervisor.ts: inotify,
 * or chokidar polling when inotify is exhausted), the inode watches and the stamp poll
 * (stamp-poll.ts, open-watch.ts), and two clocks: the backstop rescan every rescan_seconds
 * (a sweep), and a 100 ms tick that looks at the root path (a hint on '' when it names
 * something else) and runs the stamp poll. No environment variable reaches any of them; the
 * test seams are in-process (test-seams.ts).
 */
import { StampPoll, TICK_MS as STAMP_TICK_MS } from './stamp-poll.js';
import { WatchSupervisor } from './watch-supervisor.js';
import { watchSeams } from './test-seams.js';
import type { Detectors, Door } from './door.js';

export class DaemonDetectors implements Detectors {
  /** The directory watches (and, through them, whether the guard polls). */
  readonly dirs: WatchSupervisor;
  /** The stamp poll's inode watches (absent only under the bench seam `stampPollOff`). */
  readonly inodes: StampPoll | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  private closed = false;

  constructor(private readonly door: Door, private readonly log: (line: string) => void, root: string) {
    this.dirs = new WatchSupervisor({
      root, pset: door.pset, onEvent: door.hint, rescan: door.sweep, flag: door.flag, log,
      retryMs: () => door.config().rescan_seconds * 1000,
    });
    this.inodes = watchSeams.stampPollOff ? undefined
      : new StampPoll({ rootFd: door.rootFd, paths: door.approvedPaths, cleanStamp: door.cleanStamp, hint: (rel) => door.hint(rel, false) });
  }

  /** Arm the directory watches (inotify, else polling). Resolves once a watcher runs. */
  watch(): Promise<void> {
    return this.dirs.start();
  }

  /** Start the clocks (after the startup pass). */
  startClocks(): void {
    if (this.closed) return;
    this.timers.push(setInterval(() => this.rescanTick(), Math.max(100, this.door.config().rescan_seconds * 1000)));
    this.timers.push(setInterval(() => this.fastTick(), STAMP_TICK_MS));
  }

  /** The backstop rescan, then the directory watches put on the directories now at their paths. */
  private rescanTick(): void {
    this.door.sweep();
    this.safely('re-arming the directory watches', () => {
      for (const d of this.dirs.rearmChanged()) this.log(`<5>warden: re-armed the watch on ${d}`);
      this.dirs.tick();
    });
  }

  /**
   * The root path (a rename anywhere above it raises no event we watch), then the approved
   * files' stamps, a slice per tick (shared mappings raise no event: docs/CONTRACT.md §Detection).
   */
  private fastTick(): void {
    if (this.safely('checking the root path', () => this.door.rootPathHolds()) === false) { this.door.hint('', true); return; }
    const poll = this.inodes;
    if (poll) this.safely('polling stamps', () => poll.tick());
  }

  private safely<T>(what: string, fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      this.log(`<3>warden: ${what}: unexpected ${(err as { code?: string })?.code ?? (err as Error)?.message ?? String(err)}; will look again at the next rescan`);
      return undefined;
    }
  }

  /** Stop the clocks, the inode watches and the directory watches (idempotent). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers.splice(0)) clearInterval(t);
    this.inodes?.close();
    await this.dirs.close();
  }
}
