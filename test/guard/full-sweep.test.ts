/**
 * The backstop rescan skips the lstat of approved files the stamp poll
 * vouches for (their inode watch quiet, nobody has them open, their directory unchanged),
 * and every FULL_SWEEP_EVERY-th rescan looks at every file whatever the watches say. This is
 * the proof that the full sweep exists and bounds what a watch misses: the target file's
 * inode watch is blinded (the test seam WARDEN_TEST_INODE_WATCH_BLIND drops that watch's
 * events as they are read, nothing else), and the agent writes the file through a hard link
 * outside the root, which no directory watch sees (the stamp poll's inode watch is the only
 * inode watch the guard keeps: src/guard/watcher.ts). So only an lstat by the rescan can find the write: the ordinary rescans do not (they trust the
 * quiet watch), the next full sweep does.
 */
import { after, afterEach, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { TEST_WARDEN_TOML, cli, readAlertsOf, testWorld, waitFor } from '../helpers/root.js';
import { giveToAgent, makeAgent, type Agent } from '../helpers/agent.js';
import { pingDaemon } from '../../src/cli/daemon-client.js';
import { FULL_SWEEP_EVERY } from '../../src/guard/open-watch.js';
import { loadInotify } from '../../src/fsx/inotify.js';

const world = testWorld();
const agents: Agent[] = [];
afterEach(async () => { await world.cleanup(); });
after(() => { for (const a of agents) a.remove(); });

const RESCAN_S = 0.3;
const BULK = 1020;

it('a write a blinded inode watch never reports is skipped by the ordinary rescans and found by the next full sweep', async (ctx) => {
  if (!loadInotify()) { ctx.skip('no inotify binding: nothing is ever vouched for'); return; }
  const toml = `${TEST_WARDEN_TOML.replace('rescan_seconds = 30', `rescan_seconds = ${RESCAN_S}`)}
[witness]
enabled = false

[[protect]]
path = "zbulk/*.txt"
kind = "text"
`;
  assert.ok(toml.includes(`rescan_seconds = ${RESCAN_S}`));
  const t = world.root({ wardenToml: toml });
  mkdirSync(t.p('zbulk'));
  for (let i = 0; i < BULK; i++) writeFileSync(t.p(`zbulk/f${String(i).padStart(5, '0')}.txt`), `file ${i}\n`);
  const a = makeAgent('wtfs');
  agents.push(a);
  giveToAgent(t, a);
  execFileSync('chown', ['-R', `${a.uid}:${a.gid}`, t.p('zbulk')]);
  const target = `zbulk/f${String(BULK - 1).padStart(5, '0')}.txt`;
  const approved = readFileSync(t.p(target), 'utf8');
  // The agent's second name for the file, outside the root (it owns the root's parent).
  const link = join(t.base, 'keep.txt');
  const l = a.sh(`ln '${t.p(target)}' '${link}'`);
  assert.equal(l.code, 0, l.out);
  assert.equal(cli(t, ['init']).code, 0);

  await world.daemon(t, ['--guard'], { WARDEN_TEST_INODE_WATCH_BLIND: target });
  const counters = async () => {
    const p = await pingDaemon(t.root, 5_000);
    assert.ok(p?.ok, 'the daemon answers a ping');
    return { rescans: p.counters.rescans as number, vouched: p.counters.vouched as number, files: p.files };
  };
  // Settled: a rescan skipped every approved file (the target among them) as vouched for.
  await waitFor(async () => { const c = await counters(); return c.vouched === c.files; }, 30_000, 'a rescan that vouches for every approved file');
  // Right after an ordinary rescan, with several ordinary ones to come before the next full sweep.
  const before = await waitFor(async () => { const c = await counters(); const k = c.rescans % FULL_SWEEP_EVERY; return k >= 1 && k <= 3 ? c : null; }, 30_000, 'a rescan early in the cycle');
  const nextFull = Math.ceil((before.rescans + 1) / FULL_SWEEP_EVERY) * FULL_SWEEP_EVERY;
  const w = a.sh(`echo tampered > '${link}'`);
  assert.equal(w.code, 0, w.out);
  const edited = await counters();
  // Two rescans that started after the write and were not full sweeps: each skipped the file.
  await waitFor(async () => (await counters()).rescans >= edited.rescans + 2, 10_000, 'two more rescans');
  const mid = await counters();
  assert.ok(mid.rescans < nextFull, `still before the full sweep (rescan ${mid.rescans}, full at ${nextFull}); the machine was too slow to tell`);
  assert.equal(readFileSync(t.p(target), 'utf8'), 'tampered\n', `the ordinary rescans (${edited.rescans + 1}..${mid.rescans}) trusted the quiet watch`);
  assert.ok(!readAlertsOf(t).some((x) => x.path === target), 'no alert yet');
  // The full sweep looks at it, whatever the watch says: reverted, alerted.
  const t0 = Date.now();
  await waitFor(() => readFileSync(t.p(target), 'utf8') === approved, 20_000, `${target} reverted by a full sweep`);
  const done = await counters();
  process.stdout.write(`# written at rescan ${edited.rescans}; reverted ${Date.now() - t0} ms after rescan ${mid.rescans}, by rescan ${done.rescans} (full sweep at ${nextFull})\n`);
  assert.ok(done.rescans >= nextFull, `reverted at the full sweep (${nextFull}), not before (counter now ${done.rescans})`);
  await waitFor(() => readAlertsOf(t).some((x) => x.path === target && x.reason === 'content'), 5_000, 'a content alert for the target');
});

it('a name swapped in a directory whose watch saw nothing is looked at by the next rescan (its directory changed), not only by the full sweep', async (ctx) => {
  if (!loadInotify()) { ctx.skip('no inotify binding: nothing is ever vouched for'); return; }
  const toml = `${TEST_WARDEN_TOML.replace('rescan_seconds = 30', `rescan_seconds = ${RESCAN_S}`)}
[witness]
enabled = false

[[protect]]
path = "zbulk/*.txt"
kind = "text"
`;
  const t = world.root({ wardenToml: toml });
  mkdirSync(t.p('zbulk'));
  for (let i = 0; i < BULK; i++) writeFileSync(t.p(`zbulk/f${String(i).padStart(5, '0')}.txt`), `file ${i}\n`);
  const a = makeAgent('wtfd');
  agents.push(a);
  giveToAgent(t, a);
  execFileSync('chown', ['-R', `${a.uid}:${a.gid}`, t.p('zbulk')]);
  const target = `zbulk/f${String(BULK - 1).padStart(5, '0')}.txt`;
  const approved = readFileSync(t.p(target), 'utf8');
  assert.equal(cli(t, ['init']).code, 0);
  // Blind: the target's inode watch (its IN_MOVE_SELF) and the directory's watch (the rename, the create).
  await world.daemon(t, ['--guard'], { WARDEN_TEST_INODE_WATCH_BLIND: target, WARDEN_TEST_DIR_WATCH_BLIND: 'zbulk' });
  const counters = async () => {
    const p = await pingDaemon(t.root, 5_000);
    assert.ok(p?.ok, 'the daemon answers a ping');
    return { rescans: p.counters.rescans as number, vouched: p.counters.vouched as number, files: p.files };
  };
  await waitFor(async () => { const c = await counters(); return c.vouched === c.files; }, 30_000, 'a rescan that vouches for every approved file');
  const before = await waitFor(async () => { const c = await counters(); const k = c.rescans % FULL_SWEEP_EVERY; return k >= 1 && k <= 3 ? c : null; }, 30_000, 'a rescan early in the cycle');
  const nextFull = Math.ceil((before.rescans + 1) / FULL_SWEEP_EVERY) * FULL_SWEEP_EVERY;
  // The approved inode moves out of the root (its watch stays quiet: it is the same inode,
  // unopened, unwritten), and a new file takes its name.
  const w = a.sh(`mv '${t.p(target)}' '${join(t.base, 'away.txt')}' && echo tampered > '${t.p(target)}'`);
  assert.equal(w.code, 0, w.out);
  await waitFor(() => readFileSync(t.p(target), 'utf8') === approved, 20_000, `${target} put back`);
  const done = await counters();
  process.stdout.write(`# swapped after rescan ${before.rescans}; put back by rescan ${done.rescans} (full sweep at ${nextFull})\n`);
  assert.ok(done.rescans < nextFull, `put back by an ordinary rescan (counter ${done.rescans}), before the full sweep at ${nextFull}`);
});
