/**
 * How long a planted file below a `**` glob lives when the tree around it is large
 * (docs/ARCHITECTURE.md, "Watching, and what it costs"), measured through the real daemon.
 * Both are open (todo): they fail on today's code.
 *
 * - A tree of 8,000 directories renamed in at once: the planted file's hint waits behind the
 *   arming of 8,000 watches (one fs.watch each, synchronous), about 1.4 s here, up to the
 *   10,000-watch limit; renaming the tree out and in again repeats it.
 * - 500 files 1,900 levels down: each check walks from the root again (one openat per level
 *   per file, DirCache per check), about 21 ms a file against about 1.2 ms at the top: the
 *   last of them lives 11.5 s (0.6 s at the top).
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { cli, testWorld, TEST_WARDEN_TOML } from '../helpers/root.js';

const world = testWorld();
const trees: string[] = [];
afterEach(async () => {
  for (const d of trees.splice(0)) spawnSync('python3', ['-c', 'import shutil,sys; shutil.rmtree(sys.argv[1], ignore_errors=True)', d], { timeout: 60_000 });
  await world.cleanup();
});

/**
 * Build a tree beside the root (python3, relative mkdirs), rename it to data/t in one step,
 * and report when the planted files are gone: `{ first, all }` seconds after the rename.
 */
function plantTree(aside: string, target: string, shape: 'wide' | 'deep', n: number, files: number): { first: number; all: number; left: number } {
  trees.push(aside, target);
  const r = spawnSync('python3', ['-c', `
import os, sys, time, json
aside, target, shape, n, files = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
os.makedirs(aside); os.chdir(aside)
if shape == 'wide':
    for i in range(n): os.mkdir('w%05d' % i)
else:
    for _ in range(n): os.mkdir('d'); os.chdir('d')
for i in range(files): open('p%05d.txt' % i, 'w').write('run anything\\n')
here = os.open('.', os.O_RDONLY)
t0 = time.time(); first = None
os.rename(aside, target)
while True:
    left = sum(1 for x in os.listdir(here) if x.endswith('.txt'))
    if left < files and first is None: first = time.time() - t0
    if left == 0 or time.time() - t0 > 60: break
    time.sleep(0.01)
print(json.dumps({'first': first, 'all': time.time() - t0, 'left': left}))
`, aside, target, shape, String(n), String(files)], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { first: number; all: number; left: number };
}

function dataRoot() {
  const t = world.root({ wardenToml: `${TEST_WARDEN_TOML}\n[[protect]]\npath = "data/**/*.txt"\n` });
  mkdirSync(t.p('data'));
  const r = cli(t, ['init']);
  assert.equal(r.code, 0, r.stderr);
  return t;
}

describe('planted files in a large tree below a ** glob', () => {
  it('a file in a tree of 8,000 directories renamed in at once is taken away within a second', { todo: 'open: the hint waits behind the arming of every watch (about 1.4 s)' }, async () => {
    const t = dataRoot();
    await world.daemon(t);
    const m = plantTree(`${t.base}/aside`, t.p('data/t'), 'wide', 8000, 1);
    assert.equal(m.left, 0);
    assert.ok(m.all < 1, `taken away after ${m.all.toFixed(2)} s`);
  });

  it('500 files planted 1,900 levels down are all taken away within 3 s', { todo: 'open: each check walks 1,900 levels from the root again (11.5 s measured)' }, async () => {
    const t = dataRoot();
    await world.daemon(t);
    const m = plantTree(`${t.base}/aside`, t.p('data/t'), 'deep', 1900, 500);
    assert.equal(m.left, 0, 'every one is taken away in the end');
    assert.ok(existsSync(t.p('data/t')), 'the tree itself stays (it matches no glob)');
    assert.ok(m.all < 3, `the last taken away after ${m.all.toFixed(2)} s (the first after ${m.first.toFixed(2)} s)`);
  });
});
