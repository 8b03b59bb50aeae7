/**
 * The last few results of a pure parser, by (text, file). One `warden apply` builds the
 * policy of the root before and after its change several times over (the file alone, the
 * set before and after, at the proposal and again under the lock): at the seed's scale a
 * cold parse of guests.toml's 600 folders or of warden.toml (zod) costs milliseconds each
 * time. `copy` gives each caller arrays of its own (callers push to them); the
 * rest of a result is shared, so it is frozen.
 */
export function recentResults<R>(parse: (text: string, file: string) => R, copy: (r: R) => R, size = 4): (text: string, file: string) => R {
  const recent: { text: string; file: string; result: R }[] = [];
  return (text, file) => {
    let hit = recent.find((r) => r.text === text && r.file === file);
    if (!hit) {
      const result = parse(text, file);
      // Shared from now on: everything but the caller's own arrays is frozen (deepFreeze).
      for (const [k, v] of Object.entries(result as object)) if (k !== 'errors' && k !== 'warnings') deepFreeze(v);
      hit = { text, file, result };
      recent.unshift(hit);
      if (recent.length > size) recent.pop();
    }
    return copy(hit.result);
  };
}

/**
 * Freeze a cached result's payload, all the way down (data properties only: a lazy location
 * getter is left to compute on first use). A cached result is shared by every later caller
 * with the same text, the runtime's view among them: a caller that pushed a folder into what
 * it got would widen the policy of every one after it. Frozen, such a change throws (ESM
 * code is strict) and the file's own content stays the answer.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  Object.freeze(value);
  for (const d of Object.values(Object.getOwnPropertyDescriptors(value))) if ('value' in d) deepFreeze(d.value);
  return value;
}
