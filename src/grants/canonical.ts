/** Plain-data helpers for comparing parsed documents by meaning. Pure. */

export const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * A text that is equal for equal values, whatever the order of their objects' keys.
 * `memo` (one per comparison, never shared: a caller may change its objects between two)
 * keeps each container's text, so a walk that asks about every level stays linear.
 */
export function canonical(v: unknown, memo?: WeakMap<object, string>): string {
  if (v !== null && typeof v === 'object') {
    const hit = memo?.get(v);
    if (hit !== undefined) return hit;
    const text = Array.isArray(v)
      ? `[${v.map((e) => canonical(e, memo)).join(',')}]`
      : `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k], memo)}`).join(',')}}`;
    memo?.set(v, text);
    return text;
  }
  if (v === undefined) return 'undefined';
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return JSON.stringify(v) ?? String(v);
}

/**
 * Equal in meaning: the same scalars (as their JSON text), lists equal entry by entry in
 * order, objects with the same keys in any order. No text is built: it stops at the first
 * difference, and an equal subtree costs one pass.
 */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameValue(a[i], b[i])) return false;
    return true;
  }
  if (isObject(a)) {
    if (!isObject(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    for (const k of ka) if (!Object.hasOwn(b, k) || !sameValue(a[k], b[k])) return false;
    return true;
  }
  if (b === null || typeof b === 'object' || a === null || typeof a === 'object') return false;
  return canonical(a) === canonical(b);
}

/** Elements of `from` not matched one-for-one in `to` (a multiset difference, by canonical text). */
export function missingFrom(from: readonly unknown[], to: readonly unknown[], memo?: WeakMap<object, string>): unknown[] {
  const counts = new Map<string, number>();
  for (const v of to) { const c = canonical(v, memo); counts.set(c, (counts.get(c) ?? 0) + 1); }
  const out: unknown[] = [];
  for (const v of from) {
    const c = canonical(v, memo);
    const n = counts.get(c) ?? 0;
    if (n > 0) counts.set(c, n - 1); else out.push(v);
  }
  return out;
}
