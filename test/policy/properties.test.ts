import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  buildPolicy, canRead, conditionHolds, contextFacts, evaluatePath, explain, parseCondition, parseConditions, resolveTier,
  type SessionContext,
} from '../../src/policy/index.js';
import { ALICE, BOOK_CH, GUEST_CH, NSFW_MD, OWNER, org, rootFiles } from './fixtures.js';

const ids = ['1', '2', '3'];
const factArb = fc.constantFrom('discord:nsfw', 'discord:dm', 'internal', 'tui', ...ids.flatMap((i) => [`discord:dm:${i}`, `discord:guild:${i}`, `discord:channel:${i}`, `discord:forum:${i}`]));
const condArb = fc.tuple(fc.boolean(), factArb).map(([neg, f]) => (neg ? `!${f}` : f));
const keyArb = fc.constantFrom('/', '/a', '/a/', '/a/b', '/a/b/', '/c/', '/a/b/c');
const ruleArb = fc.record({
  section: fc.constantFrom('memories', 'workspace'),
  key: keyArb,
  when: fc.array(condArb, { minLength: 1, maxLength: 3 }),
  mode: fc.constantFrom('or', 'and', undefined),
  action: fc.constantFrom('allow', 'deny'),
});
type RuleSpec = { section: string; key: string; when: string[]; mode: string | undefined; action: string };
const ctxArb: fc.Arbitrary<SessionContext> = fc.oneof(
  fc.constantFrom(...ids).map((channel) => ({ kind: 'dm' as const, channel })),
  fc.record({ g: fc.constantFrom(...ids), c: fc.constantFrom(...ids, BOOK_CH, GUEST_CH), nsfw: fc.boolean(), forum: fc.option(fc.constantFrom(...ids), { nil: undefined }) })
    .map(({ g, c, nsfw, forum }) => ({ kind: 'guild' as const, guild: g, channel: c, nsfw, ...(forum === undefined ? {} : { forum }) })),
  fc.constant({ kind: 'internal' as const }),
);
const targetArb = fc.tuple(fc.constantFrom('/memories', '/workspace'), fc.constantFrom('/', '/a', '/a/', '/a/b', '/a/b/c', '/a/bc', '/c/d', '/x', '/bookclub/n', '/public/r'))
  .map(([s, r]) => s + r);
const userArb = fc.constantFrom(OWNER, ALICE, '999', '222');

const ANCHOR = '[blocks.nsfw]\nwhen = "discord:nsfw"\naction = "load"\n\n';

/** Serialize rule specs as conditions.toml (keys are unique per section: TOML rejects duplicates). */
function toToml(rules: RuleSpec[]): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const r of rules) {
    const id = `${r.section}\u0000${r.key}`;
    if (seen.has(id)) continue;
    seen.add(id);
    out.push(`[${r.section}.${JSON.stringify(r.key)}]`, `when = ${JSON.stringify(r.when)}`, ...(r.mode ? [`mode = "${r.mode}"`] : []), `action = "${r.action}"`, '');
  }
  return out.join('\n');
}

test('property: adding a deny rule never grants access', () => {
  fc.assert(fc.property(fc.array(ruleArb, { maxLength: 6 }), ruleArb, ctxArb, targetArb, (rules, extra, ctx, target) => {
    const denyRule = { ...extra, action: 'deny' };
    // Keep the added key fresh so that it is really added, not dropped as a duplicate.
    const base = rules.filter((r) => !(r.section === denyRule.section && r.key === denyRule.key));
    // (An empty file is deny-all, so the base always holds one rule: adding a deny rule to
    // an empty manifest turns deny-all into a real policy, which is a separate matter.)
    const before = parseConditions(ANCHOR + toToml(base));
    assert.equal(before.status, 'ok');
    const after = parseConditions(ANCHOR + toToml([...base, denyRule]));
    assert.equal(after.status, 'ok', JSON.stringify(after.errors));
    const facts = contextFacts(ctx);
    if (evaluatePath(after.conditions, target, facts).decision === 'allow') {
      assert.equal(evaluatePath(before.conditions, target, facts).decision, 'allow');
    }
  }), { numRuns: 400 });
});

test('property: an empty manifest never grants', () => {
  const blankArb = fc.array(fc.constantFrom('', ' ', '\t', '# comment', '   # x = 1', '#[blocks.a]'), { maxLength: 5 }).map((ls) => ls.join('\n'));
  fc.assert(fc.property(blankArb, userArb, ctxArb, targetArb, fc.boolean(), (blank, user, ctx, target, write) => {
    const p = buildPolicy(rootFiles({ conditions: blank })).policy;
    assert.equal(canRead(p, user, ctx, target, { write }), false);
    assert.deepEqual(explain(p, user, ctx).blocks, []);
    // A blank guests.toml and a blank org make nobody a guest or a member.
    const q = buildPolicy(rootFiles({ guests: blank, orgs: { bookclub: blank } })).policy;
    const tier = resolveTier(q, user, ctx).tier;
    assert.ok(tier === 'owner' || tier === 'none', tier);
  }), { numRuns: 300 });
});

test('property: negation flips a condition, and a one-condition rule', () => {
  fc.assert(fc.property(factArb, ctxArb, fc.constantFrom('memories', 'workspace'), keyArb, (fact, ctx, section, key) => {
    const facts = contextFacts(ctx);
    const pos = parseCondition(fact);
    const neg = parseCondition(`!${fact}`);
    assert.ok(pos && neg);
    assert.equal(conditionHolds(neg, facts), !conditionHolds(pos, facts));
    const allow = (w: string) => parseConditions(toToml([{ section, key, when: [w], mode: undefined, action: 'allow' }])).conditions;
    const target = `/${section}${key}`;
    const a = evaluatePath(allow(fact), target, facts).decision;
    const b = evaluatePath(allow(`!${fact}`), target, facts).decision;
    assert.notEqual(a, b, 'exactly one of x and !x grants a path that only this rule governs');
  }), { numRuns: 300 });
});

// Several orgs that overlap (shared members, channels, folders) and several blocks, so the
// order the loader sees them in could change the answer if it mattered.
const orgArb = fc.record({
  members: fc.subarray([ALICE, '999', '222', '333333333333333333']),
  channels: fc.subarray([BOOK_CH, GUEST_CH, ...ids]),
  folders: fc.subarray(['/workspace/a/', '/workspace/a/b/', '/memories/a/', '/workspace/c/', '/workspace/bookclub/']),
  commands: fc.subarray(['ls', 'cat', 'grep']),
  cap: fc.integer({ min: 1, max: 50 }),
});
const orgsArb = fc.uniqueArray(fc.constantFrom('alpha', 'beta', 'gamma', 'delta', 'bookclub'), { minLength: 2, maxLength: 5 })
  .chain((names) => fc.tuple(...names.map((n) => orgArb.map((o) => [n, org(o)] as const))))
  .map((pairs) => Object.fromEntries(pairs) as Record<string, string>);
const blocksArb = fc.uniqueArray(fc.constantFrom('nsfw', 'dm', 'tui', 'guild'), { minLength: 1, maxLength: 4 })
  .map((names) => Object.fromEntries(names.map((n) => [n, NSFW_MD])) as Record<string, string>);
const filesArb = fc.tuple(orgsArb, blocksArb).map(([orgs, blocks]) => rootFiles({ orgs, blocks }));
const permutedArb = filesArb.chain((files) => fc.tuple(fc.constant(files), fc.shuffledSubarray(files, { minLength: files.length, maxLength: files.length })));

test('property: resolution is deterministic and independent of file order (several orgs, every permutation)', () => {
  fc.assert(fc.property(permutedArb, userArb, ctxArb, targetArb, ([files, shuffled], user, ctx, target) => {
    assert.equal(shuffled.length, files.length);
    const p = buildPolicy(files);
    const q = buildPolicy(shuffled);
    assert.deepEqual(q.warnings, p.warnings);
    assert.deepEqual(explain(q.policy, user, ctx, [target]), explain(p.policy, user, ctx, [target]));
    assert.deepEqual(resolveTier(q.policy, user, ctx), resolveTier(p.policy, user, ctx));
  }), { numRuns: 300 });
});

test('property: allow means the tier grants it AND conditions allow it; write only for the owner', () => {
  fc.assert(fc.property(fc.array(ruleArb, { maxLength: 5 }), userArb, ctxArb, targetArb, fc.boolean(), (rules, user, ctx, target, write) => {
    const p = buildPolicy(rootFiles({ conditions: ANCHOR + toToml(rules) })).policy;
    const e = explain(p, user, ctx, [target], { write });
    const t = e.targets[0];
    assert.ok(t);
    assert.equal(t.decision === 'allow', t.tier.granted && t.conditions.decision === 'allow');
    if (write && t.decision === 'allow') assert.equal(e.tier, 'owner');
    if (e.tier === 'none') assert.equal(t.decision, 'deny');
  }), { numRuns: 300 });
});
