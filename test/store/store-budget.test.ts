/**
 * The store budget (docs/CONTRACT.md §Store budget) with the real CLI and daemon: past
 * store_max_bytes the oldest quarantined content is pruned first, every alert line stays
 * and says what was pruned, the owner is told once, `warden status` shows used / budget, a
 * steady stream of edits keeps the store within the budget (plus the entry being made), and
 * a kill in the middle of pruning leaves a store the next start accepts.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { diskUse, rootWithBudget } from '../helpers/store-budget.js';
import { cli, readAlertsOf, sha, testWorld, waitFor, type TestRoot } from '../helpers/root.js';
import { newAlertId } from '../../src/store/alerts.js';
import type { Alert } from '../../src/store/alert-types.js';

const ORG = 'orgs/bookclub.toml';
const world = testWorld();
afterEach(() => world.cleanup());


interface PrunedLine { id: string; name: string; time: string; size: number; sha256: string | null }
function prunedRecords(t: TestRoot): PrunedLine[] {
  const f = t.p('snapshots/pruned.jsonl');
  if (!existsSync(f)) return [];
  return readFileSync(f, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as PrunedLine);
}


/** Edit ORG with `content` and wait until it is reverted and the alert is durable. */
async function editAndWait(t: TestRoot, content: Buffer, approved: Buffer): Promise<Alert> {
  const before = readAlertsOf(t).filter((a) => a.path === ORG).length;
  writeFileSync(t.p(ORG), content);
  let alert: Alert | undefined;
  await waitFor(() => {
    const mine = readAlertsOf(t).filter((a) => a.path === ORG);
    alert = mine.length > before ? mine[mine.length - 1] : undefined;
    return alert !== undefined && readFileSync(t.p(ORG)).equals(approved);
  }, 10_000, 'the edit reverted');
  return alert!;
}

const contentOf = (i: number, size: number): Buffer => Buffer.alloc(size, `members = ["edit ${i}"]\n# `);

describe('the store budget', () => {
  it('a store over its budget prunes the oldest quarantined content first; every alert line stays, says what was pruned, and the owner is told once', async () => {
    const SIZE = 40 * 1024;
    const { t, budget } = rootWithBudget(world, 256 * 1024);
    const approved = readFileSync(t.p(ORG));
    await world.daemon(t);
    const alerts: Alert[] = [];
    const contents: Buffer[] = [];
    for (let i = 0; i < 14; i++) { contents.push(contentOf(i, SIZE)); alerts.push(await editAndWait(t, contents[i]!, approved)); }
    // The guard prunes right after the alert is durable: wait until what is recorded is gone.
    let seen = '';
    await waitFor(() => {
      const r = prunedRecords(t);
      const du = diskUse(t.p('snapshots'));
      seen = `${r.length} records, du ${du}, budget ${budget}, quarantine ${JSON.stringify(readdirSync(t.p('snapshots/quarantine')))}`;
      // Two blocks of slack: between its walks the guard counts what grows by alert (store/prune.ts).
      return r.length > 0 && du <= budget + 8192 && r.every((x) => !existsSync(t.p(`snapshots/quarantine/${x.id}`)));
    }, 10_000, 'pruning settled').catch((e: Error) => { throw new Error(`${e.message}: ${seen}`); });
    const records = prunedRecords(t);
    assert.ok(records.length > 0, 'something was pruned');
    const prunedIds = new Set(records.map((r) => r.id));
    // Oldest first: the pruned ones are exactly the first alerts, never a newer one before an older one.
    assert.deepEqual(alerts.map((a) => prunedIds.has(a.id)), alerts.map((_a, i) => i < prunedIds.size), 'pruned oldest first');
    for (const [i, a] of alerts.entries()) {
      assert.ok(a.quarantine, `alert ${i} names what it kept`);
      if (prunedIds.has(a.id)) {
        assert.equal(existsSync(t.p(`snapshots/quarantine/${a.id}`)), false, `content ${i} pruned: ${existsSync(t.p(`snapshots/quarantine/${a.id}`)) ? JSON.stringify(readdirSync(t.p(`snapshots/quarantine/${a.id}`))) : ''} ${JSON.stringify(records)}`);
        const r = records.find((x) => x.id === a.id)!;
        assert.equal(r.size, SIZE);
        assert.equal(r.sha256, sha(contents[i]!), 'the record names the pruned content by sha256');
      } else {
        assert.equal(sha(readFileSync(t.p(a.quarantine!))), sha(contents[i]!), `content ${i} (newer) still kept`);
      }
    }
    // The alert lines stay; one notice, not one per entry.
    const all = readAlertsOf(t);
    assert.equal(all.filter((a) => a.path === ORG).length, alerts.length, 'every alert line stays');
    const notices = all.filter((a) => a.reason === ('store-budget' as Alert['reason']));
    assert.equal(notices.length, 1, `told once: ${JSON.stringify(notices)}`);
    assert.match(notices[0]!.detail ?? '', /store_max_bytes/);
    // `warden alerts` and `warden why` say what was pruned: when, size, sha256.
    const first = alerts[0]!;
    const out = cli(t, ['alerts']);
    assert.equal(out.code, 0, out.stderr);
    const line = out.stdout.split('\n').find((l) => l.includes(first.id)) ?? '';
    assert.match(line, new RegExp(`content pruned at \\d{4}-\\d\\d-\\d\\dT[^,]+, ${SIZE} bytes, sha256 ${sha(contents[0]!)}`));
    const last = alerts[alerts.length - 1]!;
    assert.doesNotMatch(out.stdout.split('\n').find((l) => l.includes(last.id)) ?? '', /pruned/, 'the newest is kept');
    const json = JSON.parse(cli(t, ['alerts', '--json']).stdout) as (Alert & { pruned?: PrunedLine })[];
    assert.equal(json.find((a) => a.id === first.id)?.pruned?.sha256, sha(contents[0]!));
    // why lists the last ten: the oldest of those that were pruned says so too.
    const why = cli(t, ['why', ORG]);
    const lastTen = alerts.slice(-10);
    const prunedInWhy = lastTen.find((a) => prunedIds.has(a.id));
    if (prunedInWhy) assert.match(why.stdout.split('\n').find((l) => l.includes(prunedInWhy.id)) ?? '', /content pruned at .*, 40960 bytes, sha256 [0-9a-f]{64}/);
    const diff = cli(t, ['diff', first.id]);
    assert.match(diff.stdout + diff.stderr, /content pruned at/);
    assert.ok(diskUse(t.p('snapshots')) <= budget + SIZE + 8192, 'within the budget (plus one entry)');
  });

  it('warden status shows the store\'s size against its budget', () => {
    const t = world.root({ init: true });
    const r = cli(t, ['status', '--json']);
    const s = JSON.parse(r.stdout) as { store: { used_bytes: number; budget_bytes: number; pruned: number } };
    assert.equal(s.store.budget_bytes, 512 * 1024 * 1024, 'the default fits a laptop: 512 MiB');
    const du = diskUse(t.p('snapshots'));
    assert.ok(Math.abs(s.store.used_bytes - du) <= 16 * 1024, `used ${s.store.used_bytes} ≈ du ${du}`);
    const text = cli(t, ['status']).stdout;
    assert.match(text, /^store: [\d.]+ KiB used of 512 MiB \(store_max_bytes\)$/m);
  });

  it('a steady stream of edits over the budget keeps the store within it (plus one entry)', async () => {
    const SIZE = 16 * 1024;
    const { t, budget } = rootWithBudget(world, 128 * 1024);
    const approved = readFileSync(t.p(ORG));
    await world.daemon(t);
    let most = 0;
    // 3 times the budget's headroom goes through: without pruning the store would end ~3x over.
    for (let i = 0; i < 24; i++) {
      await editAndWait(t, contentOf(i, SIZE), approved);
      most = Math.max(most, diskUse(t.p('snapshots')));
    }
    const entry = SIZE + 4096 + 4096; // its file, its folder, slack for alerts.jsonl's next block
    assert.ok(most <= budget + entry, `the store peaked at ${most} bytes; budget ${budget} + one entry ${entry}`);
    assert.ok(prunedRecords(t).length >= 10, 'pruned as it went');
  });

  it('a kill in the middle of pruning leaves a store the next start accepts; nothing that is not warden\'s is touched', async () => {
    const { t, budget } = rootWithBudget(world, 64 * 1024);
    const q = t.p('snapshots/quarantine');
    const planted: string[] = [];
    const t0 = Date.UTC(2026, 0, 1);
    for (let k = 0; k < 3000; k++) {
      const id = newAlertId(t0 + k * 1000);
      mkdirSync(join(q, id), { mode: 0o700 });
      writeFileSync(join(q, id, 'bookclub.toml'), contentOf(k, 4096), { mode: 0o600 });
      planted.push(id);
    }
    // Not warden's to prune: a name that is no alert id, a link moved there whole, and a link inside the oldest entry.
    mkdirSync(join(q, 'not-an-alert'), { mode: 0o700 });
    writeFileSync(join(q, 'not-an-alert', 'keep.txt'), 'keep');
    const linkId = newAlertId(t0 - 5000);
    symlinkSync(t.outside, join(q, linkId));
    const oldest = newAlertId(t0 - 10_000);
    mkdirSync(join(q, oldest), { mode: 0o700 });
    symlinkSync(join(t.outside, 'target.txt'), join(q, oldest, 'link'));
    writeFileSync(join(q, oldest, 'f.toml'), 'rejected', { mode: 0o600 });
    // Killed three times at a moment of its own: the first slice runs before `ready`, the rest after.
    const delays = [0, 40, 120];
    for (const ms of delays) {
      const d = await world.daemon(t);
      await new Promise((r) => setTimeout(r, ms));
      await d.kill9();
      const recorded = new Set(prunedRecords(t).map((r) => r.id));
      assert.ok(recorded.size > 0, 'pruning under way');
      // Never neither: each planted content is still there, or recorded as pruned.
      for (const id of planted) assert.ok(existsSync(join(q, id, 'bookclub.toml')) || recorded.has(id), `${id}: content or record`);
    }
    assert.ok(planted.some((id) => existsSync(join(q, id))), 'killed before pruning finished');
    await world.daemon(t);
    // The records stay (one line a content, like the alert lines): within budget but for them.
    await waitFor(() => planted.every((id) => !existsSync(join(q, id))), 60_000, 'every planted content pruned');
    // A directory never shrinks on ext4: quarantine/ keeps the blocks its 3,000 names took.
    const grown = statSync(t.p('snapshots/pruned.jsonl')).blocks * 512 + statSync(q).blocks * 512;
    let du = 0;
    await waitFor(() => (du = diskUse(t.p('snapshots'))) <= budget + grown, 10_000, 'the store back within budget (its records aside)')
      .catch((e: Error) => { throw new Error(`${e.message}: ${du} > ${budget} + ${grown}`); });
    const st = cli(t, ['status']);
    assert.equal(st.code, 0, `status after the kill: ${st.stdout}${st.stderr}`);
    assert.equal(readFileSync(join(q, 'not-an-alert', 'keep.txt'), 'utf8'), 'keep');
    assert.ok(lstatSync(join(q, linkId)).isSymbolicLink(), 'a link moved there whole stays');
    assert.ok(lstatSync(join(q, oldest, 'link')).isSymbolicLink(), 'a link inside an entry stays');
    assert.equal(existsSync(join(q, oldest, 'f.toml')), false, 'the file beside it was pruned');
    assert.equal(readFileSync(join(t.outside, 'target.txt'), 'utf8'), 'outside content\n', 'nothing outside the store touched');
    assert.equal(readAlertsOf(t).filter((a) => a.reason === ('store-budget' as Alert['reason'])).length, 1, 'told once, not at each start while pruning goes on');
  });
});
