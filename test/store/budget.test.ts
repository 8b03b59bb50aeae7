/**
 * The store budget's pure rules (src/store/budget.ts): which entries go first, what a
 * pruned content's record says, and what is never taken for a quarantine entry.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { isEntryName, oldestFirst, parsePruned, planPrune, prunedLine, prunedNote, sizeText, weighed } from '../../src/store/budget.js';
import { newAlertId } from '../../src/store/alerts.js';

it('the oldest entries are pruned first, and only until the store is within budget', () => {
  const entries = [{ name: 'a', cost: 10, held: 0 }, { name: 'b', cost: 10, held: 0 }, { name: 'c', cost: 10, held: 0 }, { name: 'd', cost: 10, held: 0 }];
  assert.deepEqual(planPrune(entries, 40, 40).map((e) => e.name), []);
  assert.deepEqual(planPrune(entries, 41, 40).map((e) => e.name), ['a']);
  assert.deepEqual(planPrune(entries, 65, 40).map((e) => e.name), ['a', 'b', 'c']);
  // Never enough: every entry, still oldest first (the newest last).
  assert.deepEqual(planPrune(entries, 1000, 40).map((e) => e.name), ['a', 'b', 'c', 'd']);
});

it('bytes held whole are not weighed against the budget, and an entry that is all held is never planned', () => {
  // a: the owner's kept content; b: the agent's directory moved whole (all held); c: an entry with both.
  const entries = [{ name: 'a', cost: 10, held: 0 }, { name: 'b', cost: 500, held: 500 }, { name: 'c', cost: 30, held: 20 }];
  // 540 used, 520 held: 20 weighed, within a budget of 40: nothing goes.
  assert.deepEqual(planPrune(entries, 540, 40).map((e) => e.name), []);
  // 560 used (20 more elsewhere): 40 weighed, within 40.
  assert.deepEqual(planPrune(entries, 560, 40).map((e) => e.name), []);
  // Over by 5: the oldest content goes first; b is passed over, freeing nothing.
  assert.deepEqual(planPrune(entries, 565, 40).map((e) => e.name), ['a']);
  assert.deepEqual(planPrune(entries, 575, 40).map((e) => e.name), ['a', 'c']);
  assert.equal(weighed(565, entries), 45);
});

it('alert ids sort oldest first and are the only names taken for quarantine entries', () => {
  const older = newAlertId(Date.UTC(2026, 0, 1));
  const newer = newAlertId(Date.UTC(2026, 0, 2));
  assert.ok(isEntryName(older) && isEntryName(newer));
  assert.ok(oldestFirst(older, newer) < 0 && oldestFirst(newer, older) > 0);
  for (const n of ['', '.', '..', 'pruned.jsonl', 'index', 'journal', '.x.warden-late.tmp', 'abc/def', `${older}/x`, `${older}-0000`]) assert.equal(isEntryName(n), false, n);
});

it('a pruned record reads back as what the alert line shows (the last record of an id wins, damage is skipped)', () => {
  const r = { id: 'mabc1234xy-00ff', name: 'bookclub.toml', time: '2026-12-06T05:00:00.000Z', size: 600, sha256: 'ab'.repeat(32) };
  const text = prunedLine({ ...r, size: 1 }) + '{torn' + '\n' + prunedLine(r) + '{"id":5}\n';
  const m = parsePruned(text);
  assert.equal(m.size, 1);
  assert.deepEqual(m.get(r.id), r);
  assert.equal(prunedNote(r), `content pruned at 2026-12-06T05:00:00.000Z, 600 bytes, sha256 ${'ab'.repeat(32)}`);
});

it('sizes read as a person reads them', () => {
  assert.equal(sizeText(300), '300 B');
  assert.equal(sizeText(512 * 1024 * 1024), '512 MiB');
  assert.equal(sizeText(1536), '1.5 KiB');
});
