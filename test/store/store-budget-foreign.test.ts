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
import { rootWithBudget } from '../helpers/store-budget.js';
import { cli, readAlertsOf, testWorld, waitFor } from '../helpers/root.js';

const world = testWorld();
afterEach(() => world.cleanup());



const AGENT = 4242;

describe('the store budget and directories moved whole', () => {
  it("directories the agent swaps in are held apart: the owner's older rejected content is not pruned for them, and they keep owner and content", async () => {
    const SWAPS = 6;
    const SIZE = 200 * 1024;
    const { t } = rootWithBudget(world, 128 * 1024);
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
