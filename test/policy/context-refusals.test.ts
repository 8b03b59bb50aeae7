// Pure unit tests of context.ts: the exact reason a context is refused for (a person reads it
// in `warden explain`), the context a known one is normalised to, and describeValue's wording.
// Run per mutant by `npm run mutate -- policy` (FOLDERS.policy.tests in scripts/mutate.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkContext, describeValue } from '../../src/policy/context.js';

const refused = (ctx: unknown) => {
  const r = checkContext(ctx);
  assert.equal(r.ok, false, JSON.stringify(r));
  return (r as { why: string }).why;
};

test('describeValue: a short, safe description of each kind of value', () => {
  assert.equal(describeValue('abc'), '"abc"');
  assert.equal(describeValue(''), '""');
  assert.equal(describeValue('a'.repeat(40)), JSON.stringify('a'.repeat(40)), '40 characters are shown whole');
  assert.equal(describeValue('b'.repeat(41)), JSON.stringify(`${'b'.repeat(40)}…`), 'longer: the first 40 and an ellipsis');
  assert.equal(describeValue('say "hi"'), '"say \\"hi\\""');
  assert.equal(describeValue(null), 'null');
  assert.equal(describeValue(undefined), 'undefined');
  assert.equal(describeValue(42), '42');
  assert.equal(describeValue(true), 'true');
  assert.equal(describeValue(false), 'false');
  assert.equal(describeValue(10n), '10');
  assert.equal(describeValue([1]), 'an array');
  assert.equal(describeValue({ toString: () => 'ran' }), 'an object', 'never calls anything on it');
  assert.equal(describeValue(Object.create(null)), 'an object');
  assert.equal(describeValue(() => 1), 'a function');
  assert.equal(describeValue(Symbol('s')), 'a symbol');
});

test('known contexts are normalised: only their fields, nsfw and forum only when given', () => {
  assert.deepEqual(checkContext({ kind: 'internal', channel: '1', extra: true }), { ok: true, ctx: { kind: 'internal' } });
  assert.deepEqual(checkContext({ kind: 'dm', channel: '5', guild: '1' }), { ok: true, ctx: { kind: 'dm', channel: '5' } });
  assert.deepEqual(checkContext({ kind: 'guild', guild: '1', channel: '5', other: 1 }), { ok: true, ctx: { kind: 'guild', guild: '1', channel: '5' } });
  const r = checkContext({ kind: 'guild', guild: '1', channel: '5' });
  assert.ok(r.ok);
  assert.deepEqual(Object.keys(r.ctx), ['kind', 'guild', 'channel'], 'no nsfw or forum key when none was given');
  assert.deepEqual(checkContext({ kind: 'guild', guild: '1', channel: '5', nsfw: false }), { ok: true, ctx: { kind: 'guild', guild: '1', channel: '5', nsfw: false } });
  assert.deepEqual(checkContext({ kind: 'guild', guild: '1', channel: '5', nsfw: true, forum: '6' }), { ok: true, ctx: { kind: 'guild', guild: '1', channel: '5', nsfw: true, forum: '6' } });
  assert.deepEqual(checkContext({ kind: 'guild', guild: '1', channel: '5', forum: '6' }), { ok: true, ctx: { kind: 'guild', guild: '1', channel: '5', forum: '6' } });
  assert.deepEqual(checkContext({ kind: 'guild', guild: '1', channel: '5', nsfw: undefined, forum: undefined }), { ok: true, ctx: { kind: 'guild', guild: '1', channel: '5' } });
});

test('each refusal says what was wrong', () => {
  assert.equal(refused(null), 'the session context is null, not an object with a kind');
  assert.equal(refused(undefined), 'the session context is undefined, not an object with a kind');
  assert.equal(refused('dm'), 'the session context is "dm", not an object with a kind');
  assert.equal(refused([{ kind: 'dm', channel: '1' }]), 'the session context is an array, not an object with a kind');
  assert.equal(refused(() => ({ kind: 'internal' })), 'the session context is a function, not an object with a kind');
  assert.equal(refused({}), 'unknown session kind undefined (known: dm, guild, internal)');
  assert.equal(refused({ kind: 'DM', channel: '1' }), 'unknown session kind "DM" (known: dm, guild, internal)');
  assert.equal(refused({ kind: 'tui' }), 'a TUI session: "tui" is reserved, and this runtime has no TUI sessions');
  assert.equal(refused({ kind: 'dm' }), 'a dm context needs channel (a string id), not undefined');
  assert.equal(refused({ kind: 'dm', channel: '' }), 'a dm context needs channel (a string id), not ""');
  assert.equal(refused({ kind: 'dm', channel: 5 }), 'a dm context needs channel (a string id), not 5');
  assert.equal(refused({ kind: 'guild', channel: '5' }), 'a guild context needs guild (a string id), not undefined');
  assert.equal(refused({ kind: 'guild', guild: '', channel: '5' }), 'a guild context needs guild (a string id), not ""');
  assert.equal(refused({ kind: 'guild', guild: '1' }), 'a guild context needs channel (a string id), not undefined');
  assert.equal(refused({ kind: 'guild', guild: '1', channel: '' }), 'a guild context needs channel (a string id), not ""');
  assert.equal(refused({ kind: 'guild', guild: '1', channel: '5', nsfw: 'yes' }), 'nsfw must be true or false, not "yes"');
  assert.equal(refused({ kind: 'guild', guild: '1', channel: '5', nsfw: null }), 'nsfw must be true or false, not null');
  assert.equal(refused({ kind: 'guild', guild: '1', channel: '5', forum: '' }), 'forum must be a string id, not ""');
  assert.equal(refused({ kind: 'guild', guild: '1', channel: '5', forum: 6 }), 'forum must be a string id, not 6');
  assert.equal(refused({ kind: 'guild', guild: '1', channel: '5', forum: null }), 'forum must be a string id, not null');
});

test('only own data properties are read: no getter runs, no prototype is consulted', () => {
  let ran = 0;
  const getter = Object.defineProperty({}, 'kind', { get() { ran++; return 'internal'; }, enumerable: true });
  assert.equal(refused(getter), 'unknown session kind undefined (known: dm, guild, internal)');
  assert.equal(ran, 0, 'the getter never ran');
  assert.equal(refused(Object.create({ kind: 'internal' })), 'unknown session kind undefined (known: dm, guild, internal)');
  const chGetter = Object.defineProperty({ kind: 'dm' }, 'channel', { get() { ran++; return '5'; } });
  assert.equal(refused(chGetter), 'a dm context needs channel (a string id), not undefined');
  assert.equal(ran, 0);
  assert.deepEqual(checkContext(Object.assign(Object.create(null), { kind: 'dm', channel: '5' })), { ok: true, ctx: { kind: 'dm', channel: '5' } }, 'a null prototype is fine');
  // A proxy whose traps throw: refused with a reason, never thrown.
  const trap = new Proxy({}, { getOwnPropertyDescriptor() { throw new Error('trap ran'); } });
  assert.equal(refused(trap), 'unknown session kind undefined (known: dm, guild, internal)');
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  assert.equal(refused(revoked.proxy), 'the session context cannot be read');
});
