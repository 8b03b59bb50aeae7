/**
 * Markdown with YAML front matter (Claude Code's agents, commands and skills): the front
 * matter's keys, parsed by the `yaml` package (unique keys, no custom tags), plus the body
 * under the key `(body)` (docs/PROFILES.md, "Formats"). A file without front matter is
 * its body alone.
 */
import { parseDocument } from 'yaml';
import { dict } from '../common/dict.js';
import { toPlain } from './plain.js';
import type { ParseResult } from './types.js';

/** The key that holds a Markdown file's body (not a valid YAML front-matter key by accident: it has parentheses). */
export const BODY_KEY = '(body)';

const OPEN = /^---[ \t]*\r?\n/;
const CLOSE = /^---[ \t]*(?:\r?\n|$)/m;

export function parseFrontMatter(text: string, file: string): ParseResult {
  const src = text.startsWith('\uFEFF') ? text.slice(1) : text;
  const open = OPEN.exec(src);
  if (!open) return { ok: true, value: dict({ [BODY_KEY]: src }) };
  const rest = src.slice(open[0].length);
  const close = CLOSE.exec(rest);
  if (!close) return { ok: false, error: { file, line: 1, column: 1, message: 'the front matter opened by "---" on line 1 is never closed by a "---" line' } };
  const yamlText = rest.slice(0, close.index);
  const body = rest.slice(close.index + close[0].length);
  const doc = parseDocument(yamlText, { uniqueKeys: true, prettyErrors: true, customTags: [] });
  const first = doc.errors[0];
  if (first) {
    const at = first.linePos?.[0];
    // +1: the "---" line above the YAML.
    return { ok: false, error: { file, ...(at ? { line: at.line + 1, column: at.col } : {}), message: `front matter: ${(first.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '')}` } };
  }
  const fm = toPlain(doc.toJS({ maxAliasCount: 50 }) as unknown);
  if (fm !== null && fm !== undefined && (typeof fm !== 'object' || Array.isArray(fm))) {
    return { ok: false, error: { file, line: 2, column: 1, message: 'front matter must be a mapping of keys (key: value lines)' } };
  }
  const out = dict<unknown>((fm ?? {}) as Record<string, unknown>);
  out[BODY_KEY] = body;
  return { ok: true, value: out };
}
