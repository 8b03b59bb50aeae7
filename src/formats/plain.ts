import { dict } from '../common/dict.js';

/**
 * A parsed value as plain data: every object a prototype-less dict of its own enumerable
 * keys (`__proto__` included), arrays as arrays, a Date (TOML) as its ISO text, scalars as
 * they are.
 */
export function toPlain(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(toPlain);
  if (v instanceof Date) return v.toISOString();
  if (v !== null && typeof v === 'object') {
    const out = dict<unknown>();
    for (const k of Object.keys(v)) out[k] = toPlain((v as Record<string, unknown>)[k]);
    return out;
  }
  return v;
}
