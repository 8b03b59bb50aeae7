// A cached parse result is shared by every later caller with the same text: everything in it is
// frozen except the caller's own `errors` and `warnings` arrays (src/policy/recent.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { deepFreeze, recentResults } from '../../src/policy/recent.js';

test('a cached result is frozen all the way down, but its errors and warnings stay the caller\'s to push to', () => {
  const parse = recentResults((t: string) => ({ policy: { folders: [t] }, errors: [] as string[], warnings: [] as string[] }), (r) => r);
  const r = parse('a', 'f');
  assert.ok(Object.isFrozen(r.policy));
  assert.ok(Object.isFrozen(r.policy.folders));
  assert.equal(Object.isFrozen(r.errors), false);
  assert.equal(Object.isFrozen(r.warnings), false);
  r.errors.push('e');
  r.warnings.push('w');
  assert.throws(() => (r.policy.folders as string[]).push('/'), TypeError);
});

test('deepFreeze freezes objects and arrays, never a function it finds (only data is shared)', () => {
  const fn = (): number => 1;
  const v = deepFreeze({ a: { b: [1] }, fn });
  assert.ok(Object.isFrozen(v.a.b));
  assert.equal(Object.isFrozen(fn), false);
  assert.equal(deepFreeze(fn), fn);
  assert.equal(Object.isFrozen(fn), false);
  assert.equal(deepFreeze(null), null);
  assert.equal(deepFreeze(3), 3);
});

test('deepFreeze leaves a lazy getter uncalled', () => {
  let calls = 0;
  const o = { get line(): number { calls++; return 1; } };
  deepFreeze(o);
  assert.equal(calls, 0);
  assert.ok(Object.isFrozen(o));
});
