import { locateKey, locatorFor } from '../toml/index.js';
import type { Located } from '../common/errors.js';

/**
 * Locate a string value inside the definition of a key: find the key's line with
 * locateKey, then the first occurrence of the quoted value at or after it (arrays may span
 * lines). Falls back to the key's own position. Best effort: only for pointing a person at
 * the right place.
 */
export function locateValue(source: string, path: readonly (string | number)[], value: string): { line: number; column: number } | undefined {
  const loc = locatorFor(source);
  const at = loc.locate(path);
  if (!at) return undefined;
  const lines = loc.lines;
  const needles = [JSON.stringify(value), `'${value}'`];
  for (let i = at.line - 1; i < Math.min(lines.length, at.line - 1 + 200); i++) {
    const text = lines[i] ?? '';
    for (const n of needles) {
      const col = text.indexOf(n, i === at.line - 1 ? at.column - 1 : 0);
      if (col >= 0) return { line: i + 1, column: col + 1 };
    }
  }
  return at;
}

/** Build a located error at a key path (or at one of its values). */
export function errAt(file: string, source: string, path: readonly (string | number)[], message: string, value?: string, lineOffset = 0): Located {
  const at = value === undefined ? locateKey(source, path) : locateValue(source, path, value);
  const key = path.map(String).join('.') || undefined;
  const out: Located = { file, message };
  if (at) { out.line = at.line + lineOffset; out.column = at.column; }
  if (key) out.key = key;
  return out;
}

/** Shift the line of errors found in an embedded TOML document (block front matter). */
export function shiftLines(errors: Located[], offset: number): Located[] {
  return errors.map((e) => (e.line === undefined ? e : { ...e, line: e.line + offset }));
}

/**
 * Every error points somewhere: one that names no findable key (a required key absent at
 * the top level) is placed at the start of the document, and says plainly that the key is
 * required instead of zod's "expected X, received undefined".
 */
export function ensureLocated(errors: Located[], line = 1): Located[] {
  return errors.map((e) => {
    if (e.line !== undefined) return e;
    const absent = /received undefined$/.test(e.message) || /^must be /.test(e.message);
    const message = absent ? (/^must be /.test(e.message) ? `is required; it ${e.message}` : 'is required') : e.message;
    return { ...e, message, line, column: 1 };
  });
}

/**
 * Define `obj[key]` as an own, enumerable property computed on first read (then kept), so
 * that a spread, JSON, deep equality or a structured clone (the view's builder thread) see
 * it as the value it is. Locations cost a scan of the whole text; a valid file's rules are
 * rarely asked where they are (the key locator was a fifth of a cold `warden
 * check` of the seed's 468 rules). Assigning the property replaces the value.
 */
export function lazyProperty<T extends object, K extends keyof T>(obj: T, key: K, compute: () => T[K]): T {
  let done = false;
  let value: T[K];
  Object.defineProperty(obj, key, {
    enumerable: true,
    configurable: true,
    get: () => { if (!done) { value = compute(); done = true; } return value; },
    set: (v: T[K]) => { value = v; done = true; },
  });
  return obj;
}
