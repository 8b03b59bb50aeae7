/**
 * The retry book (src/guard/retry.ts): one alert, retries with backoff from 250 ms, doubling,
 * stopped on clear; nothing after stop. Mock timers. Pure: in `npm run mutate -- guard`
 * (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RetryBook } from '../../src/guard/retry.js';

describe('retry book', () => {
  it('alerts once, retries with backoff from 250 ms, doubling, and stops on clear', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const book = new RetryBook();
    let alerts = 0, retries = 0;
    const fail = () => book.failed('p', () => alerts++, () => { retries++; fail(); });
    fail();
    assert.equal(alerts, 1);
    assert.deepEqual(book.paths(), ['p']);
    fail(); // an event meanwhile: does not push the retry further away, no second alert
    t.mock.timers.tick(249);
    assert.equal(retries, 0);
    t.mock.timers.tick(1);
    assert.equal(retries, 1, 'first retry at 250 ms');
    t.mock.timers.tick(499);
    assert.equal(retries, 1);
    t.mock.timers.tick(1);
    assert.equal(retries, 2, 'second retry 500 ms later');
    t.mock.timers.tick(1000);
    assert.equal(retries, 3, 'third 1 s later');
    assert.equal(alerts, 1);
    assert.equal(book.clear('p'), true);
    assert.equal(book.clear('p'), false);
    assert.deepEqual(book.paths(), []);
    t.mock.timers.tick(120_000);
    assert.equal(retries, 3, 'no retry after clear');
  });
  it('a failure after the retry fired (no timer) counts and re-arms; after stop nothing runs', (t) => {
    t.mock.timers.enable({ apis: ['setTimeout'] });
    const book = new RetryBook();
    let retries = 0;
    book.failed('a', () => {}, () => retries++);
    t.mock.timers.tick(250);
    assert.equal(retries, 1);
    book.failed('a', () => assert.fail('alerted twice'), () => retries++);
    t.mock.timers.tick(499);
    assert.equal(retries, 1);
    t.mock.timers.tick(1);
    assert.equal(retries, 2, 'the second attempt waits 500 ms');
    book.failed('b', () => {}, () => retries++);
    book.stop();
    assert.deepEqual(book.paths(), []);
    book.failed('c', () => {}, () => retries++);
    t.mock.timers.tick(120_000);
    assert.equal(retries, 2);
  });
});
