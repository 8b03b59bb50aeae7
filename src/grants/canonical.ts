/** Plain-data helpers for comparing parsed documents by meaning. Pure. */

export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A text that is equal for equal values, whatever the order of their objects' keys. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObject(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  if (v === undefined) return 'undefined';
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return JSON.stringify(v) ?? String(v);
}

export const sameValue = (a: unknown, b: unknown): boolean => a === b || canonical(a) === canonical(b);

/** Elements of `from` not matched one-for-one in `to` (a multiset difference, by canonical text). */
export function missingFrom(from: readonly unknown[], to: readonly unknown[]): unknown[] {
  const counts = new Map<string, number>();
  for (const v of to) { const c = canonical(v); counts.set(c, (counts.get(c) ?? 0) + 1); }
  const out: unknown[] = [];
  for (const v of from) {
    const c = canonical(v);
    const n = counts.get(c) ?? 0;
    if (n > 0) counts.set(c, n - 1); else out.push(v);
  }
  return out;
}
