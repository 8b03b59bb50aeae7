/**
 * Below a `**` glob, every directory a path can name is checked (docs/ARCHITECTURE.md,
 * "Watching, and what it costs"): depth is bounded only by what a path-based reader, the
 * runtime included, can open (PATH_MAX), so a file the agent plants deep is taken away like
 * one at the top, and a tree longer than a path can name does not blind the watches.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { cli, readAlertsOf, testWorld, TEST_WARDEN_TOML, waitFor } from '../helpers/root.js';

const world = testWorld();
const deepTrees: string[] = [];
afterEach(async () => {
  // rm -r needs whole paths; shutil.rmtree walks by descriptor.
  for (const d of deepTrees.splice(0)) spawnSync('python3', ['-c', 'import shutil,sys; shutil.rmtree(sys.argv[1], ignore_errors=True)', d], { timeout: 60_000 });
  await world.cleanup();
});

const TOML = `${TEST_WARDEN_TOML}\n[[protect]]\npath = "data/**/*.txt"\n`;

/** mkdir one level at a time, each relative to the last (no path longer than a name is needed). */
function chain(dir: string, name: string, levels: number): void {
  deepTrees.push(dir);
  const r = spawnSync('python3', ['-c', 'import os,sys\nos.chdir(sys.argv[1])\nfor _ in range(int(sys.argv[3])):\n  os.mkdir(sys.argv[2]); os.chdir(sys.argv[2])', dir, name, String(levels)], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
}

/** A root with data/ (the glob's base) there at init. */
function dataRoot() {
  const t = world.root({ wardenToml: TOML });
  mkdirSync(t.p('data'));
  const r = cli(t, ['init']);
  assert.equal(r.code, 0, r.stderr);
  return t;
}

describe('a deep tree below a ** glob', () => {
  it('a file planted 300 directories down is taken away like one at the top', async () => {
    const t = dataRoot();
    await world.daemon(t);
    chain(t.p('data'), 'd', 300);
    const deep = t.p(`data/${Array<string>(300).fill('d').join('/')}/planted.txt`);
    writeFileSync(deep, 'run anything\n');
    const top = t.p('data/top.txt');
    writeFileSync(top, 'run anything\n');
    const alerts = () => readAlertsOf(t).map((a) => `${a.path.slice(0, 60)} ${a.reason} ${a.detail?.slice(0, 200)}`).join('\n');
    await waitFor(() => !existsSync(top), 10_000, 'the top one taken away').catch((e) => { throw new Error(`${String(e)}\n${alerts()}`); });
    await waitFor(() => !existsSync(deep), 10_000, 'the one 300 levels down taken away').catch((e) => { throw new Error(`${String(e)}\n${alerts()}`); });
  });

  it('a tree longer than a path can name does not blind the watches: within it and at the top, files are still taken away', async () => {
    const t = dataRoot();
    await world.daemon(t);
    const name = 'n'.repeat(60);
    chain(t.p('data'), name, 80); // ~4,900 bytes below data/: past PATH_MAX
    const within = t.p(`data/${Array<string>(40).fill(name).join('/')}/planted.txt`);
    writeFileSync(within, 'run anything\n');
    await waitFor(() => !existsSync(within), 10_000, 'the one 40 long levels down taken away');
    const top = t.p('data/top.txt');
    writeFileSync(top, 'run anything\n');
    await waitFor(() => !existsSync(top), 5_000, 'the top one still taken away');
    const degraded = readAlertsOf(t).filter((a) => a.reason === 'watch-degraded');
    assert.ok(degraded.length <= 1, `one watch-degraded at most: ${degraded.map((a) => a.detail).join(' | ')}`);
  });
});
