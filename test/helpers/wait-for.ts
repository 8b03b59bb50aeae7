/**
 * The one poll-with-deadline helper for tests and benchmarks (never a fixed sleep).
 * `pred` may be async and may return any value: the first truthy value is returned.
 * An exception from `pred` counts as "not yet" (a file may not exist yet), but it is
 * never lost: if the deadline passes, the timeout error says what we waited for and
 * carries the last exception as its message tail and `cause`.
 */
export async function waitFor<T>(pred: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition', everyMs = 10): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let lastError: unknown;
    let failed = false;
    try {
      const v = await pred();
      if (v) return v as NonNullable<T>;
    } catch (e) { lastError = e; failed = true; }
    if (Date.now() > deadline) {
      const tail = failed ? `; the condition last threw: ${lastError instanceof Error ? lastError.message : String(lastError)}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${tail}`, failed ? { cause: lastError } : undefined);
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
