import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { backoffDelay } from '../../src/common/backoff.js';

test('backoff doubles from the base and stops at the cap (the guard: 250 ms … 60 s)', () => {
  const b = { baseMs: 250, capMs: 60_000 };
  assert.deepEqual([1, 2, 3, 4, 5, 8, 9, 10, 1000].map((n) => backoffDelay(b, n)), [250, 500, 1000, 2000, 4000, 32_000, 60_000, 60_000, 60_000]);
  assert.equal(backoffDelay(b, 0), 250, 'a count below 1 is the first failure');
});

test('jitter spreads ±fraction around the capped delay, from the random source given', () => {
  const b = { baseMs: 1000, capMs: 60_000, jitter: 0.2 };
  assert.equal(backoffDelay(b, 1, () => 0), 800);
  assert.equal(backoffDelay(b, 1, () => 0.5), 1000);
  assert.ok(Math.abs(backoffDelay(b, 1, () => 0.999999) - 1200) < 0.01);
  assert.equal(backoffDelay(b, 100, () => 0), 48_000, 'jitter applies after the cap');
});

test('property: finite, within [cap·(1−j) … cap·(1+j)] at most, and never decreasing without jitter', () => {
  fc.assert(fc.property(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 10_000_000 }), fc.integer({ min: 1, max: 5000 }), fc.double({ min: 0, max: 0.9, noNaN: true }), fc.double({ min: 0, max: 0.999999, noNaN: true }),
    (base, capExtra, n, jitter, r) => {
      const b = { baseMs: base, capMs: base + capExtra, jitter };
      const d = backoffDelay(b, n, () => r);
      assert.ok(Number.isFinite(d) && d >= 0);
      assert.ok(d <= b.capMs * (1 + jitter) + 1e-6);
      const plain = { baseMs: base, capMs: base + capExtra };
      assert.ok(backoffDelay(plain, n + 1) >= backoffDelay(plain, n));
    }));
});
