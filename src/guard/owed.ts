/**
 * What a full disk kept back (docs/ARCHITECTURE.md, "Revert", the full disk): alerts that
 * could not be appended, and rejected bytes owed to quarantine, written as soon as there is
 * room, at most one try a second. Its own timer runs only while something is owed.
 */
import type { AlertSink } from './alert-sink.js';
import type { Quarantine } from './quarantine.js';

interface Owed { id: string; name: string; bytes: Buffer }

/** How often the timer looks whether a try is due (a try itself: at most once a second). */
const LOOK_MS = 100;

export class OwedWrites {
  private readonly owed: Owed[] = [];
  private triedAt = 0;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(private readonly alerts: AlertSink, private readonly quarantine: Quarantine, private readonly log: (line: string) => void) {}

  /** The rejected bytes of alert `id` (entry `name`), held in memory until quarantine has room. */
  push(id: string, name: string, bytes: Buffer): void {
    this.owed.push({ id, name, bytes });
    this.arm();
  }

  /** Something is owed (an alert kept in memory, rejected bytes): try until it is written. */
  arm(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => {
      try { this.keep(Date.now()); } catch (err) { this.log(`<3>warden: writing what a full disk kept back: unexpected ${(err as Error)?.message ?? String(err)}; will look again`); }
      if (this.owed.length === 0 && this.alerts.pending() === 0) this.disarm();
    }, LOOK_MS);
    this.timer.unref?.();
  }

  private disarm(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  stop(): void {
    this.stopped = true;
    this.disarm();
  }

  /**
   * Alerts first (never lose an alert; the rescan alone would leave them waiting up to
   * rescan_seconds), then rejected bytes owed to quarantine.
   */
  keep(now: number): void {
    const alertsWaiting = this.alerts.pending() > 0;
    if ((this.owed.length === 0 && !alertsWaiting) || now - this.triedAt < 1000) return;
    this.triedAt = now;
    if (alertsWaiting) {
      try { this.alerts.flush(); } catch { return; /* still full: the next second */ }
      this.log('<5>warden: there is room again: the alerts kept in memory are written');
    }
    while (this.owed.length) {
      const o = this.owed[0] as Owed;
      if (this.quarantine.write(o.id, o.name, o.bytes) === null) return;
      this.owed.shift();
      this.log(`<5>warden: there is room again: the rejected content of alert ${o.id} is now in quarantine`);
    }
  }
}
