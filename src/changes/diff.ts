/**
 * What a change does, for a person to approve: a line diff for ordinary files, and for
 * credential files only the keys with their fingerprints (docs/CONTRACT.md §Baseline: no value on screen).
 */
import { diffCredentials } from '../credentials/rules.js';
import type { WardenConfig } from '../config/warden-config.js';
import type { FileKind } from '../config/protected-set.js';
import { createHash } from 'node:crypto';
import { notTextReason } from '../common/text.js';

export interface DiffInput {
  path: string; kind: FileKind; before: Buffer | null; after: Buffer | null; beforeMode?: number | null; afterMode?: number | null;
  /** What the change grants or takes away, as lines (changes/grants.ts grantBlock): shown under the file's head. */
  grants?: readonly string[];
  /** A file whose credentials the runtime rewrites (grants/redact.ts): each side as shown, credential values as fingerprints. */
  redact?: (b: Buffer) => string | undefined;
}

const oct = (m: number): string => m.toString(8).padStart(4, '0');

export function describeChanges(items: readonly DiffInput[], config: WardenConfig): string {
  return items.map((i) => describeOne(i, config)).join('\n');
}

function describeOne(i: DiffInput, config: WardenConfig): string {
  const modeChange = i.after !== null && i.before !== null && i.beforeMode != null && i.afterMode != null && i.beforeMode !== i.afterMode;
  const modeLine = modeChange ? `  mode ${oct(i.beforeMode as number)} → ${oct(i.afterMode as number)}` : '';
  if (modeChange && i.before !== null && i.after !== null && i.before.equals(i.after)) return `--- ${i.path} (approved)\n+++ ${i.path} (proposed)\n${modeLine} (content unchanged)`;
  const head = i.after === null ? `--- remove ${i.path}` : i.before === null ? `+++ new file ${i.path} (${i.after.length} bytes${i.afterMode != null ? `, mode ${oct(i.afterMode)}` : ''})` : `--- ${i.path} (approved)\n+++ ${i.path} (proposed)${modeChange ? `\n${modeLine}` : ''}`;
  if (i.after === null) return head;
  const grants = i.grants?.length ? `\n${i.grants.join('\n')}` : '';
  if (i.kind === 'credentials') {
    const d = diffCredentials(i.before?.toString('utf8') ?? null, i.after.toString('utf8'), config, i.path);
    const lines = d.changes.map((c) => {
      const id = `${c.group}.${c.key}`;
      if (c.before === null) return `  + ${id}  (new) ${c.after}`;
      if (c.after === null) return `  - ${id}  ${c.before} (removed)`;
      return `  ~ ${id}  ${c.before} → ${c.after}`;
    });
    if (!lines.length) lines.push('  (no value changes; comments or layout only)');
    return `${head}${grants}\n  credential values are shown as fingerprints (first 12 hex digits of sha256)\n${lines.join('\n')}`;
  }
  const shownAfter = i.redact?.(i.after);
  if (i.redact && shownAfter !== undefined) {
    return `${head}${grants}\n  credential values are shown as fingerprints (first 12 hex digits of sha256)\n${lineDiff(i.before ? i.redact(i.before) ?? '' : '', shownAfter)}`;
  }
  return `${head}${grants}\n${binaryDiff(i.before, i.after, 'approved', 'proposed') ?? lineDiff(i.before?.toString('utf8') ?? '', i.after.toString('utf8'))}`;
}

const shortSha = (b: Buffer): string => createHash('sha256').update(b).digest('hex').slice(0, 12);
const side = (b: Buffer | null): string => (b === null ? 'none' : `${b.length.toLocaleString('en-US')} bytes, sha256 ${shortSha(b)}${notTextReason(b) ? ', binary' : ''}`);

/**
 * When either side is not text (a NUL byte, or not UTF-8), the content is summarised as
 * git does ("Binary files differ"), with sizes and hashes, never printed: a line diff of
 * an ELF file is kilobytes of escapes. Null when both sides are text. Pure.
 */
export function binaryDiff(before: Buffer | null, after: Buffer | null, beforeLabel: string, afterLabel: string): string | null {
  if (!(before && notTextReason(before)) && !(after && notTextReason(after))) return null;
  if (before && after && before.equals(after)) return `  binary content, unchanged (${side(after)})`;
  return `  binary content differs (not shown): ${beforeLabel} ${side(before)} → ${afterLabel} ${side(after)}`;
}

/** "CRLF", "LF", "mixed" or "none": how a text ends its lines. */
function endings(t: string): string {
  const crlf = (t.match(/\r\n/g) ?? []).length;
  const lf = (t.match(/\n/g) ?? []).length - crlf;
  return crlf && lf ? 'mixed' : crlf ? 'CRLF' : lf ? 'LF' : 'none';
}

/**
 * A compact line diff (LCS), one line of context around each change. A change of line
 * endings (CRLF ↔ LF) is said as such, not shown as every line rewritten; the text is
 * compared without them.
 */
export function lineDiff(a: string, b: string): string {
  if (a !== b && /\r\n/.test(a + b)) {
    const na = a.replace(/\r\n/g, '\n');
    const nb = b.replace(/\r\n/g, '\n');
    const note = `  (line endings ${endings(a)} → ${endings(b)})`;
    if (na === nb) return `  line endings only: ${endings(a)} → ${endings(b)}, ${na.split('\n').length - (na.endsWith('\n') ? 1 : 0)} line(s); the text is the same`;
    if (endings(a) !== endings(b)) return `${note}\n${plainLineDiff(na, nb)}`;
  }
  return plainLineDiff(a, b);
}

function plainLineDiff(a: string, b: string): string {
  // The newline that ends both texts is no line of its own, and an empty text has no lines
  // (diff(1) and git show none); when only one text ends with it, the extra empty line says so.
  const ends = (s: string): boolean => s === '' || s.endsWith('\n');
  const both = ends(a) && ends(b);
  const lines = (s: string): string[] => (s === '' ? [] : (both ? s.slice(0, -1) : s).split('\n'));
  const x = lines(a);
  const y = lines(b);
  // The lines both ends share are context as they stand: only the middle needs the LCS
  // (the seed's 468-rule conditions.toml is ~2,400 lines, and the full table made
  // every apply of it cost ~100 ms, or said "too large to diff" past 4 million cells).
  let pre = 0;
  while (pre < x.length && pre < y.length && x[pre] === y[pre]) pre++;
  let suf = 0;
  while (suf < x.length - pre && suf < y.length - pre && x[x.length - 1 - suf] === y[y.length - 1 - suf]) suf++;
  const n = x.length - suf, m = y.length - suf;
  if ((n - pre) * (m - pre) > 4_000_000) return `  (${x.length} → ${y.length} lines; too large to diff line by line)`;
  const dp: Uint32Array[] = Array.from({ length: n - pre + 1 }, () => new Uint32Array(m - pre + 1));
  const at = (i: number, j: number): number => dp[i - pre]![j - pre]!;
  for (let i = n - 1; i >= pre; i--) for (let j = m - 1; j >= pre; j--) {
    dp[i - pre]![j - pre] = x[i] === y[j] ? at(i + 1, j + 1) + 1 : Math.max(at(i + 1, j), at(i, j + 1));
  }
  const ops: { t: ' ' | '-' | '+'; s: string; ln: number }[] = [];
  for (let k = 0; k < pre; k++) ops.push({ t: ' ', s: x[k]!, ln: k + 1 });
  let i = pre, j = pre;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] === y[j]) { ops.push({ t: ' ', s: x[i]!, ln: j + 1 }); i++; j++; }
    // Removals before additions, as diff(1) and git print them.
    else if (i < n && (j >= m || at(i + 1, j) >= at(i, j + 1))) { ops.push({ t: '-', s: x[i]!, ln: i + 1 }); i++; }
    else { ops.push({ t: '+', s: y[j]!, ln: j + 1 }); j++; }
  }
  for (let k = 0; k < suf; k++) ops.push({ t: ' ', s: y[m + k]!, ln: m + k + 1 });
  const keep = new Set<number>();
  ops.forEach((o, k) => { if (o.t !== ' ') for (let d = -1; d <= 1; d++) keep.add(k + d); });
  const out: string[] = [];
  let last = -2;
  ops.forEach((o, k) => {
    if (!keep.has(k)) return;
    if (k !== last + 1) out.push(`  @@ line ${o.ln}`);
    out.push(`  ${o.t} ${o.s}`);
    last = k;
  });
  return out.length ? out.join('\n') : '  (no changes)';
}
