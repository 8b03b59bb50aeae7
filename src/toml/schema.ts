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
  if (r.success) return { ok: true, value: r.data };
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
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string | number, unknown>)[k];
  }
  return v;
}
