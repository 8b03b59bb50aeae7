/**
 * One entry for a caller that holds a profile and a concrete file (the guard, `diff`, an
 * approval prompt, later): which entry of the profile the file is, its comparison, and
 * whose write the change can be (docs/PROFILES.md, "Grants", "The runtime's own writes").
 */
import type { Located } from '../common/errors.js';
import { factsFor, fileEntryFor, type Places } from '../profiles/paths.js';
import type { ProfileData, ProfileFile } from '../profiles/schema.js';
import { compareTexts } from './index.js';
import { classifyWrite, type WriteVerdict } from './runtime-writes.js';
import type { Comparison } from './types.js';

export type FileChange =
  | { ok: true; entry: ProfileFile; comparison: Comparison; write: WriteVerdict }
  | { ok: false; reason: 'not-in-profile' }
  | { ok: false; reason: 'unparsable'; side: 'approved' | 'candidate'; error: Located };

export function compareFile(profile: ProfileData, places: Places, absPath: string, approved: string, candidate: string): FileChange {
  const entry = fileEntryFor(profile, absPath, places);
  if (!entry) return { ok: false, reason: 'not-in-profile' };
  const facts = factsFor(profile, entry);
  const r = compareTexts(absPath, entry.format, approved, candidate, facts);
  if (!r.ok) return { ok: false, reason: 'unparsable', side: r.side, error: r.error };
  return { ok: true, entry, comparison: r.comparison, write: classifyWrite(r.comparison.changes, facts) };
}
