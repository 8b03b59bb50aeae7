/**
 * A change's grants as lines for a terminal or a message (docs/PROFILES.md, "Grants in
 * alerts, diffs and prompts"). Pure, and light: the notifier and `warden alerts` read
 * grants back from alerts.jsonl and need none of the parsers.
 */
import { escapeText } from '../common/escape.js';

/**
 * The grants as lines for a terminal or a message: each change's words (escaped again and
 * clipped: a record read back from a file is data), a grant marked `grant`, at most `max`
 * lines, then "and N more".
 */
export function grantLines(g: { grants: readonly { words: unknown; grant: unknown }[]; left_off?: unknown }, max = 10): string[] {
  const clip = (s: string) => (s.length > 300 ? `${s.slice(0, 299)}…` : s);
  const lines = g.grants.slice(0, max).map((x) => `${x.grant === true ? 'grant ' : ''}${clip(escapeText(String(x.words)))}`);
  const leftOff = typeof g.left_off === 'number' && Number.isSafeInteger(g.left_off) && g.left_off > 0 ? g.left_off : 0;
  const more = g.grants.length - Math.min(max, g.grants.length) + leftOff;
  if (more > 0) lines.push(`and ${more} more`);
  return lines;
}
