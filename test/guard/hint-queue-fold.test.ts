/**
 * The hint queue (src/guard/hints.ts) folds a turn's hints: the first acted on at once, the
 * rest of the turn one check, then one trailing check; nothing after close. Mock timers.
 * Pure: in `npm run mutate -- guard` and `-- credentials` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { HintQueue } from '../../src/guard/hints.js';

describe('hint queue', () => {
  // Mock timers: the test controls the clock, so "20 ms after the last hint" is exact and
  // nothing depends on how loaded the machine is.
  it('acts on the first hint at once, folds the rest of the turn into one check, then one trailing check', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate'] });
    const seen: string[] = [];
    const q = new HintQueue((rel, dir) => seen.push(dir ? `${rel}/` : rel), 20);
    q.hint('a', false);
    assert.deepEqual(seen, ['a'], 'the first hint is handled synchronously');
    for (let i = 0; i < 99; i++) q.hint('a', i === 50);
    q.hint('b', false);
    assert.deepEqual(seen, ['a', 'b']);
    t.mock.timers.tick(0);
    assert.deepEqual(seen, ['a', 'b', 'a/'], '99 more hints for a became one check, a dir event if any of them was');
    t.mock.timers.tick(19);
    assert.deepEqual(seen, ['a', 'b', 'a/'], 'no trailing check before settleMs');
    q.hint('a', false); // a new turn: handled at once, and it pushes a's trailing check back
    assert.deepEqual(seen, ['a', 'b', 'a/', 'a']);
    t.mock.timers.tick(1);
    assert.deepEqual(seen, ['a', 'b', 'a/', 'a', 'b'], "b's trailing check, 20 ms after its last hint");
    t.mock.timers.tick(18);
    assert.equal(seen.length, 5, "a's trailing check waits for 20 ms after a's last hint");
    t.mock.timers.tick(1);
    assert.deepEqual(seen, ['a', 'b', 'a/', 'a', 'b', 'a']);
    t.mock.timers.tick(1000);
    assert.equal(seen.length, 6, 'one trailing check per path, not a repeating timer');
    q.close();
  });

  it('does nothing after close: no pending fold, no trailing check, no new hint', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout', 'setImmediate'] });
    const seen: string[] = [];
    const q = new HintQueue((rel) => seen.push(rel), 20);
    q.hint('a', false);
    q.hint('a', false);
    q.close();
    q.hint('b', false);
    t.mock.timers.tick(1000);
    assert.deepEqual(seen, ['a']);
  });
});
