// What buildPolicy says when org files overlap, and each org file's health
// (src/policy/load.ts): a channel bound to several orgs makes each of them invalid and names the
// others; a guest channel that an org binds and a member of two orgs are warnings located in
// the file a person must edit; orgs are listed by name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPolicy } from '../../src/policy/load.js';

const org = (channels: string[], members: string[], folders: string[], commands: string[], before = ''): string =>
  `${before}members = ${JSON.stringify(members)}\nchannels = ${JSON.stringify(channels)}\nfolders = ${JSON.stringify(folders)}\ncommands = ${JSON.stringify(commands)}\nhourly_cap = 1\n`;
const bound = (others: string): string => `channel 1 is also bound to org ${others}: orgs are isolated, so a channel belongs to one org at most (both orgs grant nothing until this is fixed)`;

test('a channel bound to three orgs: each is invalid, grants nothing, and its error names the two others where its channels are', () => {
  const r = buildPolicy([
    { path: 'orgs/a.toml', text: org(['1'], [], ['/workspace/a/'], []) },
    { path: 'orgs/b.toml', text: org(['1'], [], ['/workspace/b/'], [], '# b\n') },
    { path: 'orgs/c.toml', text: org(['1'], [], ['/workspace/c/'], []) },
  ]);
  assert.deepEqual(r.errors.filter((e) => e.file.startsWith('orgs/')), [
    { file: 'orgs/a.toml', key: 'channels', line: 2, column: 13, message: bound('"b", "c"') },
    { file: 'orgs/b.toml', key: 'channels', line: 3, column: 13, message: bound('"a", "c"') },
    { file: 'orgs/c.toml', key: 'channels', line: 2, column: 13, message: bound('"a", "b"') },
  ]);
  assert.deepEqual(r.policy.orgs, []);
  assert.deepEqual(r.files.filter((f) => f.kind === 'org').map((f) => [f.path, f.status, f.grantsNothing, f.reason]), [
    ['orgs/a.toml', 'invalid', true, 'invalid'], ['orgs/b.toml', 'invalid', true, 'invalid'], ['orgs/c.toml', 'invalid', true, 'invalid'],
  ]);
});

test('a guest channel an org binds is a warning at that channel in guests.toml', () => {
  const r = buildPolicy([
    { path: 'orgs/a.toml', text: org(['2'], [], ['/workspace/a/'], []) },
    { path: 'config/guests.toml', text: '# g\nchannels = ["2"]\nfolders = ["/workspace/p/"]\n' },
  ]);
  assert.deepEqual(r.warnings.filter((w) => w.file === 'config/guests.toml'), [
    { file: 'config/guests.toml', key: 'channels', line: 2, column: 13, message: 'channel 2 is also bound to org "a": the binding wins, nobody is a guest there' },
  ]);
});

test('a member of two orgs is a warning at that member in the first of those org files', () => {
  const r = buildPolicy([
    { path: 'orgs/a.toml', text: org(['3'], ['8'], ['/workspace/a/'], [], '\n\n\n\n') },
    { path: 'orgs/x.toml', text: org(['1'], ['9'], ['/workspace/x/'], [], '# x\n# more\n') },
    { path: 'orgs/y.toml', text: org(['2'], ['9'], ['/workspace/y/'], []) },
  ]);
  assert.deepEqual(r.warnings.filter((w) => w.file.startsWith('orgs/')), [
    { file: 'orgs/x.toml', key: 'members', line: 3, column: 12, message: 'user 9 is a member of "x" and "y": in a DM their org is ambiguous, so a DM resolves to no org for them' },
  ]);
});

test('orgs are listed by name, not by file path ("a" before "a-b", though orgs/a-b.toml sorts first)', () => {
  const r = buildPolicy([
    { path: 'orgs/a-b.toml', text: org(['2'], [], ['/workspace/ab/'], []) },
    { path: 'orgs/a.toml', text: org(['1'], [], ['/workspace/a/'], []) },
  ]);
  assert.deepEqual(r.policy.orgs.map((o) => o.name), ['a', 'a-b']);
  assert.deepEqual(r.files.map((f) => f.path), ['config/conditions.toml', 'config/guests.toml', 'config/warden.toml', 'orgs/a-b.toml', 'orgs/a.toml']);
});

test('an org file\'s health: unreadable, folders but no commands, commands but no folders', () => {
  const r = buildPolicy([
    { path: 'orgs/f.toml', text: org(['1'], [], ['/workspace/f/'], []) },
    { path: 'orgs/g.toml', text: org(['2'], [], [], ['git status']) },
    { path: 'orgs/u.toml', text: null, unreadable: 'EACCES' },
  ]);
  assert.deepEqual(r.files.filter((f) => f.kind === 'org').map((f) => [f.path, f.status, f.grantsNothing, f.reason]), [
    ['orgs/f.toml', 'ok', false, null],
    ['orgs/g.toml', 'ok', false, 'folders = []: grants no folder (commands only)'],
    ['orgs/u.toml', 'unreadable', true, 'unreadable'],
  ]);
  assert.deepEqual(r.errors.filter((e) => e.file === 'orgs/u.toml'), [{ file: 'orgs/u.toml', message: 'EACCES: grants nothing' }]);
  assert.deepEqual(r.warnings, [{ file: 'config/warden.toml', message: 'missing: no owner is configured, so nobody resolves to the owner tier (internal sessions still do)' }]);
});

test('no files at all: conditions.toml, guests.toml and warden.toml are each missing, with their reasons', () => {
  assert.deepEqual(buildPolicy([]).files.map((f) => [f.path, f.status, f.grantsNothing, f.reason]), [
    ['config/conditions.toml', 'missing', true, 'missing: every /memories/ and /workspace/ path is denied and no block loads'],
    ['config/guests.toml', 'missing', true, 'missing'],
    ['config/warden.toml', 'missing', true, 'missing: no owner'],
  ]);
});
