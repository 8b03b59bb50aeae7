/**
 * Grants said in the owner's words (docs/PROFILES.md, "Grants"): a candidate text compared
 * with the approved one key by key, under a profile's facts about the file.
 */
import type { Located } from '../common/errors.js';
import { parseAs, type Format } from '../formats/index.js';
import { compareValues, type CompareFacts } from './compare.js';
import type { Comparison } from './types.js';

export { compareValues, fingerprintOf, NO_FACTS, type CompareFacts } from './compare.js';
export { classifyWrite, writeModeAt, type WriteFacts, type WriteVerdict } from './runtime-writes.js';
export { judgeWrite, JUDGE_MAX_BYTES, JUDGE_MAX_DEPTH, type WriteJudgement } from './write-judge.js';
export { CHANGE_KINDS, type ChangeKind, type Comparison, type GrantChange } from './types.js';

export type TextComparison = { ok: true; comparison: Comparison } | { ok: false; side: 'approved' | 'candidate'; error: Located };

/** Parse both texts in the file's format and compare them; a text that does not parse is named with its error. */
export function compareTexts(path: string, format: Format, approved: string, candidate: string, facts: CompareFacts): TextComparison {
  const a = parseAs(format, approved, path);
  if (!a.ok) return { ok: false, side: 'approved', error: a.error };
  const b = parseAs(format, candidate, path);
  if (!b.ok) return { ok: false, side: 'candidate', error: b.error };
  return { ok: true, comparison: compareValues(path, a.value, b.value, facts, { before: approved, after: candidate }) };
}
export { compareFile, type FileChange } from './for-file.js';
export { grantLines } from './lines.js';
export { grantsAt, recordOf, GRANTS_MAX, VALUE_MAX, COMPARE_MAX_BYTES, type GrantRecord, type RootGrants, type GrantOptions } from './for-root.js';
