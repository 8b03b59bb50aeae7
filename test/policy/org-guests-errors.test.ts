// Pure unit tests of manifests.ts: the exact errors and warnings a person reads for an org
// file or guests.toml (message, key, line, column), the parsed org and guests, and the fast
// path for guests.toml agreeing with the schema. Run per mutant by `npm run mutate -- policy`
// (FOLDERS.policy.tests in scripts/mutate.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGuests, parseOrg, orgNameOf, plainGuests, guestsSchema, GUESTS_TOML, ORGS_DIR, ORG_NAME_RE } from '../../src/policy/manifests.js';

const ORG = (o: Partial<Record<'members' | 'channels' | 'folders' | 'commands' | 'hourly_cap', string>> = {}) =>
  `members = ${o.members ?? '["1"]'}\nchannels = ${o.channels ?? '["2"]'}\nfolders = ${o.folders ?? '["/workspace/a/"]'}\ncommands = ${o.commands ?? '["ls"]'}\nhourly_cap = ${o.hourly_cap ?? '3'}\n`;
const F = 'orgs/x.toml';

test('names: orgNameOf, the org name pattern, the file names', () => {
  assert.equal(orgNameOf('orgs/bookclub.toml'), 'bookclub');
  assert.equal(orgNameOf('bookclub.toml'), 'bookclub');
  assert.equal(orgNameOf('a/b/c.txt'), 'c.txt');
  assert.equal(orgNameOf('orgs/x.toml.toml'), 'x.toml');
  assert.equal(GUESTS_TOML, 'config/guests.toml');
  assert.equal(ORGS_DIR, 'orgs');
  for (const ok of ['a', 'A9', '9a', 'a.b_c-d']) assert.ok(ORG_NAME_RE.test(ok), ok);
  for (const bad of ['', '.a', '-a', '_a', 'a b', 'a/b', 'ä', 'a\n']) assert.ok(!ORG_NAME_RE.test(bad), JSON.stringify(bad));
});

test('a valid org: every field, its source and the line of each key', () => {
  const text = `# an org\n\nhourly_cap = 7\ncommands = ["git log", "ls"]\nfolders = ["/memories/x/"]\nchannels = ["20"]\nmembers = ["10", "11"]\n`;
  const r = parseOrg(text, 'orgs/x-1.toml');
  assert.equal(r.status, 'ok');
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.warnings, []);
  const o = r.org;
  assert.ok(o);
  assert.deepEqual({ name: o.name, members: o.members, channels: o.channels, folders: o.folders, commands: o.commands, hourlyCap: o.hourlyCap, source: o.source },
    { name: 'x-1', members: ['10', '11'], channels: ['20'], folders: ['/memories/x/'], commands: ['git log', 'ls'], hourlyCap: 7, source: { file: 'orgs/x-1.toml', line: 1, column: 1 } });
  assert.deepEqual(o.keyLines, { hourly_cap: 3, commands: 4, folders: 5, channels: 6, members: 7 });
});

test('missing and empty org files: the exact error', () => {
  assert.deepEqual(parseOrg(null, F), { org: null, status: 'missing', errors: [{ file: F, message: 'missing: org "x" grants nothing' }], warnings: [] });
  for (const t of ['', '  # c\n']) {
    assert.deepEqual(parseOrg(t, F), { org: null, status: 'empty', errors: [{ file: F, line: 1, column: 1, message: 'empty (only whitespace or comments): an empty manifest denies everything, so org "x" grants nothing' }], warnings: [] });
  }
  const bad = parseOrg('members = [\n', F);
  assert.equal(bad.status, 'invalid');
  assert.equal(bad.org, null);
  assert.equal(bad.errors.length, 1);
  assert.deepEqual(bad.warnings, []);
});

const NAME = 'an org file must be orgs/<name>.toml with a plain name (letters, digits, ".", "_", "-")';
test('an org file name that is not plain, or not .toml: invalid, with the schema\'s errors after it', () => {
  for (const f of ['orgs/Bad name.toml', 'orgs/.hidden.toml', 'orgs/x.txt']) {
    assert.deepEqual(parseOrg(ORG(), f), { org: null, status: 'invalid', errors: [{ file: f, line: 1, column: 1, message: NAME }], warnings: [] }, f);
  }
  assert.deepEqual(parseOrg(ORG({ hourly_cap: '0' }), 'orgs/x.txt').errors, [
    { file: 'orgs/x.txt', line: 1, column: 1, message: NAME },
    { file: 'orgs/x.txt', key: 'hourly_cap', message: 'must be a positive integer', line: 5, column: 1 },
  ]);
});

test('each schema error of an org file: message, key and line', () => {
  const err = (o: Parameters<typeof ORG>[0]) => {
    const r = parseOrg(ORG(o), F);
    assert.equal(r.status, 'invalid');
    assert.equal(r.org, null);
    assert.deepEqual(r.warnings, []);
    return r.errors.map((e) => [e.key, e.line, e.message]);
  };
  assert.deepEqual(err({ members: '[1]' }), [['members.0', 1, 'must be a Discord id in quotes (a string of decimal digits)']]);
  assert.deepEqual(err({ members: '"1"' }), [['members', 1, 'must be an array of Discord ids (strings)']]);
  assert.deepEqual(err({ channels: '["01"]' }), [['channels.0', 2, 'must be a Discord id: decimal digits, no leading zero, at most 20 digits']]);
  assert.deepEqual(err({ channels: '{}' }), [['channels', 2, 'must be an array of Discord ids (strings)']]);
  assert.deepEqual(err({ folders: '[5]' }), [['folders.0', 3, 'must be a string path']]);
  assert.deepEqual(err({ folders: '["/etc/"]' }), [['folders.0', 3, 'must be a canonical path under /workspace/ or /memories/ (no empty, "." or ".." segments)']]);
  assert.deepEqual(err({ folders: '"/workspace/"' }), [['folders', 3, 'must be an array of paths']]);
  assert.deepEqual(err({ commands: '[3]' }), [['commands.0', 4, 'must be a string']]);
  for (const c of ['""', '"  "', '" ls"', '"ls "']) assert.deepEqual(err({ commands: `[${c}]` }), [['commands.0', 4, 'must be a non-empty command prefix without leading or trailing spaces']], c);
  assert.deepEqual(err({ commands: '"ls"' }), [['commands', 4, 'must be an array of command prefixes']]);
  for (const cap of ['"3"', '0', '-1', '2.5']) assert.deepEqual(err({ hourly_cap: cap }), [['hourly_cap', 5, 'must be a positive integer']], cap);
  assert.deepEqual(parseOrg(`${ORG()}admins = []\n`, F).errors.map((e) => [e.key, e.line]), [['admins', 6]]);
  assert.equal(parseOrg(ORG({ commands: '["git log --oneline"]' }), F).status, 'ok', 'inner blanks are fine');
});

test('an org listing a value twice: valid, with one warning per repeat at the key', () => {
  const r = parseOrg(ORG({ members: '["1", "1", "1"]', channels: '["2", "2"]', folders: '["/workspace/a/", "/workspace/a/"]', commands: '["ls", "ls"]' }), F);
  assert.equal(r.status, 'ok');
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.warnings.map((w) => [w.key, w.line, w.message]), [
    ['members', 1, '"1" is listed twice'], ['members', 1, '"1" is listed twice'],
    ['channels', 2, '"2" is listed twice'], ['folders', 3, '"/workspace/a/" is listed twice'], ['commands', 4, '"ls" is listed twice'],
  ]);
  assert.deepEqual(r.warnings.map((w) => w.file), [F, F, F, F, F]);
  assert.deepEqual(parseOrg(ORG({ members: '["1", "2"]' }), F).warnings, [], 'distinct values: no warning');
});

test('parseOrg results are copies: changing one never changes the next', () => {
  const text = ORG({ members: '["1", "1"]' });
  const a = parseOrg(text, F);
  a.warnings.push({ file: 'x', message: 'added' });
  a.errors.push({ file: 'x', message: 'added' });
  const b = parseOrg(text, F);
  assert.equal(b.warnings.length, 1);
  assert.deepEqual(b.errors, []);
  const bad = parseOrg(ORG({ hourly_cap: '0' }), F);
  bad.errors.length = 0;
  assert.equal(parseOrg(ORG({ hourly_cap: '0' }), F).errors.length, 1);
  // The same text under another name is another org.
  assert.equal(parseOrg(text, 'orgs/y.toml').org?.name, 'y');
});

test('guests.toml: the parsed allowlist, its source and key lines', () => {
  const r = parseGuests('# g\nfolders = ["/workspace/p/", "/memories/q/"]\n\nchannels = ["5", "6"]\n');
  assert.equal(r.status, 'ok');
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.warnings, []);
  const g = r.guests;
  assert.ok(g);
  assert.deepEqual({ channels: g.channels, folders: g.folders, source: g.source }, { channels: ['5', '6'], folders: ['/workspace/p/', '/memories/q/'], source: { file: GUESTS_TOML, line: 1, column: 1 } });
  assert.deepEqual(g.keyLines, { channels: 4, folders: 2 });
  assert.equal(parseGuests('channels = []\nfolders = []\n', 'x/g.toml').guests?.source.file, 'x/g.toml');
});

test('guests.toml missing, empty, repeated values, invalid: the exact messages', () => {
  assert.deepEqual(parseGuests(null), { guests: null, status: 'missing', errors: [{ file: GUESTS_TOML, message: 'missing: the guest allowlist grants nothing' }], warnings: [] });
  assert.deepEqual(parseGuests('\n'), { guests: null, status: 'empty', errors: [{ file: GUESTS_TOML, line: 1, column: 1, message: 'empty (only whitespace or comments): an empty manifest denies everything, so the guest allowlist grants nothing' }], warnings: [] });
  const rep = parseGuests('channels = ["1", "1"]\nfolders = ["/workspace/", "/workspace/"]\n');
  assert.equal(rep.status, 'ok');
  assert.deepEqual(rep.warnings.map((w) => [w.file, w.key, w.line, w.message]), [[GUESTS_TOML, 'channels', 1, '"1" is listed twice'], [GUESTS_TOML, 'folders', 2, '"/workspace/" is listed twice']]);
  const err = (t: string) => {
    const r = parseGuests(t);
    assert.equal(r.status, 'invalid', t);
    assert.equal(r.guests, null);
    assert.deepEqual(r.warnings, []);
    return r.errors.map((e) => [e.key, e.line, e.message]);
  };
  assert.deepEqual(err('channels = ["0123"]\nfolders = ["/etc/"]\n'), [
    ['channels.0', 1, 'must be a Discord id: decimal digits, no leading zero, at most 20 digits'],
    ['folders.0', 2, 'must be a canonical path under /workspace/ or /memories/ (no empty, "." or ".." segments)'],
  ]);
  assert.deepEqual(err('channels = [1]\nfolders = []\n'), [['channels.0', 1, 'must be a Discord id in quotes (a string of decimal digits)']]);
  assert.deepEqual(err('channels = "1"\nfolders = []\n'), [['channels', 1, 'must be an array of Discord ids (strings)']]);
  assert.deepEqual(err('channels = []\nfolders = [1]\n'), [['folders.0', 2, 'must be a string path']]);
  assert.deepEqual(err('channels = []\nfolders = "/workspace/"\n'), [['folders', 2, 'must be an array of paths']]);
  assert.deepEqual(err('channels = []\n').map((e) => e[0]), ['folders']);
  assert.deepEqual(err('folders = []\n').map((e) => e[0]), ['channels']);
  assert.deepEqual(err('channels = []\nfolders = []\nmembers = []\n').map((e) => [e[0], e[1]]), [['members', 3]]);
  assert.deepEqual(err('channels = []\nfolder = []\n').map((e) => e[0]).sort(), ['folder', 'folders']);
  assert.deepEqual(err('channel = []\nfolders = []\n').map((e) => e[0]).sort(), ['channel', 'channels']);
});

test('plainGuests (the fast path) says plain only for what the schema accepts as is', () => {
  const cases: Record<string, unknown>[] = [
    { channels: [], folders: [] },
    { channels: ['1', '20'], folders: ['/workspace/', '/memories/a/b'] },
    { channels: ['0'], folders: [] }, { channels: ['01'], folders: [] }, { channels: [1], folders: [] }, { channels: '1', folders: [] },
    { channels: [], folders: ['/etc/'] }, { channels: [], folders: [5] }, { channels: [], folders: '/workspace/' }, { channels: [], folders: ['/workspace/../x'] },
    { channels: [] }, { folders: [] }, { channels: [], folders: [], extra: 1 }, { channels: [], folder: [] }, { channel: [], folders: [] },
    Object.assign(Object.create({ channels: [] }), { folders: [], x: 1 }),
    { channels: [], folders: [{ toString: () => '/workspace/' }] }, { channels: [{ toString: () => '1' }], folders: [] },
  ];
  for (const v of cases) assert.equal(plainGuests(v), guestsSchema.safeParse(v).success, JSON.stringify(v));
  assert.equal(plainGuests({ channels: ['1'], folders: ['/workspace/'] }), true);
  assert.equal(plainGuests({ channels: ['1', 'x'], folders: ['/workspace/'] }), false, 'every channel');
  assert.equal(plainGuests({ channels: ['1'], folders: ['/workspace/', 'x'] }), false, 'every folder');
});

test('parseGuests results\' lists are copies (the guests object itself is shared: a policy is read only)', () => {
  const text = 'channels = ["1", "1"]\nfolders = []\n';
  const a = parseGuests(text);
  a.warnings.length = 0;
  const b = parseGuests(text);
  assert.equal(b.warnings.length, 1);
  const bad = parseGuests('channels = [1]\nfolders = []\n');
  bad.errors.length = 0;
  assert.equal(parseGuests('channels = [1]\nfolders = []\n').errors.length, 1);
});

// A plain guests.toml skips zod (600 folders through it cost ~10 ms cold); anything
// else goes to the schema, which words the error. Seen through guestsSchema.safeParse.
test('a plain guests.toml is accepted without the schema; any other goes through it', () => {
  const own = Object.getOwnPropertyDescriptor(guestsSchema, 'safeParse');
  const original = guestsSchema.safeParse.bind(guestsSchema);
  let calls = 0;
  Object.defineProperty(guestsSchema, 'safeParse', { configurable: true, writable: true, value: (...a: Parameters<typeof original>) => { calls++; return original(...a); } });
  try {
    const tag = `${process.pid}-${Date.now()}`; // texts no earlier test parsed (results are cached)
    const ok = parseGuests(`# ${tag}\nchannels = ["1"]\nfolders = ["/workspace/p/"]\n`);
    assert.equal(ok.status, 'ok');
    assert.deepEqual(ok.guests?.channels, ['1']);
    assert.equal(calls, 0, 'the plain file never reached the schema');
    const bad = parseGuests(`# ${tag}\nchannels = ["01"]\nfolders = []\n`);
    assert.equal(bad.status, 'invalid');
    assert.equal(calls, 1, 'a file the fast path does not accept is decided by the schema');
  } finally {
    if (own) Object.defineProperty(guestsSchema, 'safeParse', own); else delete (guestsSchema as unknown as Record<string, unknown>).safeParse;
  }
});
