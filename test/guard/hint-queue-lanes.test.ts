/**
 * The hint queue's low-priority lane (src/guard/hints.ts): non-urgent hints wait for the next
 * turn and run in slices that yield, a full set asks for one rescan, and the defaults. Mock
 * timers. Pure: in `npm run mutate -- guard` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HintQueue } from '../../src/guard/hints.js';

describe('hint queue: the low-priority lane', () => {
  it('non-urgent hints wait for the next turn, in slices, with no trailing check', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate', 'Date'] });
    const seen: string[] = [];
    const q = new HintQueue((rel, dir) => seen.push(dir ? `${rel}/` : rel), { urgent: (rel) => rel.startsWith('u'), settleMs: 5 });
    q.hint('n1', true);
    q.hint('n2', false);
    q.hint('n1', false);
    assert.equal(q.backlog, 2);
    assert.deepEqual(seen, []);
    q.hint('u', false);
    assert.deepEqual(seen, ['u']);
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['u', 'n1', 'n2'], 'a non-urgent hint is handled as a file check');
    assert.equal(q.backlog, 0);
    t.mock.timers.tick(5);
    assert.deepEqual(seen, ['u', 'n1', 'n2', 'u'], 'the trailing check is the urgent one only');
    q.close();
  });
  it('a full set drops hints, then asks for a rescan once it is worked off', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate', 'Date'] });
    const seen: string[] = [];
    let overflows = 0;
    const q = new HintQueue((rel) => seen.push(rel), { urgent: () => false, maxPending: 2, onOverflow: () => overflows++ });
    q.later('a');
    q.later('b');
    q.later('b');
    assert.equal(overflows, 0);
    q.later('c');
    assert.equal(q.backlog, 2);
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'b']);
    assert.equal(overflows, 1);
    q.later('d');
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'b', 'd']);
    assert.equal(overflows, 1, 'once per overflow');
    q.close();
    q.later('e');
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'b', 'd']);
  });
  it('a slice ends after sliceMs and yields: work queued meanwhile runs before the rest', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate', 'Date'], now: 1000 });
    const seen: string[] = [];
    // Each check takes 5 ms of the mocked clock: two fill a slice of 8 ms.
    const q = new HintQueue((rel) => { seen.push(rel); t.mock.timers.setTime(Date.now() + 5); }, { urgent: () => false, sliceMs: 8 });
    for (const r of ['a', 'b', 'c', 'd', 'e']) q.later(r);
    setImmediate(() => seen.push('other'));
    for (let i = 0; i < 5; i++) t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'b', 'other', 'c', 'd', 'e']);
    assert.equal(q.backlog, 0);
    q.close();
  });
  it('folds in every turn, a file event stays a file event, and no rescan is asked for without an overflow', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate', 'Date'] });
    const seen: string[] = [];
    let overflows = 0;
    const q = new HintQueue((rel, dir) => seen.push(dir ? `${rel}/` : rel), { settleMs: 1000, urgent: (r) => r !== 'low', onOverflow: () => overflows++ });
    q.hint('a', false); q.hint('a', false);
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'a']);
    q.hint('a', false); q.hint('a', false);
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'a', 'a', 'a'], 'the second turn folds too');
    q.later('low');
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'a', 'a', 'a', 'low']);
    assert.equal(overflows, 0);
    q.close();
  });
  it('a slice of 12 ms holds three checks of 5 ms', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate', 'Date'], now: 1000 });
    const seen: string[] = [];
    const q = new HintQueue((rel) => { seen.push(rel); t.mock.timers.setTime(Date.now() + 5); }, { urgent: () => false, sliceMs: 12 });
    for (const r of ['a', 'b', 'c', 'd']) q.later(r);
    setImmediate(() => seen.push('other'));
    for (let i = 0; i < 4; i++) t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'b', 'c', 'other', 'd']);
    q.close();
  });
  it('a slice used up exactly yields: no check starts once sliceMs has passed', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate', 'Date'], now: 1000 });
    const seen: string[] = [];
    // Two checks of 5 ms fill a slice of 10 ms to the millisecond: the third waits a turn.
    const q = new HintQueue((rel) => { seen.push(rel); t.mock.timers.setTime(Date.now() + 5); }, { urgent: () => false, sliceMs: 10 });
    for (const r of ['a', 'b', 'c']) q.later(r);
    setImmediate(() => seen.push('other'));
    for (let i = 0; i < 3; i++) t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'b', 'other', 'c']);
    q.close();
  });
  it('defaults: every hint is urgent, with a trailing check 30 ms later', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate'] });
    const seen: string[] = [];
    const q = new HintQueue((rel) => seen.push(rel));
    q.hint('a', false);
    t.mock.timers.tick(29);
    assert.deepEqual(seen, ['a']);
    t.mock.timers.tick(1);
    assert.deepEqual(seen, ['a', 'a']);
    q.close();
  });
});
