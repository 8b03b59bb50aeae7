import type { z } from 'zod';
import type { Located } from '../common/errors.js';
import { locateKey } from './index.js';
import { didYouMean } from '../common/suggest.js';

/**
 * Validate parsed TOML against a strict zod schema and turn every issue into a located
 * error naming the key (file:line:column where the key can be found in the source).
 */
export function validateToml<T>(schema: z.ZodType<T>, value: unknown, source: string, file: string, prefix: readonly (string | number)[] = []):
  { ok: true; value: T } | { ok: false; errors: Located[] } {
  const r = schema.safeParse(value);
  if (r.success) {
    // A record (zod) drops a key named __proto__ without a word: refuse it, located, rather
    // than lose a table silently (docs/CONTRACT.md §Credentials: names are data; __proto__ is refused here).
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
      const message = issue.code === 'unrecognized_keys' ? `unknown key "${path[path.length - 1]}"${didYouMean(String(inner[inner.length - 1]), keysAt(schema, basePath) ?? [])}`
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

type Def = { type?: string; innerType?: unknown; in?: unknown; shape?: Record<string, unknown>; element?: unknown; valueType?: unknown; options?: unknown[]; getter?: () => unknown };
const defOf = (s: unknown): Def | undefined => (s as { _zod?: { def?: Def } } | undefined)?._zod?.def;

function unwrap(s: unknown): unknown {
  for (let i = 0; i < 16; i++) {
    const d = defOf(s);
    if (!d) return s;
    if (d.type === 'optional' || d.type === 'default' || d.type === 'nullable' || d.type === 'prefault' || d.type === 'catch' || d.type === 'readonly' || d.type === 'nonoptional') s = d.innerType;
    else if (d.type === 'pipe') s = d.in;
    else if (d.type === 'lazy' && d.getter) s = d.getter();
    else return s;
  }
  return s;
}

/** The keys a strict object schema takes at `path` (for "did you mean"), or null. */
function keysAt(schema: unknown, path: readonly (string | number)[]): string[] | null {
  let s = unwrap(schema);
  for (const k of path) {
    const d = defOf(s);
    if (!d) return null;
    if (d.type === 'object' && d.shape) s = d.shape[String(k)];
    else if (d.type === 'array') s = d.element;
    else if (d.type === 'record') s = d.valueType;
    else if (d.type === 'union' && d.options) s = d.options.map(unwrap).find((o) => defOf(o)?.type === 'object' && Object.hasOwn(defOf(o)!.shape ?? {}, String(k)));
    else return null;
    s = unwrap(s);
  }
  const d = defOf(s);
  return d?.type === 'object' && d.shape ? Object.keys(d.shape) : null;
}
