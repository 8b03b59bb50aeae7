/**
 * `warden init` killed with SIGKILL from outside at a random moment (no seam of the product
 * chooses it) leaves a root whose next `warden init` succeeds, whose baseline then verifies
 * clean, whose history holds the baseline, and whose guard starts (it checks every blob). Blobs are written with no
 * fsync of their own and the history commit is streamed by git fast-import: the index
 * rename is the commit point, so a kill before it must leave nothing that is adopted.
 */
import { it, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { CLI, TEST_WARDEN_TOML, cli, makeRoot, startDaemon, type TestRoot } from '../helpers/root.js';

const N = 800;
const TRIALS = 5;
const roots: TestRoot[] = [];
after(() => { for (const t of roots) t.cleanup(); });

function bigRoot(): TestRoot {
  const t = makeRoot({ wardenToml: `${TEST_WARDEN_TOML}\n[[protect]]\npath = "data/*.txt"\n` });
  roots.push(t);
  mkdirSync(t.p('data'));
  for (let i = 0; i < N; i++) writeFileSync(t.p(`data/f${i}.txt`), randomBytes(512));
  return t;
}

/** Run init; kill it after `killAfterMs` (Infinity: let it finish). Resolves with its time and whether it was still running when killed. */
function initKilled(t: TestRoot, killAfterMs: number): Promise<{ ms: number; killedRunning: boolean; code: number | null }> {
  return new Promise((resolve) => {
    const start = performance.now();
    const p = spawn(process.execPath, [CLI, 'init', '--root', t.root], { env: t.env, stdio: 'ignore' });
    let killedRunning = false;
    const timer = Number.isFinite(killAfterMs) ? setTimeout(() => { if (p.exitCode === null && p.signalCode === null) { killedRunning = true; p.kill('SIGKILL'); } }, killAfterMs) : null;
    p.on('exit', (code) => { if (timer) clearTimeout(timer); resolve({ ms: performance.now() - start, killedRunning, code }); });
  });
}

const commits = (t: TestRoot): number => Number(execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: t.p('snapshots/history'), encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }).trim());

it(`init killed at ${TRIALS} random moments: the next init succeeds, verifies clean and the guard starts`, { timeout: 600_000 }, async () => {
  const full = await initKilled(bigRoot(), Infinity);
  assert.equal(full.code, 0, 'a whole init succeeds');
  let landed = 0;
  for (let k = 0; k < TRIALS; k++) {
    const t = bigRoot();
    // Spread over the whole run (and a little past it): slice k of the window, a random point in it.
    const at = ((k + Math.random()) / TRIALS) * full.ms * 1.1;
    const r = await initKilled(t, at);
    if (r.killedRunning) landed++;
    // Before the index rename (the commit point) nothing was adopted: init starts over and
    // succeeds. After it (the kill landed while the process was still finishing, or it had
    // exited) the baseline is complete, and init says so instead.
    const again = cli(t, ['init']);
    assert.ok(again.code === 0 || (again.code === 2 && /a baseline already exists|had a baseline/.test(again.stderr)), `trial ${k} (killed at ${at.toFixed(0)} ms): ${again.code} ${again.stderr}`);
    const v = cli(t, ['verify']);
    assert.equal(v.code, 0, `trial ${k}: ${v.stdout}${v.stderr}`);
    assert.ok(commits(t) >= 1, 'the history holds the baseline');
    // The guard verifies every blob against its name at start: a torn one adopted would stop it.
    const d = await startDaemon(t);
    await d.stop();
  }
  assert.ok(landed >= 1, `${landed} of ${TRIALS} kills landed while init ran`);
});
