/**
 * Records keyed by names that come from files (credential groups and keys, org and block
 * names, paths): docs/CONTRACT.md §Credentials says such names are data, never object properties. A dict has no
 * prototype, so `__proto__`, `constructor` or `toString` are ordinary keys: assigning one
 * never sets a prototype, reading one never finds an inherited Object.prototype member.
 */
export type Dict<T> = Record<string, T>;

/** An empty dict, or a copy of `from` (its own enumerable keys, `__proto__` included). */
export function dict<T>(from?: Readonly<Record<string, T>> | Iterable<readonly [string, T]>): Dict<T> {
  const d = Object.create(null) as Dict<T>;
  if (from) for (const [k, v] of (Symbol.iterator in from ? from as Iterable<readonly [string, T]> : Object.entries(from))) d[k] = v;
  return d;
}

/** `rec[key]` when `key` is rec's own key; never an inherited member. */
export function own<T>(rec: Readonly<Record<string, T>> | null | undefined, key: string): T | undefined {
  return rec != null && Object.hasOwn(rec, key) ? rec[key] : undefined;
}
