import { createRequire } from 'node:module';
import type * as SmolToml from 'smol-toml';

// smol-toml's CommonJS build is one file: ~2 ms to load, against ~12 ms for its nine ES
// modules, paid by every command and every guard start (issue 17).
const { parse, TomlError } = createRequire(import.meta.url)('smol-toml') as typeof SmolToml;
import type { Located } from '../common/errors.js';

export type TomlTable = Record<string, unknown>;
export type TomlResult = { ok: true; value: TomlTable } | { ok: false; error: Located };

/** Parse TOML, turning smol-toml's TomlError into a located error (never throws). */
export function parseToml(source: string, file: string): TomlResult {
  try {
    return { ok: true, value: parse(source) as TomlTable };
  } catch (err) {
    if (err instanceof TomlError) {
      const firstLine = String(err.message).split('\n')[0] ?? 'invalid TOML';
      return { ok: false, error: { file, line: err.line, column: err.column, message: firstLine.replace(/^Invalid TOML document: /, '') } };
    }
    return { ok: false, error: { file, message: `invalid TOML: ${(err as Error)?.message ?? String(err)}` } };
  }
}

/** True when the text holds nothing but whitespace and comments (smol-toml parses it to {}). */
export function isBlankToml(source: string): boolean {
  return source.split(/\r?\n/).every((l) => /^\s*(#.*)?$/.test(l));
}

/**
 * Where is the key at `path` defined? smol-toml keeps no positions, so scan the source:
 * track the current [table] / [[array]] header and dotted keys, and return the line and
 * column of the deepest definition that is a prefix of `path`. Best effort by design:
 * it is used only to point a person at the right line.
 */
export function locateKey(source: string, path: readonly (string | number)[]): { line: number; column: number } | undefined {
  const want = path.map(String);
  const lines = source.split(/\r?\n/);
  const arrayCounts = new Map<string, number>();
  let table: string[] = [];
  let best: { line: number; column: number; depth: number } | undefined;
  // A key defined only through deeper headers ([files."/x"] defines "files") is found by
  // its first definition that extends the wanted path.
  let extension: { line: number; column: number } | undefined;
  const consider = (full: string[], line: number, column: number) => {
    let depth = 0;
    while (depth < full.length && depth < want.length && full[depth] === want[depth]) depth++;
    if (depth === full.length && depth > 0 && (!best || depth > best.depth)) best = { line, column, depth };
    if (depth === want.length && full.length > want.length && want.length > 0 && !extension) extension = { line, column };
  };
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] ?? '';
    const indent = raw.length - raw.trimStart().length;
    const text = raw.trim();
    if (text === '' || text.startsWith('#')) continue;
    const arr = /^\[\[\s*(.+?)\s*\]\]/.exec(text);
    const tab = arr ? undefined : /^\[\s*(.+?)\s*\]/.exec(text);
    if (arr?.[1]) {
      const name = splitDotted(arr[1]);
      const key = name.join('.');
      const idx = arrayCounts.get(key) ?? 0;
      arrayCounts.set(key, idx + 1);
      table = [...name, String(idx)];
      consider(table, i + 1, indent + 1);
      continue;
    }
    if (tab?.[1]) {
      table = splitDotted(tab[1]);
      consider(table, i + 1, indent + 1);
      continue;
    }
    const eq = findUnquoted(text, '=');
    if (eq > 0) consider([...table, ...splitDotted(text.slice(0, eq))], i + 1, indent + 1);
  }
  if (extension && (!best || best.depth < want.length)) return extension;
  return best ? { line: best.line, column: best.column } : undefined;
}

function findUnquoted(s: string, ch: string): number {
  let quote: string | null = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === ch) return i;
  }
  return -1;
}

function splitDotted(s: string): string[] {
  const out: string[] = [];
  let cur = '';
  let quote: string | null = null;
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string;
    if (quote) {
      if (c === '\\' && quote === '"' && i + 1 < s.length) cur += s[++i];
      else if (c === quote) quote = null;
      else cur += c;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '.') { out.push(cur.trim()); cur = ''; }
    else cur += c;
  }
  out.push(cur.trim());
  return out;
}
