/**
 * The guard's judgement of a write to a file its profile lets the runtime write
 * (docs/PROFILES.md, "The runtime's own writes"): the approved bytes and the new ones,
 * compared key by key and strictly, fail closed. Pure.
 *
 * A change is the runtime's `own` only when every key that changed lies within the keys
 * its profile names for its own writes (never an exception), each old and new value is a
 * plain value (string, number, true/false, null) of the same type, and a key that appears
 * or goes does so inside an object that was there before (no `tokens` table conjured out
 * of nothing). It is `on-behalf` when every changed key lies within the runtime's own or
 * on-behalf keys, at least one on-behalf, with no change of type. Anything else is
 * `foreign`: a text that is not UTF-8 or does not parse (a key given twice, a byte-order
 * mark, a comment in plain JSON), a file over JUDGE_MAX_BYTES, a value nested deeper than
 * JUDGE_MAX_DEPTH, a key renamed (one removed, one added: the new one is outside), a table
 * in place of a string, or any change in a file with no rule.
 */
import { parseAs, type Format } from '../formats/index.js';
import { keyWords, type KeyPath, type KeyPattern } from '../profiles/keys.js';
import { isObject, sameValue } from './canonical.js';
import { refreshesCredentials, writeModeAt, type WriteFacts } from './runtime-writes.js';

export const JUDGE_MAX_BYTES = 256 * 1024;
export const JUDGE_MAX_DEPTH = 64;

export type WriteJudgement =
  /** `keys`: the keys that changed, in the owner's words (raw: escape before printing); empty for a rewrite with the same meaning. */
  | { kind: 'own'; keys: string[] }
  | { kind: 'on-behalf'; keys: string[] }
  /**
   * `why`: one line, naming keys only, never values. Raw: escape before printing.
   * `unfinished`: the new version is empty or does not parse, in a file whose credentials the
   * runtime rewrites by itself: perhaps a write under way (truncate, then write), waited for.
   */
  | { kind: 'foreign'; why: string; unfinished?: true };

/** One key whose value differs; `inBoth`: the object holding it was there on both sides. */
interface Leaf { path: KeyPath; a: unknown; b: unknown; inBoth: boolean }

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

type TypeClass = 'string' | 'number' | 'boolean' | 'null' | 'array' | 'object' | 'other';
function typeClass(v: unknown): TypeClass {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (isObject(v)) return 'object';
  const t = typeof v;
  return t === 'string' || t === 'number' || t === 'boolean' ? t : 'other';
}
const plain = (v: unknown): boolean => { const t = typeClass(v); return t !== 'array' && t !== 'object' && t !== 'other'; };

class TooDeep extends Error {}

/** Every key whose value differs: objects present on both sides are opened, anything else is one leaf. */
function leaves(a: unknown, b: unknown, path: KeyPath, inBoth: boolean, out: Leaf[]): void {
  if (path.length > JUDGE_MAX_DEPTH) throw new TooDeep();
  if (sameValue(a, b)) return;
  if (isObject(a) && isObject(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      leaves(Object.hasOwn(a, k) ? a[k] : undefined, Object.hasOwn(b, k) ? b[k] : undefined, [...path, k], true, out);
    }
    return;
  }
  // A table that appears or goes (on one side only): opened too, its keys not inBoth.
  if ((isObject(a) && b === undefined) || (a === undefined && isObject(b))) {
    const o = (a ?? b) as Record<string, unknown>;
    for (const k of Object.keys(o)) leaves(a === undefined ? undefined : o[k], b === undefined ? undefined : o[k], [...path, k], false, out);
    if (Object.keys(o).length === 0) out.push({ path, a, b, inBoth });
    return;
  }
  out.push({ path, a, b, inBoth });
}

/**
 * `partial`: what a write cut short may leave: nothing, or (plain JSON) a text that JSON.parse
 * finds ending too early. Never bytes that are not UTF-8, a byte-order mark, a key given
 * twice, a comment or anything after the value: a reader that replaces bad bytes, skips the
 * mark or lets the last key win could read a whole document there (Codex's tokens are ASCII).
 */
function parse(format: Format, bytes: Buffer, side: string): { ok: true; value: unknown } | { ok: false; why: string; partial: boolean } {
  let text: string;
  try { text = utf8.decode(bytes); } catch { return { ok: false, why: `the ${side} version is not UTF-8 text`, partial: false }; }
  if (text.startsWith('\uFEFF')) return { ok: false, why: `the ${side} version starts with a byte-order mark`, partial: false };
  const r = parseAs(format, text, side);
  // Where only: a parser's message may quote the text, and the text may be a secret.
  return r.ok ? r : { ok: false, why: `the ${side} version does not parse (line ${r.error.line ?? '?'}, column ${r.error.column ?? '?'})`, partial: endsTooEarly(format, text) };
}

function endsTooEarly(format: Format, text: string): boolean {
  if (text.trim() === '') return true;
  if (format !== 'json') return false;
  try { JSON.parse(text); return false; } catch (err) {
    const m = /Unterminated string|Unexpected end of JSON input|at position (\d+)/.exec((err as Error).message);
    return m !== null && (m[1] === undefined || Number(m[1]) === text.length);
  }
}

export function judgeWrite(format: Format, facts: WriteFacts & { credentials: readonly { keys: readonly KeyPattern[] }[] }, approved: Buffer, candidate: Buffer): WriteJudgement {
  if (facts.runtimeWrites.length === 0) return { kind: 'foreign', why: 'the profile lets the runtime write no key of this file' };
  if (approved.length > JUDGE_MAX_BYTES || candidate.length > JUDGE_MAX_BYTES) return { kind: 'foreign', why: `over ${JUDGE_MAX_BYTES} bytes: not compared key by key` };
  const a = parse(format, approved, 'approved');
  if (!a.ok) return { kind: 'foreign', why: a.why };
  const b = parse(format, candidate, 'new');
  // Waited for only where the runtime rewrites credentials by itself: elsewhere an empty file could drop a deny list meanwhile.
  if (!b.ok) return b.partial && refreshesCredentials(facts) ? { kind: 'foreign', why: b.why, unfinished: true } : { kind: 'foreign', why: b.why };
  const found: Leaf[] = [];
  try { leaves(a.value, b.value, [], true, found); } catch (err) {
    if (err instanceof TooDeep || err instanceof RangeError) return { kind: 'foreign', why: `a value is nested deeper than ${JUDGE_MAX_DEPTH} levels` };
    throw err;
  }
  if (found.length === 0) {
    return facts.runtimeWrites.some((w) => w.write.mode === 'own') ? { kind: 'own', keys: [] } : { kind: 'foreign', why: 'no key changed, and the runtime does not rewrite this file by itself' };
  }
  let onBehalf = false;
  for (const l of found) {
    const key = keyWords(l.path) || '(the whole file)';
    const mode = writeModeAt(facts, l.path);
    if (mode === null) return { kind: 'foreign', why: `${key} is not a key the runtime may write` };
    if (l.a !== undefined && l.b !== undefined && typeClass(l.a) !== typeClass(l.b)) return { kind: 'foreign', why: `${key}: its type changed (${typeClass(l.a)} → ${typeClass(l.b)})` };
    if (mode === 'on-behalf') { onBehalf = true; continue; }
    if ((l.a !== undefined && !plain(l.a)) || (l.b !== undefined && !plain(l.b))) return { kind: 'foreign', why: `${key}: the runtime changes plain values by itself, not a list or a table` };
    if (!l.inBoth) return { kind: 'foreign', why: `${key}: added or removed with the table holding it` };
  }
  const keys = found.map((l) => keyWords(l.path));
  return onBehalf ? { kind: 'on-behalf', keys } : { kind: 'own', keys };
}
