import type { z } from 'zod';
import type { Located } from '../common/errors.js';
import { locateKey } from './index.js';

/**
 * Validate parsed TOML against a strict zod schema and turn every issue into a located
 * error naming the key (file:line:column where the key can be found in the source).
 */
export function validateToml<T>(schema: z.ZodType<T>, value: unknown, source: string, file: string, prefix: readonly (string | number)[] = []):
  { ok: true; value: T } | { ok: false; errors: Located[] } {
  const r = schema.safeParse(value);
  if (r.success) {
    // A record (zod) drops a key named __proto__ without a word: refuse it, located, rather
    // than lose a table silently (SPEC §7: names are data; __proto__ is refused here).
    const lost = droppedProto(value, r.data, []);
    if (lost.length === 0) return { ok: true, value: r.data };
    return { ok: false, errors: lost.map((path) => ({ file, key: path.join('.'), message: 'the name "__proto__" is not allowed here; choose another name', ...(locateKey(source, path) ?? {}) })) };
  }
  const errors: Located[] = [];
  for (const issue of r.error.issues) {
    const basePath = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    // zod reports unknown keys on the parent; point at the key itself.
    const keys: (string | number)[][] = issue.code === 'unrecognized_keys'
      ? (issue as unknown as { keys: string[] }).keys.map((k) => [...basePath, k])
      : [basePath];
    for (const inner of keys) {
      // `value` sits at `prefix` in the document: locate and name the key by its full path.
      const path = [...prefix, ...inner];
      const at = locateKey(source, path);
      const key = path.join('.') || '(top level)';
      const message = issue.code === 'unrecognized_keys' ? `unknown key "${path[path.length - 1]}"`
        // A required key that is absent: say so, not only what its type must be.
        : (issue.code === 'invalid_type' || issue.code === 'invalid_union') && inner.length > 0 && valueAt(value, inner) === undefined
          ? (/^must be /.test(issue.message) ? `is required; it ${issue.message}` : 'is required')
          : issue.message;
      errors.push({ file, key, message, ...(at ?? {}) });
    }
  }
  return { ok: false, errors };
}

function valueAt(value: unknown, path: readonly (string | number)[]): unknown {
  let v = value;
  for (const k of path) {
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, k)) return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}

const isTable = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !(v instanceof Date);

/** Paths of keys named __proto__ in the parsed TOML that the validated value does not have. */
function droppedProto(raw: unknown, out: unknown, path: (string | number)[]): (string | number)[][] {
  if (!isTable(raw)) return [];
  const found: (string | number)[][] = [];
  const keys: (string | number)[] = Array.isArray(raw) ? raw.map((_, i) => i) : Object.keys(raw);
  for (const k of keys) {
    const has = isTable(out) && Object.hasOwn(out, k);
    if (!has) { if (k === '__proto__') found.push([...path, k]); continue; }
    found.push(...droppedProto((raw as Record<string | number, unknown>)[k], (out as Record<string | number, unknown>)[k], [...path, k]));
  }
  return found;
}
