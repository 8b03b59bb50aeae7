/**
 * docs/ARCHITECTURE.md stays true where a machine can check it: the numbered invariants run
 * 1..N in order with no number twice, and every test seam the code reads (WARDEN_TEST_*) is
 * listed in its seam table.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const DOC = readFileSync(join(REPO, 'docs', 'ARCHITECTURE.md'), 'utf8');

/** The numbers of the bold-headed list items of the invariants section, in document order. */
export function invariantNumbers(markdown: string): number[] {
  const start = markdown.search(/^## .*[Ii]nvariants/m);
  assert.ok(start >= 0, 'docs/ARCHITECTURE.md has an invariants section');
  const rest = markdown.slice(start);
  const next = rest.slice(3).search(/^## /m);
  const section = next < 0 ? rest : rest.slice(0, next + 3);
  return [...section.matchAll(/^(\d+)\. \*\*/gm)].map((m) => Number(m[1]));
}

test('the invariants are numbered 1..N in order', () => {
  const nums = invariantNumbers(DOC);
  assert.ok(nums.length >= 10, `found ${nums.length} invariants`);
  assert.deepEqual(nums, nums.map((_, i) => i + 1));
});

test('the numbering check fails on a list out of order (negative control)', () => {
  const bad = '## Invariants\n1. **a**\n2. **b**\n17. **c**\n3. **d**\n## Next\n';
  assert.deepEqual(invariantNumbers(bad), [1, 2, 17, 3]);
  assert.notDeepEqual(invariantNumbers(bad), [1, 2, 3, 4]);
});

test('every WARDEN_TEST_* seam the code reads is listed in the docs', () => {
  const src = join(REPO, 'src');
  const seams = new Set<string>();
  for (const f of readdirSync(src, { recursive: true, encoding: 'utf8' })) {
    if (!f.endsWith('.ts')) continue;
    for (const m of readFileSync(join(src, f), 'utf8').matchAll(/WARDEN_TEST_[A-Z0-9_]+/g)) seams.add(m[0]);
  }
  assert.ok(seams.size > 0, 'the scan found the seams');
  for (const s of seams) assert.ok(DOC.includes(s), `${s} is read in src/ but not listed in docs/ARCHITECTURE.md`);
});
