/**
 * The store budget against the agent's directories (docs/CONTRACT.md §Store budget): a
 * protected directory the agent replaces with its own is moved whole into quarantine and,
 * being the agent's, never pruned. A stream of such swaps must still not grow the store
 * past store_max_bytes without bound (the same promise as for a stream of edits), and the
 * owner's older rejected content must not be pruned for bytes that pruning cannot free.
 *
 * Red-team finding: today each swap adds its whole content to the store for good; the
 * store grows by the agent's choice. Marked `todo` until the budget has a rule for what
 * is moved there whole (see the report); the test shows the growth when run.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, readAlertsOf, testWorld, TEST_WARDEN_TOML, waitFor, type TestRoot } from '../helpers/root.js';

const world = testWorld();
afterEach(() => world.cleanup());

/** Allocated bytes under `dir` (st_blocks, each inode once, no link followed): du's figure. */
function diskUse(dir: string): number {
  const seen = new Set<string>();
  let n = 0;
  const walk = (p: string): void => {
    let st;
    try { st = lstatSync(p); } catch (e) { if ((e as NodeJS.ErrnoException).code === 'ENOENT') return; throw e; }
    const key = `${st.dev}:${st.ino}`;
    if (!seen.has(key)) { seen.add(key); n += st.blocks * 512; }
    if (!st.isDirectory()) return;
    let children: string[] = [];
    try { children = readdirSync(p); } catch (e) { if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e; }
    for (const c of children) walk(join(p, c));
  };
  walk(dir);
  return n;
}

function rootWithBudget(headroom: number): { t: TestRoot; budget: number } {
  const toml = TEST_WARDEN_TOML.replace('rescan_seconds = 30', 'rescan_seconds = 5');
  const t = world.root({ wardenToml: toml, init: true });
  const budget = diskUse(t.p('snapshots')) + headroom;
  writeFileSync(join(t.base, 'next.toml'), toml.replace('max_bytes = 1048576\n', `max_bytes = 1048576\nstore_max_bytes = ${budget}\n`));
  const r = cli(t, ['apply', 'config/warden.toml', '--from', join(t.base, 'next.toml')]);
  assert.equal(r.code, 0, `apply store_max_bytes: ${r.stdout}${r.stderr}`);
  return { t, budget };
}

describe('the store budget and directories moved whole', () => {
  it('a stream of directory swaps does not grow the store past store_max_bytes without bound', { todo: 'content moved whole is never pruned (docs/CONTRACT.md §Store budget)' }, async () => {
    const SWAPS = 8;
    const SIZE = 200 * 1024;
    const { t, budget } = rootWithBudget(256 * 1024);
    await world.daemon(t);
    for (let i = 0; i < SWAPS; i++) {
      const before = readAlertsOf(t).filter((a) => a.path === 'orgs').length;
      // The agent's own directory, with a large file in it, put where orgs/ was.
      const mine = join(t.base, `agent-dir-${i}`);
      mkdirSync(join(mine, 'deep'), { recursive: true });
      writeFileSync(join(mine, 'deep', 'big.bin'), Buffer.alloc(SIZE, i));
      const away = join(t.base, `orgs-away-${i}`);
      renameSync(t.p('orgs'), away);
      renameSync(mine, t.p('orgs'));
      await waitFor(() => readAlertsOf(t).filter((a) => a.path === 'orgs').length > before && readdirSync(t.p('orgs')).includes('bookclub.toml'), 10_000, `swap ${i} put right`);
      rmSync(away, { recursive: true, force: true });
    }
    let du = 0;
    // Give the guard its chance to prune (it prunes right after each alert).
    await waitFor(() => { du = diskUse(t.p('snapshots')); return du <= budget + SIZE + 8192; }, 5_000, 'store within budget').catch(() => undefined);
    console.log(`# ${SWAPS} directory swaps of ${SIZE} bytes: store ${du} bytes, budget ${budget}`);
    assert.ok(du <= budget + SIZE + 8192, `the store stays within its budget plus one entry: ${du} > ${budget} + ${SIZE}`);
    assert.ok(readFileSync(t.p('orgs/bookclub.toml')).length > 0);
  });
});
