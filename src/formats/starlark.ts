/**
 * Codex's execution-policy rules (`rules/*.rules`, Starlark calls such as
 * `prefix_rule(pattern = ["git", "push"], decision = "allow")`) as a list of statements,
 * each with comments dropped and whitespace outside strings collapsed, so that a
 * reformatting compares equal and every added or removed call is one entry. This is a
 * tokenizer, not an interpreter: whether a statement is valid Starlark is the runtime's
 * own check (`codex execpolicy check`; docs/PROFILES.md, "Formats"). An unclosed string or
 * bracket is an error located by line and column.
 */
import { positionAt } from './position.js';
import type { ParseResult } from './types.js';

export function parseStarlarkRules(text: string, file: string): ParseResult {
  const statements: string[] = [];
  let cur = '';
  let depth = 0;
  let pendingSpace = false;
  const openers: number[] = [];
  const emit = () => { const s = cur.trim(); if (s) statements.push(s); cur = ''; pendingSpace = false; };
  const put = (s: string) => {
    if (pendingSpace && cur && !/[([{,]$/.test(cur) && !/^[)\]},]/.test(s)) cur += ' ';
    pendingSpace = false;
    cur += s;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === '#') { while (i < text.length && text[i] !== '\n') i++; i--; continue; }
    if (c === '"' || c === "'") {
      const triple = text.startsWith(c.repeat(3), i);
      const q = triple ? c.repeat(3) : c;
      let j = i + q.length;
      for (; j < text.length; j++) {
        if (text[j] === '\\') { j++; continue; }
        if (!triple && text[j] === '\n') break;
        if (text.startsWith(q, j)) break;
      }
      if (j >= text.length || !text.startsWith(q, j)) return { ok: false, error: { file, ...positionAt(text, i), message: 'a string is not closed' } };
      put(text.slice(i, j + q.length));
      i = j + q.length - 1;
      continue;
    }
    if (c === '(' || c === '[' || c === '{') { depth++; openers.push(i); put(c); continue; }
    if (c === ')' || c === ']' || c === '}') {
      if (depth === 0) return { ok: false, error: { file, ...positionAt(text, i), message: `"${c}" closes nothing` } };
      depth--; openers.pop(); put(c); continue;
    }
    if (c === '\n' || c === ';') { if (depth === 0) emit(); else pendingSpace = true; continue; }
    if (/\s/.test(c)) { pendingSpace = true; continue; }
    if (c === '=' || c === ',') { cur = cur.replace(/ $/, ''); cur += c === '=' ? ' = ' : ', '; pendingSpace = false; continue; }
    put(c);
  }
  if (depth > 0) return { ok: false, error: { file, ...positionAt(text, openers[openers.length - 1] ?? 0), message: 'a bracket opened here is never closed' } };
  emit();
  return { ok: true, value: statements.map((s) => s.replace(/ {2,}/g, ' ').replace(/, ([)\]}])/g, '$1').replace(/,([)\]}])/g, '$1')) };
}
