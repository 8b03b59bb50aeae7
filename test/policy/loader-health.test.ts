/**
 * The policy loader's per-file health: why each file grants nothing, an unreadable file of any
 * kind, misplaced files under orgs/ and blocks/, overlaps warned about, and orgs in name order.
 * Pure: in `npm run mutate -- policy` (scripts/mutate.mjs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPolicy } from '../../src/policy/index.js';
import { ALICE, BOOKCLUB, BOOK_CH, GUEST_CH, NSFW_MD, org, rootFiles } from './fixtures.js';

test('health: why each file grants nothing', () => {
  const h = (files: ReturnType<typeof rootFiles>, path: string) => buildPolicy(files).files.find((f) => f.path === path);
  assert.deepEqual(h(rootFiles(), 'orgs/bookclub.toml'), { path: 'orgs/bookclub.toml', kind: 'org', status: 'ok', errors: [], grantsNothing: false, reason: null });
  assert.deepEqual(h(rootFiles({ orgs: { a: org({ commands: ['ls'] }) } }), 'orgs/a.toml')?.reason, 'folders = []: grants no folder (commands only)');
  assert.equal(h(rootFiles({ orgs: { a: org({ commands: ['ls'] }) } }), 'orgs/a.toml')?.grantsNothing, false);
  assert.deepEqual([h(rootFiles({ orgs: { a: org({}) } }), 'orgs/a.toml')?.grantsNothing, h(rootFiles({ orgs: { a: org({}) } }), 'orgs/a.toml')?.reason], [true, 'folders = [] and commands = []: grants nothing']);
  const badOrg = h(rootFiles({ orgs: { a: 'members = 3\n' } }), 'orgs/a.toml');
  assert.deepEqual([badOrg?.status, badOrg?.grantsNothing, badOrg?.reason], ['invalid', true, 'invalid']);
  // Two orgs on one channel: both invalid, both grant nothing.
  const two = rootFiles({ orgs: { a: org({ channels: [BOOK_CH], folders: ['/workspace/a/'] }), b: org({ channels: [BOOK_CH], folders: ['/workspace/b/'] }) } });
  for (const p of ['orgs/a.toml', 'orgs/b.toml']) {
    const x = h(two, p);
    assert.deepEqual([x?.status, x?.grantsNothing, x?.reason], ['invalid', true, 'invalid'], p);
  }
  assert.deepEqual(buildPolicy(two).policy.orgs, []);
  assert.deepEqual(h(rootFiles({ guests: 'channels = []\nfolders = ["/workspace/x/"]\n' }), 'config/guests.toml')?.reason, 'channels = []: nobody is a guest');
  assert.deepEqual(h(rootFiles({ guests: `channels = ["${GUEST_CH}"]\nfolders = []\n` }), 'config/guests.toml')?.reason, 'folders = []: guests can read no folder');
  assert.deepEqual([h(rootFiles(), 'config/guests.toml')?.grantsNothing, h(rootFiles(), 'config/guests.toml')?.reason], [false, null]);
  assert.deepEqual([h(rootFiles({ guests: null }), 'config/guests.toml')?.grantsNothing, h(rootFiles({ guests: null }), 'config/guests.toml')?.reason], [true, 'missing']);
  assert.deepEqual(h(rootFiles({ conditions: null }), 'config/conditions.toml')?.reason, 'missing: every /memories/ and /workspace/ path is denied and no block loads');
  assert.deepEqual([h(rootFiles(), 'config/conditions.toml')?.grantsNothing, h(rootFiles(), 'config/conditions.toml')?.reason], [false, null]);
  assert.deepEqual(h(rootFiles({ warden: null }), 'config/warden.toml')?.reason, 'missing: no owner');
  assert.deepEqual(h(rootFiles({ warden: 'approval = "tty"\n' }), 'config/warden.toml')?.reason, 'no owner configured');
  assert.deepEqual([h(rootFiles(), 'config/warden.toml')?.grantsNothing, h(rootFiles(), 'config/warden.toml')?.reason], [false, null]);
  assert.deepEqual(h(rootFiles({ blocks: { nsfw: 'no front matter' } }), 'blocks/conditional/nsfw.md')?.reason, 'invalid: never loads');
  assert.deepEqual([h(rootFiles(), 'blocks/conditional/nsfw.md')?.grantsNothing, h(rootFiles(), 'blocks/conditional/nsfw.md')?.reason], [false, null]);
});

test('an unreadable file of any kind grants nothing and says why', () => {
  const files = rootFiles().map((f) => ({ ...f, text: null, unreadable: 'is a symlink, not a regular file' }));
  const r = buildPolicy(files);
  for (const f of r.files) {
    assert.equal(f.status, 'unreadable', f.path);
    assert.equal(f.grantsNothing, true, f.path);
    assert.deepEqual(f.errors, [{ file: f.path, message: 'is a symlink, not a regular file: grants nothing' }]);
  }
  assert.deepEqual(r.files.map((f) => f.kind), ['conditions', 'guests', 'warden', 'block', 'org']);
  assert.deepEqual([r.policy.conditions, r.policy.guests, r.policy.owner, r.policy.orgs, r.policy.blocks.size], [null, null, null, [], 0]);
});

test('misplaced files under orgs/ and blocks/ are ignored with a warning that says where they belong', () => {
  const r = buildPolicy([...rootFiles(), { path: 'orgs/sub/x.toml', text: BOOKCLUB }, { path: 'blocks/conditional/sub/x.md', text: NSFW_MD }, { path: 'blocks/x.md', text: NSFW_MD }, { path: 'notes/x.md', text: 'x' }]);
  assert.deepEqual(r.warnings.filter((w) => /^ignored/.test(w.message)), [
    { file: 'blocks/conditional/sub/x.md', message: 'ignored: block files are blocks/conditional/<name>.md' },
    { file: 'orgs/sub/x.toml', message: 'ignored: org files are orgs/<name>.toml' },
  ]);
});

test('overlaps are warned about: a guest channel bound to an org, a member of two orgs', () => {
  const r = buildPolicy(rootFiles({ guests: `channels = ["${BOOK_CH}"]\nfolders = ["/workspace/public/"]\n`, orgs: { bookclub: BOOKCLUB, zeta: org({ members: [ALICE], folders: ['/workspace/z/'] }) } }));
  assert.deepEqual(r.errors, []);
  const g = r.warnings.find((w) => w.file === 'config/guests.toml');
  assert.equal(g?.message, `channel ${BOOK_CH} is also bound to org "bookclub": the binding wins, nobody is a guest there`);
  const m = r.warnings.find((w) => /is a member of/.test(w.message));
  assert.equal(m?.message, `user ${ALICE} is a member of "bookclub" and "zeta": in a DM their org is ambiguous, so a DM resolves to no org for them`);
  assert.equal(m?.file, 'orgs/bookclub.toml');
  assert.deepEqual(r.policy.orgs.map((o) => o.name), ['bookclub', 'zeta']);
  const one = buildPolicy(rootFiles());
  assert.ok(!one.warnings.some((w) => /is a member of|also bound/.test(w.message)), JSON.stringify(one.warnings));
});

test('orgs are sorted by name whatever the input order; a later duplicate path replaces the earlier', () => {
  const files = [...rootFiles({ orgs: {} }), { path: 'orgs/zz.toml', text: org({ folders: ['/workspace/z/'] }) }, { path: 'orgs/aa.toml', text: org({ folders: ['/workspace/a/'] }) }, { path: 'orgs/mm.toml', text: org({ folders: ['/workspace/m/'] }) }];
  assert.deepEqual(buildPolicy(files).policy.orgs.map((o) => o.name), ['aa', 'mm', 'zz']);
  assert.deepEqual(buildPolicy(files).files.map((f) => f.path).slice(3), ['blocks/conditional/nsfw.md', 'orgs/aa.toml', 'orgs/mm.toml', 'orgs/zz.toml']);
  const dup = [...files, { path: 'orgs/aa.toml', text: org({ folders: ['/workspace/other/'] }) }];
  assert.deepEqual(buildPolicy(dup).policy.orgs.find((o) => o.name === 'aa')?.folders, ['/workspace/other/']);
});
