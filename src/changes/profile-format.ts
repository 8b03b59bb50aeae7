/**
 * warden's own check of a file proposed for a profile's root (docs/PROFILES.md, "Sanctioned
 * changes on a profile's root"): UTF-8 text, parsed in the format recorded for its path at
 * `warden init --profile` (the authenticated index, never the profile file), errors located
 * by line and column. Pure.
 */
import picomatch from 'picomatch';
import type { Located } from '../common/errors.js';
import { notTextReason } from '../common/text.js';
import { FORMATS, parseAs, type Format } from '../formats/index.js';
import { expandBraces, type ProfileRootRecord } from '../config/profile-root.js';

const isFormat = (f: string): f is Format => (FORMATS as readonly string[]).includes(f);

/** The format the record gives `relPath`: the first of its files whose path (or glob) matches. */
export function recordedFormat(record: ProfileRootRecord, relPath: string): Format | undefined {
  for (const f of record.files) {
    if (!expandBraces(f.path).some((p) => (p === relPath) || picomatch(p, { dot: true })(relPath))) continue;
    return isFormat(f.format) ? f.format : undefined;
  }
  return undefined;
}

/** Why the proposed bytes cannot be the file at `relPath`: not text, or not its format. */
export function profileFormatErrors(record: ProfileRootRecord, relPath: string, content: Buffer): Located[] {
  const notText = notTextReason(content);
  if (notText) return [{ file: relPath, message: `the proposed content ${notText}; a policy file is UTF-8 text` }];
  const format = recordedFormat(record, relPath);
  if (format === undefined) return [];
  const r = parseAs(format, content.toString('utf8'), relPath);
  return r.ok ? [] : [r.error];
}
