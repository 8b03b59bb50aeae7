// What `warden explain` tells a person, field by field (explain.js's mutants lived
// because the scenario tests ran it without reading its wording, its sources or its order).
// Pure: run per mutant by `npm run mutate -- policy`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPolicy, explain, formatSource, type Explanation, type SessionContext } from '../../src/policy/index.js';
import { ALICE, BOOK_CH, CONDITIONS, GUEST_CH, OTHER_CH, OWNER, rootFiles } from './fixtures.js';

const policy = buildPolicy(rootFiles()).policy;
const nsfwGuild: SessionContext = { kind: 'guild', guild: '1', channel: BOOK_CH, nsfw: true };
const BASELINE = { decision: 'allow', step: 4, rule: null, source: null, reason: 'no rule matches the path (baseline: allowed)' } as const;
const OWNER_TIER = { granted: true, folder: '/workspace/', reason: 'the owner may read and write everything', source: null } as const;
const NSFW_RULE = { name: 'nsfw', rule: 'blocks.nsfw', source: 'config/conditions.toml:1' } as const;
const blocksOf = (e: Explanation) => ({ blocks: e.blocks, detail: e.blocks_detail });

test('formatSource: "file:line", just the file when no line is known, null for no source', () => {
  assert.equal(formatSource({ file: 'orgs/a.toml', line: 3, column: 9 }), 'orgs/a.toml:3');
  assert.equal(formatSource({ file: 'config/conditions.toml' }), 'config/conditions.toml');
  assert.equal(formatSource(null), null);
  assert.equal(formatSource(undefined), null);
});

test('explain, a member in their channel: the resolution, sorted facts, the block that loads, folders with their org file line', () => {
  const e = explain(policy, ALICE, nsfwGuild);
  assert.deepEqual(e.targets, [], 'no target asked, none explained');
  assert.deepEqual([e.tier, e.org, e.resolved_by], ['member', 'bookclub', 'membership']);
  assert.deepEqual(e.resolution, { step: 2, reason: `step 2: ${ALICE} is a member of org "bookclub" and channel ${BOOK_CH} is bound to it`, source: 'orgs/bookclub.toml:1', notes: [] });
  assert.equal(e.user, ALICE);
  assert.deepEqual(e.context, nsfwGuild);
  // contextFacts yields guild, channel, nsfw; explain lists them sorted.
  assert.deepEqual(e.facts, [`discord:channel:${BOOK_CH}`, 'discord:guild:1', 'discord:nsfw']);
  assert.deepEqual(blocksOf(e), { blocks: ['nsfw'], detail: [{ ...NSFW_RULE, loaded: true, reason: 'its condition holds' }] });
  assert.deepEqual([e.commands, e.shell, e.skills, e.subtasks, e.write, e.hourly_cap], [['ls', 'cat'], false, false, false, false, 20]);
  assert.deepEqual(e.folders, [
    { folder: '/workspace/bookclub/', source: 'orgs/bookclub.toml:3', conditions: BASELINE },
    { folder: '/memories/bookclub/', source: 'orgs/bookclub.toml:3', conditions: BASELINE },
  ]);
});

test('explain, a member\'s targets: allowed by their folder (named, at its org line), by a rule, denied by the tier (org named) or by a rule, and a path outside the sections', () => {
  const conditions = `${CONDITIONS}\n[workspace."/bookclub/club/"]\nwhen = "discord:guild:1"\naction = "allow"\n\n[workspace."/bookclub/staff/"]\nwhen = "discord:dm"\naction = "allow"\n`;
  const p = buildPolicy(rootFiles({ conditions })).policy;
  const member = { granted: true, folder: '/workspace/bookclub/', reason: 'tier member grants folder /workspace/bookclub/', source: 'orgs/bookclub.toml:3' };
  const noFolder = { granted: false, folder: null, reason: 'tier member grants no folder containing this path', source: null };
  const e = explain(p, ALICE, nsfwGuild, ['/workspace/bookclub/x', '/workspace/bookclub/club/a', '/workspace/bookclub/staff/a', '/workspace/deploy/a', '/etc/passwd']);
  assert.deepEqual(e.targets, [
    { target: '/workspace/bookclub/x', decision: 'allow', rule: 'folder /workspace/bookclub/', source: 'orgs/bookclub.toml:3', access: 'read', decided_by: 'conditions', tier: member, conditions: BASELINE },
    { target: '/workspace/bookclub/club/a', decision: 'allow', rule: 'workspace."/bookclub/club/"', source: 'config/conditions.toml:22', access: 'read', decided_by: 'conditions', tier: member,
      conditions: { decision: 'allow', step: 2, rule: 'workspace."/bookclub/club/"', source: 'config/conditions.toml:22', reason: 'an allow rule matches the path and the context' } },
    { target: '/workspace/bookclub/staff/a', decision: 'deny', rule: 'workspace."/bookclub/staff/"', source: 'config/conditions.toml:26', access: 'read', decided_by: 'conditions', tier: member,
      conditions: { decision: 'deny', step: 3, rule: 'workspace."/bookclub/staff/"', source: 'config/conditions.toml:26', reason: 'rules match the path, but none of their conditions hold in this context' } },
    { target: '/workspace/deploy/a', decision: 'deny', rule: 'tier member (org bookclub)', source: null, access: 'read', decided_by: 'tier', tier: noFolder,
      conditions: { decision: 'deny', step: 3, rule: 'workspace."/deploy/"', source: 'config/conditions.toml:9', reason: 'rules match the path, but none of their conditions hold in this context' } },
    { target: '/etc/passwd', decision: 'deny', rule: 'tier member (org bookclub)', source: null, access: 'read', decided_by: 'tier',
      tier: { ...noFolder, reason: 'not a canonical path under /memories/ or /workspace/' },
      conditions: { decision: 'deny', step: 0, rule: null, source: 'config/conditions.toml', reason: 'not a canonical path under /memories/ or /workspace/' } },
  ]);
});

test('explain, the owner: no tier source or folder label (the owner has no org file), a rule still denies, write access reported', () => {
  const e = explain(policy, OWNER, { kind: 'dm', channel: '9' }, ['/workspace/deploy/a', '/workspace/other']);
  assert.deepEqual(e.targets, [
    { target: '/workspace/deploy/a', decision: 'deny', rule: 'workspace."/deploy/"', source: 'config/conditions.toml:9', access: 'read', decided_by: 'conditions', tier: OWNER_TIER,
      conditions: { decision: 'deny', step: 3, rule: 'workspace."/deploy/"', source: 'config/conditions.toml:9', reason: 'rules match the path, but none of their conditions hold in this context' } },
    { target: '/workspace/other', decision: 'allow', rule: null, source: null, access: 'read', decided_by: 'conditions', tier: OWNER_TIER, conditions: BASELINE },
  ]);
  assert.deepEqual(e.folders.map((f) => [f.folder, f.source]), [['/memories/', null], ['/workspace/', null]]);
  assert.deepEqual(blocksOf(e), { blocks: [], detail: [{ ...NSFW_RULE, loaded: false, reason: 'its condition does not hold here' }] });
  const w = explain(policy, OWNER, { kind: 'internal' }, ['/workspace/secrets/k'], { write: true });
  assert.equal(w.resolved_by, 'internal-session');
  assert.deepEqual(w.targets, [{ target: '/workspace/secrets/k', decision: 'allow', rule: 'workspace."/secrets/"', source: 'config/conditions.toml:18', access: 'write', decided_by: 'conditions', tier: OWNER_TIER,
    conditions: { decision: 'allow', step: 2, rule: 'workspace."/secrets/"', source: 'config/conditions.toml:18', reason: 'an allow rule matches the path and the context' } }]);
});

test('explain, a guest: allowed by the guests.toml folder line', () => {
  const e = explain(policy, '999', { kind: 'guild', guild: '1', channel: GUEST_CH }, ['/workspace/public/a']);
  const guest = { granted: true, folder: '/workspace/public/', reason: 'tier guest grants folder /workspace/public/', source: 'config/guests.toml:2' };
  assert.deepEqual(e.targets, [{ target: '/workspace/public/a', decision: 'allow', rule: 'folder /workspace/public/', source: 'config/guests.toml:2', access: 'read', decided_by: 'conditions', tier: guest, conditions: BASELINE }]);
});

test('explain, tier none: "tier none" (no org), and a block whose condition holds still does not load', () => {
  const e = explain(policy, '999', { kind: 'guild', guild: '1', channel: OTHER_CH, nsfw: true }, ['/workspace/public/a']);
  assert.deepEqual([e.tier, e.org, e.resolved_by], ['none', null, 'none']);
  assert.deepEqual(e.targets, [{ target: '/workspace/public/a', decision: 'deny', rule: 'tier none', source: null, access: 'read', decided_by: 'tier',
    tier: { granted: false, folder: null, reason: 'tier none grants nothing', source: null }, conditions: BASELINE }]);
  assert.deepEqual(blocksOf(e), { blocks: [], detail: [{ ...NSFW_RULE, loaded: false, reason: 'tier none gets nothing' }] });
});

test('explain, blocks: an unknown context says why nothing loads, a rule without its file names the file, no conditions.toml lists no block', () => {
  const tui = explain(policy, ALICE, { kind: 'tui' } as unknown as SessionContext);
  assert.deepEqual(tui.facts, []);
  assert.deepEqual(blocksOf(tui), { blocks: [], detail: [{ ...NSFW_RULE, loaded: false, reason: 'a TUI session: "tui" is reserved, and this runtime has no TUI sessions: no block loads' }] });
  const noFile = explain(buildPolicy(rootFiles({ blocks: {} })).policy, ALICE, nsfwGuild);
  assert.deepEqual(blocksOf(noFile), { blocks: [], detail: [{ ...NSFW_RULE, loaded: false, reason: 'blocks/conditional/nsfw.md is missing or invalid' }] });
  const noCond = explain(buildPolicy(rootFiles({ conditions: null })).policy, ALICE, nsfwGuild);
  assert.deepEqual(blocksOf(noCond), { blocks: [], detail: [] });
});
