// Pure unit tests of tiers.ts: what a person reads in a resolution and an access (every
// reason, note and source, the exact Access fields), not only the tier. Run per mutant by
// `npm run mutate -- policy` (FOLDERS.policy.tests in scripts/mutate.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildPolicy, resolveTier, accessFor, tierGrantsPath, sessionChannels, canRead,
  type Access, type PolicySet, type SessionContext,
} from '../../src/policy/index.js';
import { folderContaining, tierFolders } from '../../src/policy/tiers.js';
import { ALICE, BOOK_CH, CAROL, GUEST_CH, OTHER_CH, OWNER, rootFiles } from './fixtures.js';

// Key lines other than 1, so a source that points at the key is told apart from the file's start.
const BOOKCLUB = `# bookclub
hourly_cap = 20
commands = ["ls", "cat"]
folders = ["/workspace/bookclub/", "/memories/bookclub/"]

members = ["${ALICE}"]
channels = ["${BOOK_CH}"]
`;
const CHESS = `# chess
channels = ["${OTHER_CH}"]
members = ["${CAROL}"]
folders = ["/workspace/chess/"]
commands = ["git log"]
hourly_cap = 5
`;
const GUESTS = `# guests

folders = ["/workspace/public/"]
channels = ["${GUEST_CH}"]
`;
const WARDEN = `approval = "tty"

[owner]
discord_id = "${OWNER}"
`;
const built = buildPolicy(rootFiles({ orgs: { bookclub: BOOKCLUB, chess: CHESS }, guests: GUESTS, warden: WARDEN }));
assert.deepEqual(built.errors, [], 'the fixture policy is valid');
const policy = built.policy;

const dm = (c = '900'): SessionContext => ({ kind: 'dm', channel: c });
const guild = (c: string, forum?: string): SessionContext => ({ kind: 'guild', guild: '1', channel: c, ...(forum === undefined ? {} : { forum }) });
const NONE = 'no step applies: not the owner, no org membership or binding here, not a guest channel';

test('sessionChannels: the channel, then the forum it is a thread of; a forum equal to its channel once', () => {
  assert.deepEqual(sessionChannels(dm('5')), ['5']);
  assert.deepEqual(sessionChannels(guild('5')), ['5']);
  assert.deepEqual(sessionChannels(guild('5', '6')), ['5', '6']);
  assert.deepEqual(sessionChannels(guild('5', '5')), ['5']);
  assert.deepEqual(sessionChannels({ kind: 'internal' }), []);
  assert.deepEqual(sessionChannels({ kind: 'tui' } as unknown as SessionContext), []);
  assert.deepEqual(sessionChannels({ kind: 'dm' } as unknown as SessionContext), [], 'a dm without its channel sits nowhere');
});

test('an unknown context grants nothing, to the owner too, and says why', () => {
  for (const user of [OWNER, ALICE]) {
    assert.deepEqual(resolveTier(policy, user, { kind: 'tui' } as unknown as SessionContext), {
      tier: 'none', org: null, resolvedBy: 'unknown-context', step: null,
      reason: 'a TUI session: "tui" is reserved, and this runtime has no TUI sessions: nothing is granted', source: null, notes: [],
    });
  }
  assert.equal(resolveTier(policy, OWNER, null as unknown as SessionContext).reason, 'the session context is null, not an object with a kind: nothing is granted');
});

test('a user that is not a string grants nothing, even in an internal session, and says what it was', () => {
  assert.deepEqual(resolveTier(policy, 42 as unknown as string, { kind: 'internal' }), {
    tier: 'none', org: null, resolvedBy: 'none', step: null, reason: 'the user is 42, not a string id: nothing is granted', source: null, notes: [],
  });
  assert.equal(resolveTier(policy, ['x'] as unknown as string, dm()).reason, 'the user is an array, not a string id: nothing is granted');
});

test('an internal session is the owner\'s; a non-owner in it is noted', () => {
  const reason = 'an internal session (heartbeat, cron) is the owner\'s';
  assert.deepEqual(resolveTier(policy, CAROL, { kind: 'internal' }), {
    tier: 'owner', org: null, resolvedBy: 'internal-session', step: null, reason, source: null,
    notes: [`user ${CAROL} is not the owner, but an internal session is always the owner's`],
  });
  assert.deepEqual(resolveTier(policy, OWNER, { kind: 'internal' }).notes, []);
  const noOwner = buildPolicy(rootFiles({ warden: null })).policy;
  assert.deepEqual(resolveTier(noOwner, CAROL, { kind: 'internal' }), { tier: 'owner', org: null, resolvedBy: 'internal-session', step: null, reason, source: null, notes: [] });
});

test('step 1: the owner, pointing at owner.discord_id (or warden.toml when its line is not known)', () => {
  const r = resolveTier(policy, OWNER, guild(BOOK_CH));
  assert.deepEqual(r, {
    tier: 'owner', org: null, resolvedBy: 'owner', step: 1, reason: `step 1: ${OWNER} is the owner (owner.discord_id)`,
    source: policy.ownerSource, notes: [],
  });
  assert.equal(r.source?.file, 'config/warden.toml');
  assert.equal(r.source?.line, 4);
  const byHand: PolicySet = { ...policy, ownerSource: null };
  assert.deepEqual(resolveTier(byHand, OWNER, dm()).source, { file: 'config/warden.toml' });
  // Nobody is the owner when none is configured: not even a user equal to the missing id.
  const noOwner: PolicySet = { ...policy, owner: null };
  assert.deepEqual(resolveTier(noOwner, OWNER, dm()), { tier: 'none', org: null, resolvedBy: 'none', step: null, reason: NONE, source: null, notes: [] });
});

test('step 2: a member in a DM or a bound channel (or a thread of its forum), pointing at members', () => {
  const members = { file: 'orgs/bookclub.toml', line: 6 };
  assert.deepEqual(resolveTier(policy, ALICE, dm()), {
    tier: 'member', org: 'bookclub', resolvedBy: 'membership', step: 2,
    reason: `step 2: ${ALICE} is a member of org "bookclub" and this is a DM`, source: members, notes: [],
  });
  assert.deepEqual(resolveTier(policy, ALICE, guild(BOOK_CH)), {
    tier: 'member', org: 'bookclub', resolvedBy: 'membership', step: 2,
    reason: `step 2: ${ALICE} is a member of org "bookclub" and channel ${BOOK_CH} is bound to it`, source: members, notes: [],
  });
  assert.deepEqual(resolveTier(policy, ALICE, guild('1234', BOOK_CH)), {
    tier: 'member', org: 'bookclub', resolvedBy: 'membership', step: 2,
    reason: `step 2: ${ALICE} is a member of org "bookclub" and channel ${BOOK_CH} is bound to it`, source: members, notes: [],
  });
  assert.deepEqual(resolveTier(policy, CAROL, dm()).source, { file: 'orgs/chess.toml', line: 3 });
  // An org whose key lines are not known (built by hand): the org file itself.
  const chess = policy.orgs.find((o) => o.name === 'chess');
  assert.ok(chess);
  const src = { file: 'orgs/chess.toml', line: 1, column: 1 };
  const byHand: PolicySet = { ...policy, orgs: [{ ...chess, source: src, keyLines: {} }] };
  assert.deepEqual(resolveTier(byHand, CAROL, dm()).source, src);
  assert.deepEqual(resolveTier(byHand, '999', guild(OTHER_CH)).source, src);
  assert.deepEqual(accessFor(byHand, { tier: 'member', org: 'chess' }).foldersSource, src);
});

test('step 2 in a DM with two (or three) orgs is ambiguous: noted with their names, no org', () => {
  const two = `members = ["${ALICE}"]\nchannels = []\nfolders = []\ncommands = []\nhourly_cap = 1\n`;
  const p = buildPolicy(rootFiles({ orgs: { bookclub: BOOKCLUB, two, three: two }, guests: GUESTS })).policy;
  assert.deepEqual(resolveTier(p, ALICE, dm()), {
    tier: 'none', org: null, resolvedBy: 'none', step: null, reason: NONE, source: null,
    notes: [`user ${ALICE} is a member of "bookclub" and "three" and "two"; in a DM that is ambiguous, so step 2 does not apply`],
  });
  // Ambiguity is noted only in a DM, and only then; one org alone or none: no note.
  assert.deepEqual(resolveTier(p, ALICE, guild('1')).notes, []);
  assert.deepEqual(resolveTier(policy, CAROL, guild('1')).notes, []);
  assert.deepEqual(resolveTier(policy, '999', dm()).notes, []);
});

test('step 3: a channel (or its forum) bound to an org makes anyone there its member, pointing at channels', () => {
  const r = { tier: 'member', org: 'chess', resolvedBy: 'channel-binding', step: 3, reason: `step 3: channel ${OTHER_CH} is bound to org "chess"`, source: { file: 'orgs/chess.toml', line: 2 }, notes: [] };
  assert.deepEqual(resolveTier(policy, ALICE, guild(OTHER_CH)), r, 'a member of another org');
  assert.deepEqual(resolveTier(policy, '999', guild('1234', OTHER_CH)), r, 'a thread of the bound forum');
  // The thread's own channel comes first: a thread bound itself decides over its forum.
  assert.equal(resolveTier(policy, '999', guild(BOOK_CH, OTHER_CH)).org, 'bookclub');
});

test('step 4: a guest channel (or a thread of one), pointing at guests.toml\'s channels line', () => {
  const r = { tier: 'guest', org: null, resolvedBy: 'guest-channel', step: 4, reason: `step 4: channel ${GUEST_CH} is listed in config/guests.toml`, source: { file: 'config/guests.toml', line: 4 }, notes: [] };
  assert.deepEqual(resolveTier(policy, '999', guild(GUEST_CH)), r);
  assert.deepEqual(resolveTier(policy, CAROL, guild('1234', GUEST_CH)), r);
  assert.deepEqual(resolveTier(policy, '999', guild('1234')), { tier: 'none', org: null, resolvedBy: 'none', step: null, reason: NONE, source: null, notes: [] });
  // Guests without a known channels line: the file itself.
  const g = policy.guests;
  assert.ok(g);
  const byHand: PolicySet = { ...policy, guests: { channels: g.channels, folders: g.folders, source: { file: 'config/guests.toml', line: 1, column: 1 }, keyLines: {} } };
  assert.deepEqual(resolveTier(byHand, '999', guild(GUEST_CH)).source, { file: 'config/guests.toml', line: 1, column: 1 });
  assert.equal(resolveTier({ ...policy, guests: null }, '999', guild(GUEST_CH)).tier, 'none');
});

const nothing = (tier: Access['tier'], org: string | null): Access => ({ tier, org, folders: [], foldersSource: null, commands: [], shell: false, skills: false, subtasks: false, write: false, hourlyCap: null });

test('accessFor: the exact grant of each tier', () => {
  assert.deepEqual(accessFor(policy, { tier: 'owner', org: null }), {
    tier: 'owner', org: null, folders: ['/memories/', '/workspace/'], foldersSource: null, commands: ['*'], shell: true, skills: true, subtasks: true, write: true, hourlyCap: null,
  });
  assert.deepEqual(accessFor(policy, { tier: 'member', org: 'bookclub' }), {
    tier: 'member', org: 'bookclub', folders: ['/workspace/bookclub/', '/memories/bookclub/'], foldersSource: { file: 'orgs/bookclub.toml', line: 4 },
    commands: ['ls', 'cat'], shell: false, skills: false, subtasks: false, write: false, hourlyCap: 20,
  });
  assert.deepEqual(accessFor(policy, { tier: 'guest', org: null }), {
    tier: 'guest', org: null, folders: ['/workspace/public/'], foldersSource: { file: 'config/guests.toml', line: 3 },
    commands: [], shell: false, skills: false, subtasks: false, write: false, hourlyCap: null,
  });
  assert.deepEqual(accessFor(policy, { tier: 'none', org: null }), nothing('none', null));
  assert.deepEqual(accessFor(policy, { tier: 'member', org: 'gone' }), nothing('member', 'gone'), 'an org no longer in the policy grants nothing');
  assert.deepEqual(accessFor({ ...policy, guests: null }, { tier: 'guest', org: null }), nothing('guest', null));
  const g = policy.guests;
  assert.ok(g);
  const src = { file: 'config/guests.toml', line: 1, column: 1 };
  assert.deepEqual(accessFor({ ...policy, guests: { ...g, source: src, keyLines: {} } }, { tier: 'guest', org: null }).foldersSource, src);
});

test('accessFor returns copies: changing an access never changes the policy', () => {
  const m = accessFor(policy, { tier: 'member', org: 'bookclub' });
  m.folders.push('/workspace/');
  m.commands.push('rm');
  const gu = accessFor(policy, { tier: 'guest', org: null });
  gu.folders.push('/memories/');
  assert.deepEqual(accessFor(policy, { tier: 'member', org: 'bookclub' }).folders, ['/workspace/bookclub/', '/memories/bookclub/']);
  assert.deepEqual(accessFor(policy, { tier: 'member', org: 'bookclub' }).commands, ['ls', 'cat']);
  assert.deepEqual(accessFor(policy, { tier: 'guest', org: null }).folders, ['/workspace/public/']);
});

test('tierFolders: the folders each tier grants', () => {
  assert.deepEqual(tierFolders(policy, { tier: 'owner', org: null }), ['/memories/', '/workspace/']);
  assert.deepEqual(tierFolders(policy, { tier: 'member', org: 'chess' }), ['/workspace/chess/']);
  assert.deepEqual(tierFolders(policy, { tier: 'member', org: 'gone' }), []);
  assert.deepEqual(tierFolders(policy, { tier: 'guest', org: null }), ['/workspace/public/']);
  assert.deepEqual(tierFolders({ ...policy, guests: null }, { tier: 'guest', org: null }), []);
  assert.deepEqual(tierFolders(policy, { tier: 'none', org: null }), []);
});

test('folderContaining: same section, whole segments; entries that are no canonical path are skipped', () => {
  const folders = ['not a path', '/memories/a/', '/workspace/a/b/', '/workspace/c'];
  assert.equal(folderContaining(folders, '/memories/a/x'), '/memories/a/');
  assert.equal(folderContaining(folders, '/memories/a'), '/memories/a/');
  assert.equal(folderContaining(folders, '/workspace/a/x'), null, 'a memories folder never grants the workspace');
  assert.equal(folderContaining(folders, '/workspace/a/b/c'), '/workspace/a/b/');
  assert.equal(folderContaining(folders, '/workspace/a/bc'), null, 'whole segments');
  assert.equal(folderContaining(folders, '/workspace/c'), '/workspace/c');
  assert.equal(folderContaining(folders, '/workspace/c/d'), null, 'a key without a trailing / is that path only');
  assert.equal(folderContaining(folders, '/workspace/../memories/a/x'), null, 'not canonical');
  assert.equal(folderContaining(folders, 'memories/a/x'), null);
  assert.equal(folderContaining(['/workspace/x/', '/workspace/'], '/workspace/x/y'), '/workspace/x/', 'the first that contains it');
  // Above the plain scan's size the decision index answers the same.
  const many = Array.from({ length: 40 }, (_, i) => `/workspace/f${i}/`);
  assert.equal(folderContaining([...many, '/memories/a/'], '/memories/a/x'), '/memories/a/');
  assert.equal(folderContaining(many, '/memories/f3/x'), null);
  assert.equal(folderContaining(many, '/workspace/f39/x'), '/workspace/f39/');
});

test('tierGrantsPath: each answer and its reason', () => {
  const owner = accessFor(policy, { tier: 'owner', org: null });
  const member = accessFor(policy, { tier: 'member', org: 'bookclub' });
  const guest = accessFor(policy, { tier: 'guest', org: null });
  const none = accessFor(policy, { tier: 'none', org: null });
  assert.deepEqual(tierGrantsPath(owner, '/workspace/x/../y', false), { granted: false, folder: null, reason: 'not a canonical path under /memories/ or /workspace/' });
  assert.deepEqual(tierGrantsPath(owner, '/workspace/y', true), { granted: true, folder: '/workspace/', reason: 'the owner may read and write everything' });
  assert.deepEqual(tierGrantsPath(owner, '/memories/y', false), { granted: true, folder: '/memories/', reason: 'the owner may read and write everything' });
  assert.deepEqual(tierGrantsPath(member, '/memories/bookclub/n', false), { granted: true, folder: '/memories/bookclub/', reason: 'tier member grants folder /memories/bookclub/' });
  assert.deepEqual(tierGrantsPath(member, '/memories/bookclub/n', true), { granted: false, folder: null, reason: 'tier member is read-only: only the owner may write' });
  assert.deepEqual(tierGrantsPath(member, '/workspace/chess/n', false), { granted: false, folder: null, reason: 'tier member grants no folder containing this path' });
  assert.deepEqual(tierGrantsPath(guest, '/workspace/public/n', false), { granted: true, folder: '/workspace/public/', reason: 'tier guest grants folder /workspace/public/' });
  assert.deepEqual(tierGrantsPath(guest, '/workspace/private/n', false), { granted: false, folder: null, reason: 'tier guest grants no folder containing this path' });
  assert.deepEqual(tierGrantsPath(none, '/workspace/public/n', false), { granted: false, folder: null, reason: 'tier none grants nothing' });
  assert.deepEqual(tierGrantsPath(none, '/workspace/public/n', true), { granted: false, folder: null, reason: 'tier none is read-only: only the owner may write' });
});

// canRead (index.ts) asks the same question as explain without building the explanation.
test('canRead: tier AND conditions, writes for the owner only, anything not a string path refused', () => {
  const conds = `[workspace."/"]\nwhen = "discord:dm"\naction = "allow"\n\n[memories."/"]\nwhen = "discord:dm"\naction = "allow"\n`;
  const p = buildPolicy(rootFiles({ conditions: conds, orgs: { bookclub: BOOKCLUB, chess: CHESS }, guests: GUESTS })).policy;
  assert.equal(canRead(p, OWNER, dm(), '/workspace/any'), true);
  assert.equal(canRead(p, OWNER, dm(), '/workspace/any', { write: true }), true);
  assert.equal(canRead(p, OWNER, guild('1'), '/workspace/any'), false, 'conditions bind the owner');
  assert.equal(canRead(p, ALICE, dm(), '/workspace/bookclub/a'), true);
  assert.equal(canRead(p, ALICE, dm(), '/workspace/bookclub/a', { write: true }), false, 'a member never writes');
  assert.equal(canRead(p, ALICE, dm(), '/workspace/bookclub/a', { write: false }), true);
  assert.equal(canRead(p, ALICE, dm(), '/workspace/chess/a'), false, 'not its folder');
  assert.equal(canRead(p, '999', dm(), '/workspace/public/a'), false, 'tier none');
  assert.equal(canRead(p, OWNER, dm(), 42 as unknown as string), false);
  assert.equal(canRead(p, OWNER, dm(), { toString: () => '/workspace/any' } as unknown as string), false, 'an object that reads as an allowed path is still no path');
  assert.equal(canRead(p, ALICE, dm(), '/workspace/bookclub/a', null as unknown as { write?: boolean }), true, 'null options: a read');
  assert.equal(canRead(p, OWNER, dm(), '/workspace/a/../b'), false);
  // The tier none shortcut: a policy where conditions allow everything still grants nothing to none.
  assert.equal(canRead(p, '999', dm(), '/workspace/'), false);
  // A guest in a guild where conditions allow nothing is refused by the conditions, not the tier.
  const all = buildPolicy(rootFiles({ conditions: `[workspace."/"]\nwhen = "discord:guild:1"\naction = "allow"\n`, guests: GUESTS })).policy;
  assert.equal(canRead(all, '999', guild(GUEST_CH), '/workspace/public/a'), true);
  assert.equal(canRead(all, '999', guild(GUEST_CH), '/workspace/public/a', { write: true }), false, 'a guest never writes');
  assert.equal(canRead(all, '999', guild(GUEST_CH), '/workspace/other/a'), false);
  assert.equal(canRead(all, OWNER, { kind: 'internal' }, '/workspace/other/a'), false, 'internal: the guild condition does not hold');
});
