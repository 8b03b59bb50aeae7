// Pure units of the policy folder that the scenario tests reach only in part (the
// policy mutation run found stretches of survivors): the validators, the
// decision index beside its plain scan, the path helpers' reference definition and the
// loader's per-file health. Fast and pure: run per mutant by `npm run mutate -- policy`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildPolicy, keyMatches, validatePolicyChange, validatePolicyFile, validatePolicyState, policyKindOf,
  type PolicyKind,
} from '../../src/policy/index.js';
import { firstFolderContaining, rulesMatching } from '../../src/policy/decide.js';
import { isCanonicalRelative, isCanonicalRelativeBySegments, keySpecificity, splitTarget } from '../../src/policy/paths.js';
import { recentResults } from '../../src/policy/recent.js';
import { ALICE, BOOKCLUB, BOOK_CH, CONDITIONS, GUESTS, GUEST_CH, NSFW_MD, WARDEN, org, rootFiles } from './fixtures.js';

// The sandbox plan and its layout: test/runtime/sandbox-layout.test.ts.

// ---------------------------------------------------------------- validators

test('validatePolicyFile: each kind goes to its own parser; a valid file has no error', () => {
  const valid: [PolicyKind, string, string][] = [['conditions', 'config/conditions.toml', CONDITIONS], ['guests', 'config/guests.toml', GUESTS], ['org', 'orgs/bookclub.toml', BOOKCLUB], ['block', 'blocks/conditional/nsfw.md', NSFW_MD], ['warden', 'config/warden.toml', WARDEN]];
  for (const [kind, path, text] of valid) assert.deepEqual(validatePolicyFile(kind, path, text), [], kind);
  // Each kind's own schema: an org file is not a valid guests file, nor the other way round.
  const asGuests = validatePolicyFile('guests', 'config/guests.toml', BOOKCLUB);
  assert.ok(asGuests.length > 0 && asGuests.every((e) => e.file === 'config/guests.toml'));
  assert.ok(validatePolicyFile('org', 'orgs/x.toml', GUESTS).length > 0);
  assert.ok(validatePolicyFile('warden', 'config/warden.toml', 'owner = 3\n').length > 0);
  assert.ok(validatePolicyFile('block', 'blocks/conditional/x.md', 'no front matter').length > 0);
  assert.ok(validatePolicyFile('conditions', 'config/conditions.toml', '[memories."/x/"]\naction = "explode"\n').length > 0);
  assert.deepEqual(validatePolicyFile('nonsense' as PolicyKind, 'x', ''), [{ file: 'x', message: 'unknown policy kind "nonsense"' }]);
});

test('validatePolicyChange: a channel moved into a second org is blamed on the change; old errors and non-policy paths are not', () => {
  const current = rootFiles();
  const clash = org({ members: [], channels: [BOOK_CH], folders: ['/workspace/x/'] });
  const errs = validatePolicyChange(current, 'orgs/chess.toml', clash);
  assert.ok(errs.some((e) => /also bound to org/.test(e.message) && e.file === 'orgs/chess.toml'), JSON.stringify(errs));
  assert.ok(errs.some((e) => /also bound to org/.test(e.message) && e.file === 'orgs/bookclub.toml'), 'the other org\'s new error too');
  assert.deepEqual(validatePolicyChange(current, 'orgs/chess.toml', org({ channels: ['999'] })), []);
  assert.deepEqual(validatePolicyChange(current, 'notes/readme.md', 'anything'), []);
  // Replacing a file: its old version is not part of the new set.
  assert.deepEqual(validatePolicyChange(current, 'orgs/bookclub.toml', BOOKCLUB.replace('hourly_cap = 20', 'hourly_cap = 25')), []);
  // Its own errors once, not again as a set error.
  const bad = validatePolicyChange(current, 'config/guests.toml', 'channels = 3\n');
  assert.ok(bad.length > 0);
  assert.equal(new Set(bad.map((e) => `${e.file}|${e.key}|${e.message}`)).size, bad.length, JSON.stringify(bad));
  // An error the set already had is not blamed on an unrelated change.
  const broken = [...current.filter((f) => f.path !== 'config/guests.toml'), { path: 'config/guests.toml', text: 'channels = 3\n' }];
  assert.deepEqual(validatePolicyChange(broken, 'orgs/chess.toml', org({ channels: ['999'] })), []);
  // ...but a new error in a set that already had one is still blamed.
  assert.ok(validatePolicyChange(broken, 'orgs/chess.toml', clash).some((e) => /also bound to org/.test(e.message)));
  // Removing guests.toml adds its "missing" error; a rule without a block file is left to `warden check`.
  const removed = validatePolicyChange(current, 'config/guests.toml', null);
  assert.ok(removed.length > 0 && removed.every((e) => e.file === 'config/guests.toml'), JSON.stringify(removed));
  assert.deepEqual(validatePolicyChange(current, 'blocks/conditional/nsfw.md', null), []);
});

test('validatePolicyState: several changes judged as one state, block/rule pairing included', () => {
  const current = rootFiles();
  const rule = CONDITIONS + '\n[blocks.book]\nwhen = "discord:guild:1"\naction = "load"\n';
  const both = validatePolicyState(current, [{ path: 'config/conditions.toml', text: rule }, { path: 'blocks/conditional/book.md', text: NSFW_MD }]);
  assert.deepEqual(both, []);
  const ruleOnly = validatePolicyState(current, [{ path: 'config/conditions.toml', text: rule }]);
  assert.ok(ruleOnly.some((e) => /block "book" has a rule but no file/.test(e.message)), JSON.stringify(ruleOnly));
  const fileGone = validatePolicyState(current, [{ path: 'blocks/conditional/nsfw.md', text: null }]);
  assert.ok(fileGone.some((e) => /block "nsfw" has a rule but no file/.test(e.message)), JSON.stringify(fileGone));
  // Own errors once; non-policy paths skipped; an old error is not blamed.
  const own = validatePolicyState(current, [{ path: 'config/guests.toml', text: 'channels = 3\n' }, { path: 'README.md', text: 'x' }]);
  assert.ok(own.length > 0);
  assert.equal(new Set(own.map((e) => `${e.file}|${e.key}|${e.message}`)).size, own.length, JSON.stringify(own));
  const broken = [...current.filter((f) => f.path !== 'config/guests.toml'), { path: 'config/guests.toml', text: 'channels = 3\n' }];
  assert.deepEqual(validatePolicyState(broken, [{ path: 'orgs/chess.toml', text: org({ channels: ['999'] }) }]), []);
  assert.deepEqual(validatePolicyState(current, []), []);
  assert.ok(!own.some((e) => e.file === 'README.md'), JSON.stringify(own));
  assert.ok(validatePolicyState(broken, [{ path: 'orgs/chess.toml', text: org({ channels: [BOOK_CH] }) }]).some((e) => /also bound to org/.test(e.message)));
  // A block removed with its rule: nothing wrong, and the removed file is not validated as blank.
  assert.deepEqual(validatePolicyState(current, [{ path: 'config/conditions.toml', text: CONDITIONS.replace('[blocks.nsfw]\nwhen = "discord:nsfw"\naction = "load"\n', '') }, { path: 'blocks/conditional/nsfw.md', text: null }]), []);
});

test('the validators never throw: a surprise becomes a "cannot validate" error on the file', () => {
  const poison = [{ path: 'config/guests.toml', get text(): string { throw new Error('boom'); } }];
  assert.deepEqual(validatePolicyChange(poison as never, 'config/guests.toml', GUESTS), [{ file: 'config/guests.toml', message: 'cannot validate: Error: boom' }]);
  assert.deepEqual(validatePolicyState(poison as never, [{ path: 'orgs/a.toml', text: BOOKCLUB }]), [{ file: 'orgs/a.toml', message: 'cannot validate: Error: boom' }]);
  assert.deepEqual(validatePolicyState(poison as never, []), [{ file: '.', message: 'cannot validate: Error: boom' }]);
  const weird = { toString(): string { throw new Error('bad text'); } };
  const r = validatePolicyFile('guests', 'config/guests.toml', weird as never);
  assert.equal(r.length, 1);
  assert.match(r[0]?.message ?? '', /^cannot validate: /);
});

// ---------------------------------------------------------------- decision index

const RULE_KEYS = ['/a/', '/a/b.md', '/a/b/', '/', '/a', '/c/', '/a/b.md/', '/a/', '/ab/', '/a/b/c'];
const rules = RULE_KEYS.flatMap((key, i) => [
  { section: 'workspace' as const, key, i },
  { section: 'memories' as const, key, i },
]).map(({ section, key, i }) => ({ section, key, when: [], mode: 'and' as const, action: 'allow' as const, source: { file: 'c', line: i + 1 } }));
const PATHS = ['/', '/a', '/a/', '/a/b.md', '/a/b.md/', '/a/b', '/a/b/', '/a/b/c', '/a/b/c/', '/ab', '/abc', '/c', '/c/d', '/x'];

test('rulesMatching gives the same rules, in file order, as a filter with keyMatches', () => {
  for (const section of ['workspace', 'memories'] as const) {
    for (const rel of PATHS) {
      const want = rules.filter((r) => r.section === section && keyMatches(r.key, rel));
      assert.deepEqual(rulesMatching(rules as never, section, rel), want, `${section} ${rel}`);
    }
  }
  assert.deepEqual(rulesMatching(rules.filter((r) => r.section === 'workspace') as never, 'memories', '/a'), []);
});

test('rulesMatching: a list that grew in place is indexed again', () => {
  const list = rules.slice(0, 2) as never[];
  assert.equal(rulesMatching(list, 'workspace', '/c/d').length, 0);
  (list as unknown[]).push(...rules.filter((r) => r.key === '/c/'));
  assert.equal(rulesMatching(list, 'workspace', '/c/d').length, 1);
});

test('firstFolderContaining: below and above the scan threshold, the first folder in list order that contains the path', () => {
  const scanOf = (section: string, rel: string) => (f: string) => { const s = splitTarget(f); return s !== null && s.section === section && keyMatches(s.rel, rel); };
  const base = ['/workspace/z/', '/workspace/a/b/', '/workspace/a/', '/memories/a/', '/workspace/a/b.md', 'junk', '/workspace/q'];
  for (let n = 15; n <= 17; n++) {
    const filler = Array.from({ length: Math.max(0, n - base.length) }, (_, i) => `/workspace/f${i}/`);
    const folders = [...base, ...filler].slice(0, n);
    for (const section of ['workspace', 'memories'] as const) {
      for (const rel of [...PATHS, '/z/1', '/f3/x', '/q', '/q/']) {
        const scan = scanOf(section, rel);
        const want = folders.find(scan) ?? null;
        assert.equal(firstFolderContaining(folders, section, rel, scan), want, `${n} ${section} ${rel}`);
      }
    }
  }
  // A section no folder names: nothing, without a scan.
  const many = Array.from({ length: 20 }, (_, i) => `/workspace/f${i}/`);
  assert.equal(firstFolderContaining(many, 'memories', '/f1/x', () => true), null);
  // The index is rebuilt when the list grew in place.
  assert.equal(firstFolderContaining(many, 'workspace', '/new/x', () => true), null);
  many.push('/workspace/new/');
  assert.equal(firstFolderContaining(many, 'workspace', '/new/x', () => false), '/workspace/new/');
});

test('firstFolderContaining: with a prefix folder after an exact one, the earliest index wins', () => {
  const folders = [...Array.from({ length: 16 }, (_, i) => `/workspace/f${i}/`), '/workspace/a/b', '/workspace/a/'];
  assert.equal(firstFolderContaining(folders, 'workspace', '/a/b', () => false), '/workspace/a/b');
  const rev = [...Array.from({ length: 16 }, (_, i) => `/workspace/f${i}/`), '/workspace/a/', '/workspace/a/b'];
  assert.equal(firstFolderContaining(rev, 'workspace', '/a/b', () => false), '/workspace/a/');
});

// ---------------------------------------------------------------- path helpers

test('isCanonicalRelativeBySegments: the segment-by-segment definition', () => {
  const yes = ['/', '/a', '/a/', '/a/b', '/a/b/', '/.a', '/a./b', '/...'];
  const no = ['', 'a', 'ab', 'a/b', 'a/', '//', '/a//b', '/./', '/.', '/..', '/a/..', '/a/./b', '/a/../', '/a\u0000', '/a\u001f', '/a\u007f', '//a'];
  for (const s of yes) assert.equal(isCanonicalRelativeBySegments(s), true, JSON.stringify(s));
  for (const s of no) assert.equal(isCanonicalRelativeBySegments(s), false, JSON.stringify(s));
  assert.equal(keySpecificity('/a/b/'), 5);
  for (const s of ['/a/..', '/a/.', '/..']) assert.equal(isCanonicalRelative(s), false, s);
});

test('recentResults: a repeat of (text, file) is not parsed again, a new one is; each caller gets a copy', () => {
  let calls = 0;
  const parse = recentResults((t: string, f: string) => { calls++; return { v: [`${f}:${t}`] }; }, (r) => ({ v: [...r.v] }), 2);
  const a = parse('x', 'f');
  a.v.push('mine');
  assert.deepEqual(parse('x', 'f'), { v: ['f:x'] });
  assert.equal(calls, 1);
  parse('x', 'g');
  assert.equal(calls, 2);
  parse('x', 'f'); // both still held: a cache of 2 holds 2
  parse('x', 'g');
  assert.equal(calls, 2);
  parse('y', 'f');
  parse('x', 'f'); // evicted by the two newer ones
  assert.equal(calls, 4);
});

// ---------------------------------------------------------------- loader: kinds and health

test('policyKindOf: only the policy paths, spelled exactly', () => {
  const cases: [string, string | null][] = [
    ['config/conditions.toml', 'conditions'], ['config/guests.toml', 'guests'], ['config/warden.toml', 'warden'],
    ['orgs/a.toml', 'org'], ['orgs/a/b.toml', null], ['xorgs/a.toml', null], ['orgs/a.toml.bak', null], ['orgs/.toml', null],
    ['blocks/conditional/a.md', 'block'], ['blocks/conditional/a/b.md', null], ['xblocks/conditional/a.md', null], ['blocks/conditional/a.mdx', null],
    ['config/other.toml', null],
  ];
  for (const [p, k] of cases) assert.equal(policyKindOf(p), k, p);
});

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

