/**
 * The library never throws on a context it does not know (tui, a
 * future kind, a malformed object): it grants nothing, to anyone, and explain says why.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { buildPolicy, canRead, contextFacts, explain, resolveTier, type SessionContext } from '../../src/policy/index.js';
import { ALICE, BOOK_CH, GUEST_CH, OWNER, rootFiles } from './fixtures.js';

const policy = buildPolicy(rootFiles()).policy;
const TARGETS = ['/workspace/public/a.md', '/workspace/bookclub/n.md', '/memories/private/x', '/workspace/secrets/k', '/etc/passwd'];
const users = fc.constantFrom(OWNER, ALICE, '999', '');

/** Contexts that are not dm/guild/internal with the right field types. */
const malformed: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({ withNullPrototype: true, withBigInt: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true }),
  fc.constantFrom({ kind: 'tui' }, { kind: 'cron' }, {}, { kind: 'heartbeat' }, null, undefined, 'dm', 42, [], { kind: 'DM', channel: '1' }),
  fc.record({ kind: fc.constantFrom('dm', 'guild'), channel: fc.oneof(fc.integer(), fc.constant(null), fc.constant(''), fc.object()), guild: fc.oneof(fc.integer(), fc.constant(undefined)) }),
  fc.record({ kind: fc.constant('guild'), guild: fc.constant('1'), channel: fc.constant(BOOK_CH), nsfw: fc.oneof(fc.constant('yes'), fc.integer(), fc.constant(null)) }),
  fc.record({ kind: fc.constant('guild'), guild: fc.constant('1'), channel: fc.constant(GUEST_CH), forum: fc.oneof(fc.integer(), fc.constant(null), fc.constant('')) }),
  fc.constant(Object.create(null)),
);

/** Objects that fight back when read (fast-check itself cannot carry them). */
const hostile = (): unknown[] => [
  Object.defineProperty({}, 'kind', { get() { throw new Error('getter ran'); }, enumerable: true }),
  new Proxy({}, { getOwnPropertyDescriptor() { throw new Error('trap ran'); }, get() { throw new Error('trap ran'); } }),
  (() => { const r = Proxy.revocable({}, {}); r.revoke(); return r.proxy; })(),
];

function grantsNothing(ctx: unknown, user: string): void {

  const c = ctx as SessionContext;
  const r = resolveTier(policy, user, c);
    assert.equal(r.tier, 'none');
    assert.ok(r.reason.length > 0 && /nothing is granted/.test(r.reason), r.reason);
    assert.deepEqual([...contextFacts(c)], []);
    const e = explain(policy, user, c, TARGETS);
    assert.equal(e.tier, 'none');
    assert.equal(e.resolved_by, 'unknown-context');
    assert.match(e.resolution.reason, /nothing is granted/);
    assert.deepEqual(e.blocks, []);
    assert.deepEqual(e.commands, []);
    assert.equal(e.shell, false);
    for (const t of e.targets) assert.equal(t.decision, 'deny');
    for (const t of TARGETS) { assert.equal(canRead(policy, user, c, t), false); assert.equal(canRead(policy, user, c, t, { write: true }), false); }
}

test('property: resolveTier, explain and canRead never throw on a malformed or unknown context, and grant nothing', () => {
  fc.assert(fc.property(malformed, users, (ctx, user) => grantsNothing(ctx, user)), { numRuns: 500 });
  for (const ctx of hostile()) for (const user of [OWNER, ALICE]) grantsNothing(ctx, user);
});

test('tui, cron and {} grant nothing even to the owner, and explain says why', () => {
  for (const ctx of [{ kind: 'tui' }, { kind: 'cron' }, {}] as unknown as SessionContext[]) {
    for (const user of [OWNER, ALICE, '999']) {
      const e = explain(policy, user, ctx, ['/workspace/public/a.md']);
      assert.equal(e.tier, 'none');
      assert.match(e.resolution.reason, (ctx as { kind?: string }).kind === 'tui' ? /TUI session.*nothing is granted/ : /unknown session kind.*nothing is granted/);
      assert.equal(canRead(policy, user, ctx, '/workspace/public/a.md'), false);
    }
  }
});

test('property: well-formed contexts are decided as before (fuzzed ids and flags)', () => {
  const id = fc.constantFrom('1', '2', BOOK_CH, GUEST_CH);
  const good: fc.Arbitrary<SessionContext> = fc.oneof(
    id.map((channel) => ({ kind: 'dm' as const, channel })),
    fc.record({ kind: fc.constant('guild' as const), guild: id, channel: id, nsfw: fc.option(fc.boolean(), { nil: undefined }), forum: fc.option(id, { nil: undefined }) }),
    fc.constant({ kind: 'internal' as const }),
  );
  fc.assert(fc.property(good, users, (ctx, user) => {
    const e = explain(policy, user, ctx, TARGETS);
    assert.notEqual(e.resolved_by, 'unknown-context');
    for (const [i, t] of TARGETS.entries()) assert.equal(canRead(policy, user, ctx, t), e.targets[i]?.decision === 'allow');
  }), { numRuns: 300 });
});
