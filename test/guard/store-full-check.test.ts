/**
 * The backstop rescan does not lstat the store blobs that the
 * blob-directory watches vouch for (src/guard/blob-watch.ts: no event on the blob's name
 * since it was last looked at), and every STORE_FULL_CHECK_EVERY-th rescan looks at every
 * blob whatever the watches say. This is the proof that the full check exists and bounds
 * what a watch misses: both watches that could report the damage are blinded (the store
 * check's own, WARDEN_TEST_STORE_WATCH_BLIND, and the root watcher's on snapshots/blobs,
 * WARDEN_TEST_DIR_WATCH_BLIND), then a blob is overwritten in place. The ordinary rescans
 * skip it; the next full check finds it and writes it back from the live file.
 */
import { afterEach, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { TEST_WARDEN_TOML, cli, readAlertsOf, testWorld, waitFor } from '../helpers/root.js';
import { pingDaemon } from '../../src/cli/daemon-client.js';
import { STORE_FULL_CHECK_EVERY } from '../../src/guard/blob-watch.js';
import { loadInotify } from '../../src/fsx/inotify.js';
import { parseBody } from '../../src/store/baseline.js';

const world = testWorld();
afterEach(async () => { await world.cleanup(); });

const RESCAN_S = 0.3;
/** A fast rescan, no witness, and 20 protected files under data/ (both tests). */
const TOML = `${TEST_WARDEN_TOML.replace('rescan_seconds = 30', `rescan_seconds = ${RESCAN_S}`)}
[witness]
enabled = false

[[protect]]
path = "data/*.txt"
kind = "text"
`;

it('a blob damaged where no watch reports it is skipped by the ordinary rescans and repaired by the next full check', async (ctx) => {
  if (!loadInotify()) { ctx.skip('no inotify binding: no blob is ever vouched for'); return; }
  const toml = TOML;
  assert.ok(toml.includes(`rescan_seconds = ${RESCAN_S}`));
  const t = world.root({ wardenToml: toml });
  const files: string[] = [];
  for (let i = 0; i < 20; i++) { const rel = `data/f${i}.txt`; files.push(rel); }
  mkdirSync(t.p('data'));
  for (const [i, rel] of files.entries()) writeFileSync(t.p(rel), `file ${i}\n`);
  assert.equal(cli(t, ['init']).code, 0);
  const target = files[7] as string;
  const idx = readFileSync(t.p('snapshots/baseline/index'));
  const entry = parseBody(idx.subarray(idx.indexOf(0x0a) + 1)).files[target] as { sha256: string };
  const blob = t.p(`snapshots/blobs/${entry.sha256}`);
  const approved = readFileSync(blob);
  assert.equal(createHash('sha256').update(approved).digest('hex'), entry.sha256, 'the blob is where the index says');

  await world.daemon(t, ['--guard'], { WARDEN_TEST_STORE_WATCH_BLIND: '1', WARDEN_TEST_DIR_WATCH_BLIND: 'snapshots/blobs' });
  const counters = async () => {
    const p = await pingDaemon(t.root, 5_000);
    assert.ok(p?.ok, 'the daemon answers a ping');
    return { rescans: p.counters.rescans as number, blobsVouched: p.counters.blobsVouched as number };
  };
  // Settled: a rescan skipped every blob as vouched for.
  await waitFor(async () => (await counters()).blobsVouched >= files.length, 30_000, 'a rescan that vouches for every blob');
  const before = await waitFor(async () => { const c = await counters(); const k = c.rescans % STORE_FULL_CHECK_EVERY; return k >= 1 && k <= 3 ? c : null; }, 30_000, 'a rescan early in the cycle');
  const nextFull = Math.ceil((before.rescans + 1) / STORE_FULL_CHECK_EVERY) * STORE_FULL_CHECK_EVERY;
  writeFileSync(blob, 'damaged\n');
  const damaged = await counters();
  await waitFor(async () => (await counters()).rescans >= damaged.rescans + 2, 10_000, 'two more rescans');
  const mid = await counters();
  assert.ok(mid.rescans < nextFull, `still before the full check (rescan ${mid.rescans}, full at ${nextFull}); the machine was too slow to tell`);
  assert.equal(readFileSync(blob, 'utf8'), 'damaged\n', `the ordinary rescans (${damaged.rescans + 1}..${mid.rescans}) trusted the blinded watch`);
  assert.ok(!readAlertsOf(t).some((x) => x.reason === 'baseline-tampered'), 'no tamper alert yet');
  // The full check lstat's every blob: the stamp moved, the blob is hashed, written back, alerted.
  await waitFor(() => readFileSync(blob).equals(approved), 20_000, 'the blob written back by a full check');
  const done = await counters();
  process.stdout.write(`# damaged at rescan ${damaged.rescans}; repaired by rescan ${done.rescans} (full check at ${nextFull})\n`);
  assert.ok(done.rescans >= nextFull, `repaired at the full check (${nextFull}), not before (counter now ${done.rescans})`);
  await waitFor(() => readAlertsOf(t).some((x) => x.reason === 'baseline-tampered' && String(x.detail).includes(target)), 5_000, 'a baseline-tampered alert naming the file');
});

it('a blob damaged through its name is looked at by the next ordinary rescan (the store watch saw it), not only by the full check', async (ctx) => {
  if (!loadInotify()) { ctx.skip('no inotify binding: no blob is ever vouched for'); return; }
  const toml = TOML;
  const t = world.root({ wardenToml: toml });
  mkdirSync(t.p('data'));
  for (let i = 0; i < 20; i++) writeFileSync(t.p(`data/f${i}.txt`), `file ${i}\n`);
  assert.equal(cli(t, ['init']).code, 0);
  const target = 'data/f7.txt';
  const idx = readFileSync(t.p('snapshots/baseline/index'));
  const entry = parseBody(idx.subarray(idx.indexOf(0x0a) + 1)).files[target] as { sha256: string };
  const blob = t.p(`snapshots/blobs/${entry.sha256}`);
  const approved = readFileSync(blob);
  // Only the root watcher's hint is blinded: the store check's own watch must report it.
  await world.daemon(t, ['--guard'], { WARDEN_TEST_DIR_WATCH_BLIND: 'snapshots/blobs' });
  const counters = async () => {
    const p = await pingDaemon(t.root, 5_000);
    assert.ok(p?.ok, 'the daemon answers a ping');
    return { rescans: p.counters.rescans as number, blobsVouched: p.counters.blobsVouched as number };
  };
  await waitFor(async () => (await counters()).blobsVouched >= 20, 30_000, 'a rescan that vouches for every blob');
  const before = await waitFor(async () => { const c = await counters(); const k = c.rescans % STORE_FULL_CHECK_EVERY; return k >= 1 && k <= 3 ? c : null; }, 30_000, 'a rescan early in the cycle');
  const nextFull = Math.ceil((before.rescans + 1) / STORE_FULL_CHECK_EVERY) * STORE_FULL_CHECK_EVERY;
  writeFileSync(blob, 'damaged\n');
  await waitFor(() => readFileSync(blob).equals(approved), 20_000, 'the blob written back');
  const done = await counters();
  process.stdout.write(`# damaged after rescan ${before.rescans}; repaired by rescan ${done.rescans} (full check at ${nextFull})\n`);
  assert.ok(done.rescans < nextFull, `repaired by an ordinary rescan (counter ${done.rescans}), before the full check at ${nextFull}`);
});
