/**
 * Key patterns of a profile (docs/PROFILES.md, "Keys"): a dotted path into a parsed
 * document, `"quoted"` for a part that holds a dot, `*` for any one part and `**` for any
 * number of parts (none included). Pure.
 */
import { splitDotted } from '../toml/index.js';

export type KeyPattern = readonly string[];
export type KeyPath = readonly (string | number)[];

export function parseKeyPattern(text: string): KeyPattern | undefined {
  if (text === '') return [];
  const parts = splitDotted(text);
  return parts.some((p) => p === '') ? undefined : parts;
}

/** Does `pattern` name exactly `path`? (Array indexes match `*` and their decimal form.) */
export function matchKey(pattern: KeyPattern, path: KeyPath): boolean {
  return matchFrom(pattern, 0, path, 0);
}

function matchFrom(p: KeyPattern, i: number, path: KeyPath, j: number): boolean {
  if (i === p.length) return j === path.length;
  const part = p[i] as string;
  if (part === '**') {
    for (let k = j; k <= path.length; k++) if (matchFrom(p, i + 1, path, k)) return true;
    return false;
  }
  if (j === path.length) return false;
  if (part !== '*' && part !== String(path[j])) return false;
  return matchFrom(p, i + 1, path, j + 1);
}

/** Could `pattern` name `path` or a key below it? (Is it worth looking inside `path`?) */
export function reachesBelow(pattern: KeyPattern, path: KeyPath): boolean {
  return prefixFrom(pattern, 0, path, 0);
}

function prefixFrom(p: KeyPattern, i: number, path: KeyPath, j: number): boolean {
  if (j === path.length) return i < p.length;
  if (i === p.length) return false;
  const part = p[i] as string;
  if (part === '**') return true;
  if (part !== '*' && part !== String(path[j])) return false;
  return prefixFrom(p, i + 1, path, j + 1);
}

/** Is `path` at or below a key `pattern` names? */
export function atOrBelow(pattern: KeyPattern, path: KeyPath): boolean {
  for (let n = path.length; n >= 0; n--) if (matchKey(pattern, path.slice(0, n))) return true;
  return false;
}

/** How specific a pattern is: literal parts count most, then length (a `**` counts least). */
export function specificity(pattern: KeyPattern): number {
  let s = 0;
  for (const part of pattern) s += part === '**' ? 0 : part === '*' ? 10 : 100;
  return s;
}

/** A key path as the owner reads it: `permissions.allow`, `mcpServers."a.b"`, `hooks.PreToolUse[0]`. */
export function keyWords(path: KeyPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') { out += `[${part}]`; continue; }
    const bare = /^[A-Za-z0-9_$@:/()-]+$/.test(part) ? part : JSON.stringify(part);
    out += out === '' ? bare : `.${bare}`;
  }
  return out;
}
