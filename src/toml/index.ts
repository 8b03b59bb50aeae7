import { createRequire } from 'node:module';
import type * as SmolToml from 'smol-toml';

// smol-toml's CommonJS build is one file: ~2 ms to load, against ~12 ms for its nine ES
// modules, paid by every command and every guard start.
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

// The last few texts' results for parseTomlShared.
const recentParses: { source: string; file: string; result: TomlResult }[] = [];

/**
 * parseToml, reusing the result for a text parsed a moment ago: one `warden apply` of the
 * seed's 468 rules parsed the same 40 KB text for its syntax check and again for its policy
 * check. The value is shared: callers only read it.
 */
export function parseTomlShared(source: string, file: string): TomlResult {
  let hit = recentParses.find((r) => r.source === source && r.file === file);
  if (!hit) {
    hit = { source, file, result: parseToml(source, file) };
    recentParses.unshift(hit);
    if (recentParses.length > 4) recentParses.pop();
  }
  return hit.result;
}

/** True when the text holds nothing but whitespace and comments (smol-toml parses it to {}). */
export function isBlankToml(source: string): boolean {
  // A line whose first character after its leading whitespace is neither whitespace nor "#"
  // settles it at once (one native search; the line by line test was ~1 ms of a
  // cold parse of the seed's 468 rules). Otherwise the line by line test, the definition.
  if (NOT_BLANK_LINE.test(source)) return false;
  return source.split(/\r?\n/).every((l) => /^\s*(#.*)?$/.test(l));
}
const NOT_BLANK_LINE = /(?:^|\n)[^\S\n]*[^\s#]/;

export interface Position { line: number; column: number }

/**
 * Every key definition of a TOML text, found in one scan (smol-toml keeps no positions).
 * Built once per text, then each lookup costs the length of the key path, so locating
 * every rule of a 468-rule file is linear in the file (one rescan per rule made
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

/**
 * Lines scanned by keyLocator since the process started: work counted, not timed, so a
 * test can hold parsing to one scan per text on a loaded machine (test/policy/scale.test.ts).
 */
export const locatorWork = { lines: 0 };

const ARRAY_HEADER = /^\[\[\s*(.+?)\s*\]\]/;
const TABLE_HEADER = /^\[\s*(.+?)\s*\]/;

/**
 * Scan a TOML text once: track the current [table] / [[array]] header and dotted keys.
 * A key line is defined below the current table's node (the header already marked the
 * table's ancestors), so it walks only its own parts (the per-line work of a cold
 * scan of the seed's 468 rules).
 */
export function keyLocator(source: string): KeyLocator {
  const lines = source.split(/\r?\n/);
  locatorWork.lines += lines.length;
  const arrayCounts = new Map<string, number>();
  const top: KeyNode = {};
  // Walk (creating) the parts below `base`; nodes on the way note `at` as where a key below them is first defined.
  const defineBelow = (base: KeyNode, parts: readonly string[], at: Position): KeyNode => {
    let node = base;
    for (let d = 0; d < parts.length; d++) {
      const kids = node.kids ?? (node.kids = new Map());
      let next = kids.get(parts[d] as string);
      if (!next) { next = {}; kids.set(parts[d] as string, next); }
      node = next;
      if (d < parts.length - 1) node.below ??= at; else node.at ??= at;
    }
    return node;
  };
  let tableNode = top;
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i] as string;
    const text = raw.trim();
    if (text === '') continue;
    const c0 = text.charCodeAt(0);
    if (c0 === 35 /* # */) continue;
    const column = raw.length - raw.trimStart().length + 1;
    if (c0 === 91 /* [ */) {
      const arr = ARRAY_HEADER.exec(text);
      if (arr?.[1]) {
        const name = splitDotted(arr[1]);
        const key = name.join('.');
        const idx = arrayCounts.get(key) ?? 0;
        arrayCounts.set(key, idx + 1);
        tableNode = defineBelow(top, [...name, String(idx)], { line: i + 1, column });
        continue;
      }
      const tab = arr ? undefined : TABLE_HEADER.exec(text);
      if (tab?.[1]) {
        tableNode = defineBelow(top, splitDotted(tab[1]), { line: i + 1, column });
        continue;
      }
    }
    const eq = findUnquoted(text, '=');
    if (eq > 0) {
      const at = { line: i + 1, column };
      if (tableNode !== top) tableNode.below ??= at;
      defineBelow(tableNode, splitDotted(text.slice(0, eq)), at);
    }
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
  // Before any quote, the first `ch` is unquoted (native search).
  const first = s.indexOf(ch);
  if (first < 0) return -1;
  const q = s.search(QUOTE);
  if (q < 0 || q > first) return first;
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

/**
 * A dotted key split into its parts, quotes removed and each part trimmed. The common
 * forms (bare parts, quoted parts without a backslash) by native regexes: a cold parse of
 * the seed's 468 rules spent ~10 ms in a character loop here. Anything else
 * (a backslash, an unclosed quote) by the character loop, which is the definition.
 */
export function splitDotted(s: string): string[] {
  if (!QUOTE_OR_BACKSLASH.test(s)) {
    const parts = s.split('.');
    for (let i = 0; i < parts.length; i++) parts[i] = (parts[i] as string).trim();
    return parts;
  }
  const out: string[] = [];
  let cur = '';
  DOTTED_TOKEN.lastIndex = 0;
  while (DOTTED_TOKEN.lastIndex < s.length) {
    const m = DOTTED_TOKEN.exec(s);
    if (!m) return splitDottedChars(s);
    if (m[1] !== undefined) cur += m[1];
    else if (m[2] !== undefined) cur += m[2];
    else if (m[3] !== undefined) { out.push(cur.trim()); cur = ''; }
    else cur += m[0];
  }
  out.push(cur.trim());
  return out;
}

const QUOTE = /["']/;
const QUOTE_OR_BACKSLASH = /["'\\]/;
/** "…" without a backslash, '…', a dot, or a run of plain characters (sticky: no gaps). */
const DOTTED_TOKEN = /"([^"\\]*)"|'([^']*)'|(\.)|[^"'.\\]+/y;

export function splitDottedChars(s: string): string[] {
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
