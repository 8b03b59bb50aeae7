/**
 * Restores that could not finish: one alert per failing path, then retries with exponential
 * backoff (250 ms … 60 s). Only the retry timer escalates the backoff: events arriving
 * meanwhile (our own failed attempt makes some) must not push the next retry further away.
 */
import { backoffDelay, type Backoff } from '../common/backoff.js';

/** 250 ms, 500 ms, 1 s … 60 s; no jitter: one guard, nothing to spread. */
const RETRY: Backoff = { baseMs: 250, capMs: 60_000 };

interface Failure { attempts: number; timer: NodeJS.Timeout | null; alerted: boolean }

export class RetryBook {
  private readonly failures = new Map<string, Failure>();
  private stopped = false;

  /**
   * Note a failure of `path`. `alertOnce` runs on the first failure only; `retry` runs from
   * the backoff timer.
   */
  failed(path: string, alertOnce: () => void, retry: () => void): void {
    let f = this.failures.get(path);
    if (!f) { f = { attempts: 0, timer: null, alerted: false }; this.failures.set(path, f); }
    if (f.timer && f.alerted) return;
    f.attempts++;
    if (!f.alerted) { f.alerted = true; alertOnce(); }
    if (f.timer) clearTimeout(f.timer);
    if (this.stopped) return;
    const delay = backoffDelay(RETRY, f.attempts);
    f.timer = setTimeout(() => {
      const cur = this.failures.get(path);
      if (cur) cur.timer = null;
      retry();
    }, delay);
    f.timer.unref?.();
  }

  /** The path is right again. Returns true when it had been failing. */
  clear(path: string): boolean {
    const f = this.failures.get(path);
    if (!f) return false;
    if (f.timer) clearTimeout(f.timer);
    this.failures.delete(path);
    return true;
  }

  paths(): string[] {
    return [...this.failures.keys()];
  }

  stop(): void {
    this.stopped = true;
    for (const f of this.failures.values()) if (f.timer) clearTimeout(f.timer);
    this.failures.clear();
  }
}
