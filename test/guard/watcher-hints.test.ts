/**
 * The guard's watcher (src/guard/watcher.ts) in this process, on a real directory tree, its
 * hints collected: a directory made again at its path is watched again (and what was put in
 * it before its watch is a hint); below a `**` glob base, a directory there at start, one
 * made later and a twelve-level `mkdir -p` filled at once are watched; while polling (inotify exhausted), an edit, a name
 * that is not UTF-8 and the handle's state after close. Part of the guard's fast mutation tier.
 */
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startWatcher, type WatchHandle } from '../../src/guard/watcher.js';
import { parseWardenConfig } from '../../src/config/warden-config.js';
import { protectedSet } from '../../src/config/protected-set.js';
import { nameFromBytes, nameToBytes } from '../../src/common/names.js';
import { MAX_DEPTH, MAX_REL_BYTES, eachName, withinDepth } from '../../src/guard/inspect.js';
import { TEST_WARDEN_TOML, waitFor } from '../helpers/root.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'warden-io-watch-')));
const handles: WatchHandle[] = [];
/** Trees longer than a path can name: rm -r needs whole paths, shutil.rmtree walks by descriptor. */
const deepTrees: string[] = [];
after(async () => {
  for (const h of handles) await h.close();
  for (const d of deepTrees) spawnSync('python3', ['-c', 'import shutil,sys; shutil.rmtree(sys.argv[1], ignore_errors=True)', d], { timeout: 60_000 });
  rmSync(base, { recursive: true, force: true });
});

let n = 0;
function tree(extra = '') {
  const root = join(base, `r${++n}`);
  for (const d of ['config', 'orgs', 'data/a']) mkdirSync(join(root, d), { recursive: true });
  writeFileSync(join(root, 'orgs/bookclub.toml'), 'name = "bookclub"\n');
  const parsed = parseWardenConfig(TEST_WARDEN_TOML + extra);
  assert.ok(parsed.ok, JSON.stringify(parsed));
  const hints: string[] = [];
  return { root, pset: protectedSet(parsed.config), hints, events: { onEvent: (rel: string) => { hints.push(rel); }, onError: (e: Error) => { hints.push(`error ${e.message}`); } } };
}

it('inotify: a directory made again at its path (its inode number often reused) is watched again, and what was moved in before is a hint', async () => {
  const t = tree();
  const h = await startWatcher(t.root, t.pset, t.events, false);
  handles.push(h);
  for (let round = 0; round < 3; round++) {
    rmSync(join(t.root, 'orgs'), { recursive: true });
    mkdirSync(join(t.root, 'orgs'));
    writeFileSync(join(t.root, 'orgs', `early${round}.toml`), 'x\n');
    await waitFor(() => t.hints.includes(`orgs/early${round}.toml`), 5_000, `round ${round}: a hint for the name made right after the directory`);
    t.hints.length = 0;
    writeFileSync(join(t.root, 'orgs', `late${round}.toml`), 'x\n');
    await waitFor(() => t.hints.includes(`orgs/late${round}.toml`), 5_000, `round ${round}: a hint from the new directory's own watch`);
  }
  await h.close();
  assert.equal(h.alive(), false);
});

it('inotify: mkdir -p twelve levels below a ** glob base and a file written at once: a hint for the file', async () => {
  const t = tree('\n[[protect]]\npath = "data/**/*.txt"\n');
  const h = await startWatcher(t.root, t.pset, t.events, false);
  handles.push(h);
  const d = `data/${Array.from({ length: 12 }, (_, i) => `n${i}`).join('/')}`;
  mkdirSync(join(t.root, d), { recursive: true });
  writeFileSync(join(t.root, d, 'x.txt'), 'x\n');
  await waitFor(() => t.hints.includes(`${d}/x.txt`), 5_000, 'the hint for the file twelve levels down');
  writeFileSync(join(t.root, d, 'y.txt'), 'y\n');
  await waitFor(() => t.hints.includes(`${d}/y.txt`), 5_000, 'a hint from the deepest directory\'s own watch');
});

it('inotify: below a ** glob base, a directory there at start and one made later are watched', async () => {
  const t = tree('\n[[protect]]\npath = "data/**/*.txt"\n');
  const h = await startWatcher(t.root, t.pset, t.events, false);
  handles.push(h);
  writeFileSync(join(t.root, 'data/a/x.txt'), 'x\n');
  await waitFor(() => t.hints.includes('data/a/x.txt'), 5_000, 'a hint from the directory there at start');
  mkdirSync(join(t.root, 'data/new'));
  await waitFor(() => t.hints.includes('data/new'), 5_000, 'the new directory\'s own hint');
  writeFileSync(join(t.root, 'data/new/y.txt'), 'y\n');
  await waitFor(() => t.hints.includes('data/new/y.txt'), 5_000, 'a hint from inside the new directory');
  assert.ok(!t.hints.some((x) => x.startsWith('/') || x.startsWith('error')), t.hints.join(', '));
});

it('inotify: a tree longer than a path can name below a ** glob base: said once (onLimit), and what is within the bound is still watched', async () => {
  const t = tree('\n[[protect]]\npath = "data/**/*.txt"\n');
  // 70 levels of 60-byte names: 4,270 bytes below data/, past MAX_REL_BYTES; made one level at a time (no whole path needed).
  const name = 'n'.repeat(60);
  deepTrees.push(join(t.root, 'data', name));
  const made = spawnSync('python3', ['-c', 'import os,sys\nos.chdir(sys.argv[1])\nfor _ in range(70):\n  os.mkdir(sys.argv[2]); os.chdir(sys.argv[2])', join(t.root, 'data'), name], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(made.status, 0, made.stderr);
  const levels = Array.from({ length: 70 }, () => name);
  const limits: string[] = [];
  const h = await startWatcher(t.root, t.pset, { ...t.events, onLimit: (p: string, detail: string) => { limits.push(`${p}: ${detail}`); } }, false);
  handles.push(h);
  assert.equal(limits.length, 1, limits.join('\n'));
  assert.match(limits[0]!, new RegExp(`a path longer than ${MAX_REL_BYTES} bytes`));
  const within = `data/${levels.slice(0, 50).join('/')}`;
  assert.ok(withinDepth(within) && !withinDepth(`data/${levels.join('/')}`));
  writeFileSync(join(t.root, within, 'x.txt'), 'x\n');
  await waitFor(() => t.hints.includes(`${within}/x.txt`), 5_000, 'a hint from the deepest directory within the bound');
  h.rearmChanged();
  assert.equal(limits.length, 1, 'once per watcher, not once per rescan');
});

it('eachName: every name once, as its own bytes (UTF-8 names as strings, a name that is not UTF-8 losslessly, a literal U+FFFD as itself)', () => {
  const dir = join(base, `names${++n}`);
  mkdirSync(dir);
  const raw = Buffer.concat([Buffer.from('r'), Buffer.from([0xff]), Buffer.from('.toml')]);
  const literal = Buffer.from('l\uFFFD.toml');
  for (const b of [Buffer.from('a.toml'), Buffer.from('é.toml'), raw, literal]) writeFileSync(Buffer.concat([Buffer.from(dir + '/'), b]), 'x');
  mkdirSync(join(dir, 'sub'));
  const seen: string[] = [];
  eachName(dir, (name, isDir) => { seen.push(`${name}${isDir ? '/' : ''}`); });
  assert.deepEqual(seen.sort(), ['a.toml', 'é.toml', nameFromBytes(raw), 'l\uFFFD.toml', 'sub/'].sort());
  assert.ok(nameToBytes(nameFromBytes(raw)).equals(raw));
  // Only UTF-8 names: one pass, the same names.
  const plain = join(base, `names${++n}`);
  mkdirSync(plain);
  writeFileSync(join(plain, 'x'), 'x');
  const once: string[] = [];
  eachName(plain, (name) => { once.push(name); });
  assert.deepEqual(once, ['x']);
});

it('withinDepth: levels and bytes below the root', () => {
  assert.equal(withinDepth('a'), true);
  assert.equal(withinDepth(Array.from({ length: MAX_DEPTH }, () => 'a').join('/')), true);
  assert.equal(withinDepth(Array.from({ length: MAX_DEPTH + 1 }, () => 'a').join('/')), false);
  assert.equal(withinDepth('x'.repeat(MAX_REL_BYTES)), true);
  assert.equal(withinDepth('x'.repeat(MAX_REL_BYTES + 1)), false);
  // Bytes, not UTF-16 units: 2,048 two-byte letters are 4,096 bytes, 2,049 are more.
  assert.equal(withinDepth('é'.repeat(MAX_REL_BYTES / 2)), true);
  assert.equal(withinDepth('é'.repeat(MAX_REL_BYTES / 2 + 1)), false);
});

it('polling: an edit, and a new name that is not UTF-8, each a hint; closed, the handle is not alive', async () => {
  const t = tree();
  const h = await startWatcher(t.root, t.pset, t.events, true);
  handles.push(h);
  assert.equal(h.polling, true);
  assert.equal(h.alive(), true);
  // A poll compares each stat with the one before: an edit made before its first stat (the
  // watcher is up, a loaded machine has not polled yet) is that first stat. So edit until seen.
  await waitFor(() => {
    if (t.hints.includes('orgs/bookclub.toml')) return true;
    writeFileSync(join(t.root, 'orgs/bookclub.toml'), `name = "polled ${Date.now()}"\n`);
    return false;
  }, 10_000, 'the polled edit', 500);
  const raw = Buffer.concat([Buffer.from('ev'), Buffer.from([0xff, 0xfe]), Buffer.from('.toml')]);
  writeFileSync(Buffer.concat([Buffer.from(join(t.root, 'orgs') + '/'), raw]), 'name = "raw"\n');
  const want = `orgs/${nameFromBytes(raw)}`;
  await waitFor(() => t.hints.includes(want), 5_000, 'the hint for the name that is not UTF-8');
  await h.close();
  assert.equal(h.alive(), false, 'a closed watcher says it is not alive');
});
