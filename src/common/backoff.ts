/**
 * Exponential backoff, the one implementation: the guard's revert retry and the notifier's
 * delivery retry both use it. Pure (the caller passes the random source), so it is tested
 * without timers.
 */
export interface Backoff {
  /** Delay after the first failure. */
  baseMs: number;
  /** Never more than this (before jitter). */
  capMs: number;
  /** ±fraction of random spread (0.2 = ±20 %), so many clients do not retry in step. 0: none. */
  jitter?: number;
}

/**
 * The delay before the next attempt after `failures` consecutive failures (1 = the first):
 * base · 2^(failures−1), capped, then spread by ±jitter. `random` returns [0, 1).
 */
export function backoffDelay(b: Backoff, failures: number, random: () => number = Math.random): number {
  const n = Math.max(1, Math.floor(failures));
  // 2^30 already exceeds any cap in ms; the exponent is clamped so the product stays finite.
  const exp = Math.min(b.capMs, b.baseMs * 2 ** Math.min(n - 1, 30));
  const j = b.jitter ?? 0;
  return j > 0 ? exp * (1 - j + 2 * j * random()) : exp;
}
