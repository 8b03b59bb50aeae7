/**
 * The first history commit is built by git fast-import from memory: every
 * protected file is in it (credential files as fingerprints only), no mirror file is
 * created in the work tree for it, and later sanctioned changes (an edit, a removal, a
 * re-baseline) still commit the whole state, not only the paths they touch.
 */
import { it, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, TEST_WARDEN_TOML, cli, makeRoot, type TestRoot } from '../helpers/root.js';

const roots: TestRoot[] = [];
after(() => { for (const t of roots) t.cleanup(); });

const ODD = 'data/we"ird ü\\name.txt';

function root(): TestRoot {
  const t = makeRoot({ wardenToml: `${TEST_WARDEN_TOML}\n[[protect]]\npath = "data/*.txt"\n` });
  roots.push(t);
  mkdirSync(t.p('data'));
  for (let i = 0; i < 50; i++) writeFileSync(t.p(`data/f${i}.txt`), `file ${i}\n`);
  writeFileSync(t.p(ODD), 'odd name\n');
  return t;
}

const git = (t: TestRoot, args: string[]): string => execFileSync('git', args, { cwd: t.p('snapshots/history'), encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
const tree = (t: TestRoot): string[] => git(t, ['ls-tree', '-r', '-z', '--name-only', 'HEAD']).split('\0').filter(Boolean).sort();
const show = (t: TestRoot, path: string): string => git(t, ['show', `HEAD:${path}`]);

it('init commits every protected file in one go, credentials as fingerprints, without writing the mirror files', () => {
  const t = root();
  const r = cli(t, ['init']);
  assert.equal(r.code, 0, r.stderr);
  const files = tree(t);
  assert.ok(files.includes('data/f0.txt') && files.includes('data/f49.txt') && files.includes('orgs/bookclub.toml'));
  assert.ok(files.includes(ODD), 'a name with a quote, a backslash and UTF-8 arrives as it is');
  assert.equal(show(t, ODD), 'odd name\n');
  assert.equal(show(t, 'orgs/bookclub.toml'), readFileSync(t.p('orgs/bookclub.toml'), 'utf8'));
  assert.ok(files.includes('config/credentials.toml.fingerprints'));
  assert.ok(!files.includes('config/credentials.toml'), 'no credential value enters git');
  assert.ok(!existsSync(t.p('snapshots/history/data/f0.txt')), 'no mirror file was created for the first commit');
  assert.match(git(t, ['log', '-1', '--format=%B']), /^init: baseline of 57 file\(s\)/);
  assert.equal(git(t, ['rev-list', '--count', 'HEAD']).trim(), '1');
});

it('after such an init, a change and a removal commit the whole state', () => {
  const t = root();
  assert.equal(cli(t, ['init']).code, 0);
  const before = tree(t);
  const org = 'orgs/bookclub.toml';
  const wanted = readFileSync(t.p(org), 'utf8').replace('hourly_cap = 20', 'hourly_cap = 13');
  let r = cli(t, ['apply', org, '--from', '-'], { input: wanted });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(tree(t), before, 'an edit keeps every other file in the commit');
  assert.equal(show(t, org), wanted);
  r = cli(t, ['rm', org]);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.deepEqual(tree(t), before.filter((p) => p !== org), 'the removed file, and only it, left the tree');
  assert.equal(show(t, 'data/f7.txt'), 'file 7\n');
  assert.equal(git(t, ['rev-list', '--count', 'HEAD']).trim(), '3');
});

it('the first commit does not grow git\'s heap a blob at a time (MALLOC_TOP_PAD_ for fast-import)', { skip: spawnSyncStrace() ? false : 'strace is not installed' }, () => {
  const t = makeRoot({ wardenToml: `${TEST_WARDEN_TOML}\n[[protect]]\npath = "data/*.txt"\n` });
  roots.push(t);
  mkdirSync(t.p('data'));
  for (let i = 0; i < 2000; i++) writeFileSync(t.p(`data/f${i}.txt`), `file ${i} `.repeat(100));
  const out = join(t.base, 'strace.txt');
  // Only git's brk calls: -f follows the children, and node itself does not use brk for its heap.
  const r = spawnSync('strace', ['-f', '-qq', '-e', 'trace=brk', '-e', 'signal=none', '-o', out, process.execPath, CLI, 'init', '--root', t.root], { env: t.env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const brk = readFileSync(out, 'utf8').split('\n').filter((l) => /\bbrk\(/.test(l)).length;
  // Without the pad, fast-import makes two brk calls per blob (~4,000 here); with it, a handful.
  assert.ok(brk < 500, `${brk} brk calls for 2,000 blobs`);
  assert.ok(tree(t).includes('data/f1999.txt'));
});

function spawnSyncStrace(): boolean {
  return spawnSync('strace', ['-V'], { encoding: 'utf8' }).status === 0;
}
