import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPolicy, parseBlock, parseGuests, parseOrg, validatePolicyFile, validatePolicyChange, validatePolicyState, policyKindOf } from '../../src/policy/index.js';
import { BOOKCLUB, BOOK_CH, GUESTS, NSFW_MD, org, rootFiles, CONDITIONS, WARDEN } from './fixtures.js';

test('the example root is clean', () => {
  const r = buildPolicy(rootFiles());
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.warnings, []);
  assert.equal(r.policy.orgs.length, 1);
  assert.equal(r.policy.owner, '123456789012345678');
  assert.equal(typeof r.policy.owner, 'string');
  assert.ok(r.policy.blocks.has('nsfw'));
  assert.ok(r.files.every((f) => f.status === 'ok' && !f.grantsNothing), JSON.stringify(r.files));
});

test('org: valid file keeps ids as strings', () => {
  const r = parseOrg(BOOKCLUB, 'orgs/bookclub.toml');
  assert.equal(r.status, 'ok');
  assert.equal(r.org?.name, 'bookclub');
  assert.deepEqual(r.org?.members, ['222222222222222222', '333333333333333333']);
  assert.equal(r.org?.hourlyCap, 20);
  assert.equal(r.org?.keyLines.folders, 3);
});

const badOrgs: { name: string; doc: string; line: number; key: RegExp }[] = [
  { name: 'unknown key', doc: `${BOOKCLUB}admins = []\n`, line: 6, key: /^admins$/ },
  { name: 'integer id', doc: BOOKCLUB.replace('"222222222222222222"', '222222222'), line: 1, key: /^members/ },
  { name: 'leading-zero id', doc: BOOKCLUB.replace(`"${BOOK_CH}"`, '"0123"'), line: 2, key: /^channels/ },
  { name: 'folder outside /workspace/ and /memories/', doc: BOOKCLUB.replace('"/memories/bookclub/"', '"/etc/"'), line: 3, key: /^folders/ },
  { name: 'folder with ..', doc: BOOKCLUB.replace('"/memories/bookclub/"', '"/memories/../x/"'), line: 3, key: /^folders/ },
  { name: 'zero cap', doc: BOOKCLUB.replace('hourly_cap = 20', 'hourly_cap = 0'), line: 5, key: /^hourly_cap$/ },
  { name: 'fractional cap', doc: BOOKCLUB.replace('hourly_cap = 20', 'hourly_cap = 2.5'), line: 5, key: /^hourly_cap$/ },
  { name: 'string cap', doc: BOOKCLUB.replace('hourly_cap = 20', 'hourly_cap = "20"'), line: 5, key: /^hourly_cap$/ },
  { name: 'missing hourly_cap', doc: BOOKCLUB.replace('hourly_cap = 20\n', ''), line: 1, key: /^hourly_cap$/ },
  { name: 'empty command', doc: BOOKCLUB.replace('"ls"', '""'), line: 4, key: /^commands/ },
  { name: 'syntax error', doc: 'members = [\n', line: 2, key: /.*/ },
];
for (const c of badOrgs) {
  test(`org invalid: ${c.name} → located, grants nothing`, () => {
    const r = parseOrg(c.doc, 'orgs/x.toml');
    assert.equal(r.status, 'invalid');
    assert.equal(r.org, null);
    const e = r.errors[0];
    assert.ok(e, 'has an error');
    assert.equal(e.file, 'orgs/x.toml');
    assert.equal(e.line, c.line, JSON.stringify(r.errors));
    assert.ok((e.column ?? 0) >= 1);
    assert.match(e.key ?? '', c.key);
  });
}

test('org with folders = [] is valid but grants no folder; commands = [] too → grants nothing', () => {
  const r = buildPolicy(rootFiles({ orgs: { empty: org({ members: ['9'], channels: ['8'] }) } }));
  assert.deepEqual(r.errors, []);
  const h = r.files.find((f) => f.path === 'orgs/empty.toml');
  assert.equal(h?.grantsNothing, true);
  assert.equal(r.policy.orgs[0]?.folders.length, 0);
});

test('empty, comment-only and missing manifests grant nothing and are errors', () => {
  for (const text of ['', '\n\n', '# just a comment\n']) {
    const r = buildPolicy(rootFiles({ conditions: text, guests: text, orgs: { bookclub: text } }));
    assert.equal(r.policy.conditions, null);
    assert.equal(r.policy.guests, null);
    assert.equal(r.policy.orgs.length, 0);
    for (const p of ['config/conditions.toml', 'config/guests.toml', 'orgs/bookclub.toml']) {
      const h = r.files.find((f) => f.path === p);
      assert.equal(h?.status, 'empty', p);
      assert.equal(h?.grantsNothing, true, p);
      assert.ok(r.errors.some((e) => e.file === p && e.line === 1 && e.column === 1), p);
    }
  }
  const m = buildPolicy(rootFiles({ conditions: null, guests: null }));
  assert.equal(m.files.find((f) => f.path === 'config/conditions.toml')?.status, 'missing');
  assert.equal(m.files.find((f) => f.path === 'config/guests.toml')?.grantsNothing, true);
  assert.equal(m.policy.conditions, null);
});

test('guests: strict, and empty lists grant nothing', () => {
  assert.equal(parseGuests(GUESTS).status, 'ok');
  const bad = parseGuests(`${GUESTS}members = []\n`);
  assert.equal(bad.guests, null);
  assert.equal(bad.errors[0]?.line, 3);
  assert.equal(bad.errors[0]?.key, 'members');
  assert.equal(parseGuests('channels = ["1"]\n').status, 'invalid', 'folders is required');
  const r = buildPolicy(rootFiles({ guests: 'channels = []\nfolders = ["/workspace/public/"]\n' }));
  assert.equal(r.files.find((f) => f.path === 'config/guests.toml')?.grantsNothing, true);
});

test('a channel bound to two orgs is invalid in both files, and both grant nothing', () => {
  const other = org({ members: ['9'], channels: ['1', BOOK_CH], folders: ['/workspace/o/'] });
  const r = buildPolicy(rootFiles({ orgs: { bookclub: BOOKCLUB, other } }));
  const errs = r.errors.filter((e) => /also bound/.test(e.message));
  assert.deepEqual(errs.map((e) => [e.file, e.line]).sort(), [['orgs/bookclub.toml', 2], ['orgs/other.toml', 2]]);
  assert.equal(r.policy.orgs.length, 0);
  assert.ok(r.files.filter((f) => f.kind === 'org').every((f) => f.grantsNothing && f.status === 'invalid'));
});

test('blocks: front matter rules', () => {
  assert.equal(parseBlock(NSFW_MD, 'blocks/conditional/nsfw.md').block?.description, 'Guidelines for handling mature content');
  const table: [string, number, RegExp][] = [
    ['no front matter\n', 1, /must start with/],
    ['+++\ndescription = "x"\n', 1, /never closed/],
    ['+++\n+++\nbody\n', 1, /is required/],
    ['+++\ndescription = ""\n+++\n', 2, /must not be empty/],
    ['+++\ndescription = "   "\n+++\n', 2, /must not be empty/],
    ['+++\ndescription = 5\n+++\n', 2, /string/],
    ['+++\ndescription = "x"\ntitle = "y"\n+++\n', 3, /unknown key/],
    ['+++\ndescription = "x\n+++\n', 2, /unfinished string/],
    ['', 1, /empty/],
  ];
  for (const [text, line, msg] of table) {
    const r = parseBlock(text, 'blocks/conditional/b.md');
    assert.equal(r.block, null, text);
    assert.equal(r.errors[0]?.line, line, `${JSON.stringify(text)} → ${JSON.stringify(r.errors)}`);
    assert.match(r.errors[0]?.message ?? '', msg, text);
  }
  assert.ok(parseBlock('+++\r\ndescription = "crlf"\r\n+++\r\nbody', 'blocks/conditional/b.md').block);
});

test('a block rule without a file, and a file without a rule, are errors that disable nothing else', () => {
  const r = buildPolicy(rootFiles({ blocks: { nsfw: null, extra: NSFW_MD } }));
  const noFile = r.errors.find((e) => /has a rule but no file/.test(e.message));
  assert.equal(noFile?.file, 'config/conditions.toml');
  assert.equal(noFile?.line, 1);
  const noRule = r.errors.find((e) => /has no rule/.test(e.message));
  assert.equal(noRule?.file, 'blocks/conditional/extra.md');
  assert.ok(r.policy.conditions, 'conditions stay in force');
});

test('warnings: a guest channel also bound to an org, a member of two orgs, ignored files, no owner', () => {
  const r = buildPolicy([
    ...rootFiles({ guests: `channels = ["${BOOK_CH}"]\nfolders = []\n`, warden: 'approval = "tty"\n', orgs: { bookclub: BOOKCLUB, two: org({ members: ['222222222222222222'] }) } }),
    { path: 'orgs/README.md', text: 'hi' },
  ]);
  assert.deepEqual(r.errors, []);
  const msgs = r.warnings.map((w) => `${w.file}: ${w.message}`).join('\n');
  assert.match(msgs, /config\/guests.toml: channel 444444444444444444 is also bound/);
  assert.match(msgs, /member of "bookclub" and "two"/);
  assert.match(msgs, /orgs\/README.md: ignored/);
  assert.match(msgs, /config\/warden.toml: no \[owner\]/);
  assert.equal(r.policy.owner, null);
});

test('an invalid warden.toml is an error and leaves no owner', () => {
  const r = buildPolicy(rootFiles({ warden: '[owner]\ndiscord_id = 123\n' }));
  assert.equal(r.policy.owner, null);
  assert.ok(r.errors.some((e) => e.file === 'config/warden.toml' && e.line === 2));
});

test('unreadable files grant nothing', () => {
  const files = rootFiles().map((f) => (f.path === 'config/conditions.toml' ? { path: f.path, text: null, unreadable: 'is a symlink, not a regular file' } : f));
  const r = buildPolicy(files);
  assert.equal(r.policy.conditions, null);
  assert.equal(r.files[0]?.status, 'unreadable');
  assert.match(r.errors[0]?.message ?? '', /symlink/);
});

test('validatePolicyFile by kind', () => {
  assert.deepEqual(validatePolicyFile('conditions', 'config/conditions.toml', CONDITIONS), []);
  assert.deepEqual(validatePolicyFile('guests', 'config/guests.toml', GUESTS), []);
  assert.deepEqual(validatePolicyFile('org', 'orgs/bookclub.toml', BOOKCLUB), []);
  assert.deepEqual(validatePolicyFile('block', 'blocks/conditional/nsfw.md', NSFW_MD), []);
  assert.deepEqual(validatePolicyFile('warden', 'config/warden.toml', WARDEN), []);
  for (const kind of ['conditions', 'guests', 'org', 'block'] as const) {
    const errs = validatePolicyFile(kind, 'x', '');
    assert.equal(errs.length, 1, kind);
  }
  const e = validatePolicyFile('conditions', 'config/conditions.toml', '[blocks.a]\nwhen = "discord:dm"\naction = "allow"\n');
  assert.deepEqual(e.map((x) => [x.file, x.line, x.column, x.key]), [['config/conditions.toml', 3, 1, 'blocks.a.action']]);
});

test('validatePolicyChange: own errors plus new cross-file conflicts, not old ones', () => {
  const current = rootFiles();
  assert.deepEqual(validatePolicyChange(current, 'orgs/new.toml', org({ channels: ['1'] })), []);
  const clash = validatePolicyChange(current, 'orgs/new.toml', org({ channels: [BOOK_CH] }));
  assert.ok(clash.some((e) => /also bound/.test(e.message)), JSON.stringify(clash));
  assert.ok(validatePolicyChange(current, 'config/conditions.toml', null).some((e) => /missing/.test(e.message)), 'removing conditions.toml is refused');
  assert.deepEqual(validatePolicyChange(current, 'blocks/conditional/new.md', NSFW_MD), [], 'adding a block file before its rule is allowed');
  // An already-broken file elsewhere is not blamed on an unrelated change.
  const broken = rootFiles({ guests: 'nope = 1\n' });
  assert.deepEqual(validatePolicyChange(broken, 'orgs/bookclub.toml', BOOKCLUB.replace('20', '30')), []);
});

test('validatePolicyState: own errors plus new cross-file ones, never the approved set\'s old ones', () => {
  const current = rootFiles();
  const newer = CONDITIONS.replace('"/secrets/"', '"/secrets2/"');
  assert.deepEqual(validatePolicyState(current, [{ path: 'config/conditions.toml', text: newer }]), []);
  const clash = validatePolicyState(current, [{ path: 'orgs/new.toml', text: org({ channels: [BOOK_CH] }) }]);
  assert.ok(clash.some((e) => /also bound/.test(e.message)), JSON.stringify(clash));
  const own = validatePolicyState(current, [{ path: 'config/conditions.toml', text: '[memories."/x/"]\nwhen = "bogus"\naction = "deny"\n' }]);
  assert.equal(own.length, 1, JSON.stringify(own));
  assert.match(own[0]!.message, /unknown condition "bogus"/);
  assert.equal(own[0]!.line, 2);
  // A rule for a block without its file: the whole new state is judged, pairing included.
  const pairing = validatePolicyState(current, [{ path: 'config/conditions.toml', text: `${CONDITIONS}\n[blocks.extra]\nwhen = "internal"\naction = "load"\n` }]);
  assert.ok(pairing.some((e) => /block "extra" has a rule but no file/.test(e.message)), JSON.stringify(pairing));
  // An approved set that is already broken: its errors are not blamed on an unrelated change,
  // clean or not (the approved set is built only when the new state has errors to tell apart).
  const broken = rootFiles({ guests: 'nope = 1\n' });
  assert.ok(buildPolicy(broken).errors.length > 0);
  assert.deepEqual(validatePolicyState(broken, [{ path: 'config/conditions.toml', text: newer }]), []);
  const both = validatePolicyState(broken, [{ path: 'orgs/new.toml', text: org({ channels: [BOOK_CH] }) }]);
  assert.ok(both.length > 0 && both.every((e) => /also bound/.test(e.message)), JSON.stringify(both));
  // A change that repairs the broken file reports nothing either.
  assert.deepEqual(validatePolicyState(broken, [{ path: 'config/guests.toml', text: GUESTS }]), []);
});

test('policyKindOf', () => {
  const table: [string, string | null][] = [
    ['config/conditions.toml', 'conditions'], ['config/guests.toml', 'guests'], ['config/warden.toml', 'warden'],
    ['orgs/a.toml', 'org'], ['orgs/sub/a.toml', null], ['orgs/a.txt', null], ['blocks/conditional/x.md', 'block'],
    ['blocks/x.md', null], ['config/credentials.toml', null],
  ];
  for (const [p, k] of table) assert.equal(policyKindOf(p), k, p);
});
