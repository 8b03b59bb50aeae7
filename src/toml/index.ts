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

export interface Position { line: number; column: number }

/**
 * Every key definition of a TOML text, found in one scan (smol-toml keeps no positions).
 * Built once per text, then each lookup costs the length of the key path, so locating
 * every rule of a 468-rule file is linear in the file (issue 23: one rescan per rule made
 * it quadratic). Best effort by design: it only points a person at the right line.
 */
export interface KeyLocator {
  /** The lines of the text (split on \n or \r\n), shared with value lookups. */
  readonly lines: readonly string[];
  /**
   * Where is the key at `path` defined? The deepest definition that is a prefix of `path`
   * (the first of them); a key defined only through deeper headers ([files."/x"] defines
   * "files") is found by its first definition that extends the wanted path.
   */
  locate(path: readonly (string | number)[]): Position | undefined;
}

/** One key of the trie: where it is first defined, and where a key below it first is. */
interface KeyNode { at?: Position; below?: Position; kids?: Map<string, KeyNode> }

/** Scan a TOML text once: track the current [table] / [[array]] header and dotted keys. */
export function keyLocator(source: string): KeyLocator {
  const lines = source.split(/\r?\n/);
  const arrayCounts = new Map<string, number>();
  const top: KeyNode = {};
  let table: string[] = [];
  const define = (full: string[], line: number, column: number) => {
    if (full.length === 0) return;
    const at = { line, column };
    let node = top;
    for (let d = 0; d < full.length; d++) {
      const kids = node.kids ?? (node.kids = new Map());
      let next = kids.get(full[d] as string);
      if (!next) { next = {}; kids.set(full[d] as string, next); }
      node = next;
      if (d < full.length - 1) node.below ??= at; else node.at ??= at;
    }
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
      define(table, i + 1, indent + 1);
      continue;
    }
    if (tab?.[1]) {
      table = splitDotted(tab[1]);
      define(table, i + 1, indent + 1);
      continue;
    }
    const eq = findUnquoted(text, '=');
    if (eq > 0) define([...table, ...splitDotted(text.slice(0, eq))], i + 1, indent + 1);
  }
  return {
    lines,
    locate(path) {
      // The deepest defined prefix of the path (the first definition of it), unless the
      // whole path is defined only through deeper keys: then the first of those.
      let node: KeyNode | undefined = top;
      let deepest: Position | undefined;
      for (const k of path) {
        node = node.kids?.get(String(k));
        if (!node) break;
        if (node.at) deepest = node.at;
      }
      const hit = node && path.length > 0 ? (node.at ?? node.below ?? deepest) : deepest;
      return hit ? { line: hit.line, column: hit.column } : undefined;
    },
  };
}

// The last few texts' locators: callers ask about one text many times in a row.
const recent: { source: string; locator: KeyLocator }[] = [];

/** The locator of a text, reused while the same text is asked about again. */
export function locatorFor(source: string): KeyLocator {
  for (const r of recent) if (r.source === source) return r.locator;
  const locator = keyLocator(source);
  recent.unshift({ source, locator });
  if (recent.length > 4) recent.pop();
  return locator;
}

/** Where is the key at `path` defined? (See KeyLocator.locate.) */
export function locateKey(source: string, path: readonly (string | number)[]): Position | undefined {
  return locatorFor(source).locate(path);
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
