/**
 * The store budget against the agent's directories (docs/CONTRACT.md §Store budget): a
 * protected directory the agent replaces with its own is moved whole into quarantine and,
 * being the agent's, never pruned or changed. A rename moves no bytes, so what is held that
 * way is counted apart and never weighed against the budget: the owner's older rejected
 * content is not pruned for bytes that pruning cannot free, and `warden status` shows both.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { chownSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

const AGENT = 4242;

describe('the store budget and directories moved whole', () => {
  it("directories the agent swaps in are held apart: the owner's older rejected content is not pruned for them, and they keep owner and content", async () => {
    const SWAPS = 6;
    const SIZE = 200 * 1024;
    const { t } = rootWithBudget(128 * 1024);
    await world.daemon(t);
    // The owner's evidence: a rejected edit, kept in quarantine (oldest entry).
    const evidence = `# rejected\n${'x'.repeat(20 * 1024)}\n`;
    writeFileSync(t.p('orgs/bookclub.toml'), evidence);
    await waitFor(() => readAlertsOf(t).some((a) => a.path === 'orgs/bookclub.toml' && a.quarantine), 10_000, 'the edit reverted and kept');
    const kept = readAlertsOf(t).find((a) => a.path === 'orgs/bookclub.toml' && a.quarantine)!;
    for (let i = 0; i < SWAPS; i++) {
      const before = readAlertsOf(t).filter((a) => a.path === 'orgs').length;
      // The agent's own directory, with a large file in it, put where orgs/ was.
      const mine = join(t.base, `agent-dir-${i}`);
      mkdirSync(join(mine, 'deep'), { recursive: true });
      writeFileSync(join(mine, 'deep', 'big.bin'), Buffer.alloc(SIZE, i));
      for (const p of [mine, join(mine, 'deep'), join(mine, 'deep', 'big.bin')]) chownSync(p, AGENT, AGENT);
      const away = join(t.base, `orgs-away-${i}`);
      renameSync(t.p('orgs'), away);
      renameSync(mine, t.p('orgs'));
      await waitFor(() => readAlertsOf(t).filter((a) => a.path === 'orgs').length > before && readdirSync(t.p('orgs')).includes('bookclub.toml'), 10_000, `swap ${i} put right`);
      rmSync(away, { recursive: true, force: true });
    }
    // Each swap's alert is durable before the guard weighs the store; give it a status round-trip.
    const status = cli(t, ['status']);
    const pruned = existsSync(t.p('snapshots/pruned.jsonl')) ? readFileSync(t.p('snapshots/pruned.jsonl'), 'utf8') : '';
    assert.ok(!pruned.includes(kept.id), `the owner's rejected content was pruned for the agent's directories: ${pruned}`);
    const q = readdirSync(t.p('snapshots/quarantine'));
    assert.ok(q.includes(kept.id), 'the evidence is still in quarantine');
    // Every directory moved whole is as the agent left it.
    const held = readAlertsOf(t).filter((a) => a.path === 'orgs' && a.quarantine);
    assert.equal(held.length, SWAPS, 'each swap kept the directory');
    for (const a of held) {
      const big = t.p(join('snapshots/quarantine', a.id, 'orgs', 'deep', 'big.bin'));
      const st = lstatSync(big);
      assert.equal(st.uid, AGENT, 'owner unchanged');
      assert.equal(st.size, SIZE, 'content unchanged');
    }
    // status tells the held bytes apart from what the budget weighs.
    assert.match(status.stdout, /held whole/, status.stdout);
    const js = JSON.parse(cli(t, ['status', '--json']).stdout) as { store: { held_bytes: number; used_bytes: number } };
    assert.ok(js.store.held_bytes >= SWAPS * SIZE, `held_bytes ${js.store.held_bytes}`);
    assert.ok(js.store.used_bytes >= js.store.held_bytes);
  });
});
