/**
 * Red team: `warden init` now builds the first history commit with
 * git fast-import and leaves the mirror work tree EMPTY; later commits stage with
 * `git add -A -- <touched>` WITHOUT --literal-pathspecs. A change to a protected file whose
 * name holds a glob character ("notes/*.txt") is then a pathspec matching every other
 * approved notes/*.txt in the index, absent from the work tree, so git records them all as
 * deleted. The history (which recover-store.ts rebuilds a failed store from:
 * latestHistoryTree) loses approved files. Expected: the latest history tree still holds
 * notes/a.txt and notes/b.txt (fix: --literal-pathspecs on the add, as on the rm).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, testWorld, TEST_WARDEN_TOML } from '../helpers/root.js';

const world = testWorld();
after(() => world.cleanup());

test('a change to a file named with a glob character keeps the other approved files in history', () => {
  const t = world.root({ wardenToml: `protect = [{path = "notes/*.txt"}]\n${TEST_WARDEN_TOML}` });
  mkdirSync(t.p('notes'));
  writeFileSync(t.p('notes/a.txt'), 'A\n');
  writeFileSync(t.p('notes/b.txt'), 'B\n');
  const init = cli(t, ['init']);
  assert.equal(init.code, 0, init.stderr);
  const from = join(t.base, 'star.txt');
  writeFileSync(from, 'star\n');
  const r = cli(t, ['apply', 'notes/*.txt', '--from', from]);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  const tree = execFileSync('git', ['ls-tree', '-r', '--name-only', 'HEAD'], { cwd: t.p('snapshots/history'), encoding: 'utf8' }).split('\n');
  assert.ok(tree.includes('notes/*.txt'), 'the applied file is in history');
  assert.ok(tree.includes('notes/a.txt') && tree.includes('notes/b.txt'), `approved files vanished from the history tree:\n${tree.join('\n')}`);
});

test('the history of a file named with * is that file\'s alone', async () => {
  const { readHistory } = await import('../../src/store/history.js');
  const { Store } = await import('../../src/store/store.js');
  const t = world.root({ wardenToml: `${TEST_WARDEN_TOML}\n[[protect]]\npath = "notes/*.txt"\n` });
  mkdirSync(t.p('notes'));
  writeFileSync(t.p('notes/a.txt'), 'a\n');
  writeFileSync(t.p('notes/*.txt'), 'star\n');
  assert.equal(cli(t, ['init']).code, 0);
  writeFileSync(join(t.base, 'a2'), 'a2\n');
  const r = cli(t, ['apply', 'notes/a.txt', '--from', join(t.base, 'a2')]);
  assert.equal(r.code, 0, r.stderr);
  const store = Store.open(t.root, { create: false });
  try {
    const star = await readHistory(store, 'notes/*.txt');
    const a = await readHistory(store, 'notes/a.txt');
    assert.equal(a.length, 2, 'notes/a.txt: init and the apply');
    assert.equal(star.length, 1, `notes/*.txt has only its init commit, not a.txt's apply: ${JSON.stringify(star.map((e) => e.message.split('\n')[0]))}`);
  } finally { store.close(); }
});
