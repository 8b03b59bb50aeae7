import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPolicy, resolveTier, accessFor, explain, canRead, commandPermitted, type SessionContext } from '../../src/policy/index.js';
import { ALICE, BOB, BOOK_CH, CAROL, GUEST_CH, OTHER_CH, OWNER, org, rootFiles, BOOKCLUB } from './fixtures.js';

const policy = buildPolicy(rootFiles({ orgs: { bookclub: BOOKCLUB, chess: org({ members: [CAROL], channels: [OTHER_CH], folders: ['/workspace/chess/'], commands: ['git log'], cap: 5 }) } })).policy;
const dm = (ch = '900'): SessionContext => ({ kind: 'dm', channel: ch });
const ch = (c: string, extra: Partial<{ nsfw: boolean; forum: string }> = {}): SessionContext => ({ kind: 'guild', guild: '1', channel: c, ...extra });

// user, context, tier, org, resolved_by, step
const resolution: [string, SessionContext, string, string | null, string, number | null][] = [
  [OWNER, dm(), 'owner', null, 'owner', 1],
  [OWNER, ch(BOOK_CH), 'owner', null, 'owner', 1],
  [OWNER, ch('1234'), 'owner', null, 'owner', 1],
  [CAROL, { kind: 'internal' }, 'owner', null, 'internal-session', null],
  [ALICE, dm(), 'member', 'bookclub', 'membership', 2],
  [ALICE, ch(BOOK_CH), 'member', 'bookclub', 'membership', 2],
  [ALICE, ch(OTHER_CH), 'member', 'chess', 'channel-binding', 3], // a bound channel makes everyone there its member
  [BOB, ch('1234'), 'none', null, 'none', null],
  [CAROL, ch(BOOK_CH), 'member', 'bookclub', 'channel-binding', 3],
  [CAROL, dm(), 'member', 'chess', 'membership', 2],
  ['999', ch(GUEST_CH), 'guest', null, 'guest-channel', 4],
  [ALICE, ch(GUEST_CH), 'guest', null, 'guest-channel', 4],
  ['999', dm(), 'none', null, 'none', null],
  ['999', ch('1234'), 'none', null, 'none', null],
  ['999', ch('1234', { forum: BOOK_CH }), 'member', 'bookclub', 'channel-binding', 3], // a thread of a bound forum
  ['999', ch('1234', { forum: GUEST_CH }), 'guest', null, 'guest-channel', 4],
];
for (const [user, ctx, tier, orgName, by, step] of resolution) {
  test(`resolve ${user} in ${JSON.stringify(ctx)} → ${tier}${orgName ? `/${orgName}` : ''} by ${by}`, () => {
    const r = resolveTier(policy, user, ctx);
    assert.deepEqual([r.tier, r.org, r.resolvedBy, r.step], [tier, orgName, by, step]);
    assert.equal(resolveTier(policy, user, ctx).reason, r.reason, 'deterministic');
  });
}

test('a member of two orgs in a DM resolves to no org (ambiguous), and says why', () => {
  const p = buildPolicy(rootFiles({ orgs: { bookclub: BOOKCLUB, two: org({ members: [ALICE], folders: ['/workspace/two/'] }) } })).policy;
  const r = resolveTier(p, ALICE, dm());
  assert.equal(r.tier, 'none');
  assert.match(r.notes.join(' '), /ambiguous/);
  assert.equal(resolveTier(p, ALICE, ch(BOOK_CH)).org, 'bookclub', 'in a bound channel the binding decides');
});

test('without an owner in warden.toml nobody is the owner, but internal sessions still are', () => {
  const p = buildPolicy(rootFiles({ warden: null })).policy;
  assert.equal(resolveTier(p, OWNER, dm()).tier, 'none');
  assert.equal(resolveTier(p, OWNER, { kind: 'internal' }).tier, 'owner');
});

test('what each tier grants', () => {
  const owner = accessFor(policy, resolveTier(policy, OWNER, dm()));
  assert.deepEqual([owner.shell, owner.skills, owner.subtasks, owner.write, owner.commands], [true, true, true, true, ['*']]);
  const member = accessFor(policy, resolveTier(policy, ALICE, ch(BOOK_CH)));
  assert.deepEqual([member.shell, member.skills, member.subtasks, member.write, member.commands, member.hourlyCap], [false, false, false, false, ['ls', 'cat'], 20]);
  assert.deepEqual(member.folders, ['/workspace/bookclub/', '/memories/bookclub/']);
  const guest = accessFor(policy, resolveTier(policy, '999', ch(GUEST_CH)));
  assert.deepEqual([guest.shell, guest.skills, guest.subtasks, guest.write, guest.commands, guest.folders], [false, false, false, false, [], ['/workspace/public/']]);
  const none = accessFor(policy, resolveTier(policy, '999', dm()));
  assert.deepEqual([none.shell, none.commands, none.folders, none.hourlyCap], [false, [], [], null]);
});

// Readable only when the tier grants it AND conditions allow it. user, ctx, target, write, decision, decided_by
const reads: [string, SessionContext, string, boolean, 'allow' | 'deny', 'tier' | 'conditions'][] = [
  [OWNER, dm(), '/memories/private/a.md', false, 'allow', 'conditions'],
  [OWNER, dm(), '/memories/private/a.md', true, 'allow', 'conditions'],
  [OWNER, ch('1234'), '/memories/private/a.md', false, 'deny', 'conditions'], // conditions bind the owner too
  [OWNER, dm(), '/workspace/secrets/t', false, 'deny', 'conditions'],
  [OWNER, { kind: 'internal' }, '/workspace/secrets/t', false, 'allow', 'conditions'],
  [ALICE, ch(BOOK_CH), '/workspace/bookclub/notes.md', false, 'allow', 'conditions'],
  [ALICE, ch(BOOK_CH), '/workspace/bookclub/notes.md', true, 'deny', 'tier'], // read-only
  [ALICE, ch(BOOK_CH), '/workspace/bookclubber/x', false, 'deny', 'tier'],
  [ALICE, ch(BOOK_CH), '/workspace/chess/x', false, 'deny', 'tier'], // orgs are isolated
  [ALICE, dm(), '/memories/private/x', false, 'deny', 'tier'], // conditions allow it, the tier does not
  ['999', ch(GUEST_CH), '/workspace/public/readme', false, 'allow', 'conditions'],
  ['999', ch(GUEST_CH), '/workspace/public/readme', true, 'deny', 'tier'],
  ['999', ch(GUEST_CH), '/workspace/bookclub/x', false, 'deny', 'tier'],
  ['999', ch('1234'), '/workspace/public/readme', false, 'deny', 'tier'],
];
for (const [user, ctx, target, write, decision, by] of reads) {
  test(`${user} ${write ? 'writes' : 'reads'} ${target} in ${JSON.stringify(ctx)} → ${decision} by ${by}`, () => {
    const e = explain(policy, user, ctx, [target], { write });
    const t = e.targets[0];
    assert.ok(t);
    assert.deepEqual([t.decision, t.decided_by, t.access], [decision, by, write ? 'write' : 'read']);
    assert.equal(canRead(policy, user, ctx, target, { write }), decision === 'allow');
    if (decision === 'allow') assert.ok(t.tier.granted && t.conditions.decision === 'allow');
  });
}

test('a deny names its rule with file and line', () => {
  const t = explain(policy, OWNER, dm(), ['/workspace/secrets/x']).targets[0];
  assert.equal(t?.rule, 'workspace."/secrets/"');
  assert.equal(t?.source, 'config/conditions.toml:18');
  assert.equal(t?.conditions.step, 3);
});

test('if conditions.toml is empty, even the owner reads nothing, and no block loads', () => {
  const p = buildPolicy(rootFiles({ conditions: '# emptied\n' })).policy;
  const e = explain(p, OWNER, ch('1', { nsfw: true }), ['/workspace/anything', '/memories/x']);
  assert.deepEqual(e.targets.map((t) => t.decision), ['deny', 'deny']);
  assert.deepEqual(e.blocks, []);
  assert.equal(e.targets[0]?.conditions.step, 0);
});

test('blocks load by context, only with a valid file, and never for tier none', () => {
  assert.deepEqual(explain(policy, OWNER, ch('1', { nsfw: true })).blocks, ['nsfw']);
  assert.deepEqual(explain(policy, OWNER, ch('1')).blocks, []);
  assert.deepEqual(explain(policy, '999', ch('1', { nsfw: true })).blocks, [], 'tier none');
  assert.deepEqual(explain(policy, '999', ch(GUEST_CH, { nsfw: true })).blocks, ['nsfw'], 'guest');
  const p = buildPolicy(rootFiles({ blocks: { nsfw: '+++\ndescription = ""\n+++\n' } })).policy;
  const e = explain(p, OWNER, ch('1', { nsfw: true }));
  assert.deepEqual(e.blocks, []);
  assert.match(e.blocks_detail[0]?.reason ?? '', /missing or invalid/);
});

test('explain JSON has the fields docs/CONTRACT.md §Tiers lists, a target\'s first four in order', () => {
  const e = JSON.parse(JSON.stringify(explain(policy, ALICE, ch(BOOK_CH), ['/workspace/bookclub/a'])));
  for (const k of ['tier', 'org', 'resolved_by', 'blocks', 'commands', 'targets']) assert.ok(k in e, k);
  assert.deepEqual(Object.keys(e.targets[0]).slice(0, 4), ['target', 'decision', 'rule', 'source']);
});

test('commands match on whole words; the owner may run anything; guests nothing', () => {
  const chess = accessFor(policy, { tier: 'member', org: 'chess' });
  const table: [string, boolean][] = [['git log', true], ['git log -3', true], ['  git   log  --oneline', true], ['git logx', false], ['git push', false], ['git', false], ['', false]];
  for (const [cmd, ok] of table) assert.equal(commandPermitted(chess, cmd), ok, cmd);
  assert.equal(commandPermitted(accessFor(policy, { tier: 'owner', org: null }), 'rm -rf /tmp/x'), true);
  assert.equal(commandPermitted(accessFor(policy, { tier: 'guest', org: null }), 'ls'), false);
});
