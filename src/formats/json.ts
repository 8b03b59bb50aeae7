/**
 * JSON and JSON with comments (JSONC: comments and trailing commas), through Microsoft's
 * jsonc-parser (the parser VS Code uses), with every error located by line and column
 * (docs/PROFILES.md, "Formats"). The value is built from the parse tree, not by the
 * library's own object builder: objects are prototype-less dicts (a key `__proto__` stays a
 * key), and a key given twice in one object is an error, since runtimes disagree on which
 * one wins and a grant must never hide behind the one a reader does not look at.
 */
import { parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import { dict } from '../common/dict.js';
import { positionAt } from './position.js';
import type { ParseResult } from './types.js';

export interface JsonOptions {
  /** JSONC: allow comments and trailing commas. Plain JSON refuses both. */
  comments: boolean;
}

const MESSAGES: Record<string, string> = {
  InvalidSymbol: 'unexpected character',
  InvalidNumberFormat: 'invalid number',
  PropertyNameExpected: 'a property name (a string in double quotes) was expected',
  ValueExpected: 'a value was expected',
  ColonExpected: 'a ":" was expected',
  CommaExpected: 'a "," was expected',
  CloseBraceExpected: 'a "}" was expected',
  CloseBracketExpected: 'a "]" was expected',
  EndOfFileExpected: 'nothing may follow the value',
  InvalidCommentToken: 'comments are not allowed in JSON (the file is plain JSON)',
  UnexpectedEndOfComment: 'a comment is not closed',
  UnexpectedEndOfString: 'a string is not closed',
  UnexpectedEndOfNumber: 'a number ends too early',
  InvalidUnicode: 'invalid \\u escape',
  InvalidEscapeCharacter: 'invalid escape character',
  InvalidCharacter: 'invalid character in a string (a control character must be escaped)',
};

export function parseJson(text: string, file: string, options: JsonOptions): ParseResult {
  const errors: ParseError[] = [];
  const root = parseTree(text, errors, { allowTrailingComma: options.comments, disallowComments: !options.comments, allowEmptyContent: false });
  const first = errors[0];
  if (first) {
    const code = printParseErrorCode(first.error);
    // jsonc-parser reports a trailing comma as a missing value or property name.
    const trailing = !options.comments && /^\s*[}\]]/.test(text.slice(first.offset)) && /,\s*$/.test(text.slice(0, first.offset));
    return { ok: false, error: { file, ...positionAt(text, first.offset), message: trailing ? 'a trailing comma is not allowed in JSON (the file is plain JSON)' : (MESSAGES[code] ?? code) } };
  }
  if (!root) return { ok: false, error: { file, line: 1, column: 1, message: 'the file holds no JSON value' } };
  const dup = { at: -1, key: '' };
  const value = build(root, dup);
  if (dup.at >= 0) return { ok: false, error: { file, ...positionAt(text, dup.at), key: dup.key, message: `the key ${JSON.stringify(dup.key)} is given twice in one object` } };
  if (!options.comments) {
    // Plain JSON: what the runtime itself will read with JSON.parse must parse there too
    // (fail closed on anything the tolerant scanner let through).
    try { JSON.parse(text); } catch (err) {
      return { ok: false, error: { file, line: 1, column: 1, message: `not valid JSON: ${(err as Error).message.split('\n')[0]}` } };
    }
  }
  return { ok: true, value };
}

/** The value of a parse-tree node: dicts for objects; the first duplicate key noted in `dup`. */
function build(node: Node, dup: { at: number; key: string }): unknown {
  switch (node.type) {
    case 'object': {
      const out = dict<unknown>();
      for (const prop of node.children ?? []) {
        const [k, v] = prop.children ?? [];
        if (!k || !v) continue;
        const key = String(k.value);
        if (Object.hasOwn(out, key) && dup.at < 0) { dup.at = k.offset; dup.key = key; }
        out[key] = build(v, dup);
      }
      return out;
    }
    case 'array':
      return (node.children ?? []).map((c) => build(c, dup));
    default:
      return node.value;
  }
}
