/**
 * JSON5 through the json5 package (the reference implementation), errors located by line
 * and column (docs/PROFILES.md, "Formats"). Objects become prototype-less dicts.
 */
import JSON5 from 'json5';
import { toPlain } from './plain.js';
import type { ParseResult } from './types.js';

export function parseJson5(text: string, file: string): ParseResult {
  try {
    return { ok: true, value: toPlain(JSON5.parse(text) as unknown) };
  } catch (err) {
    const e = err as SyntaxError & { lineNumber?: number; columnNumber?: number };
    const message = String(e.message ?? err).replace(/^JSON5: /, '').replace(/ at \d+:\d+$/, '');
    return { ok: false, error: { file, ...(e.lineNumber ? { line: e.lineNumber } : {}), ...(e.columnNumber ? { column: e.columnNumber } : {}), message } };
  }
}
