/**
 * The runner (scripts/run-tests.mjs) ends, pass or fail, never hangs: a test file that does
 * not finish within the per-file timeout fails, and the processes it still runs are named
 * (pid and command) and killed; a file that passes but leaves a process behind fails too.
 */
import { it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO } from './root.js';

const dir = mkdtempSync(join(tmpdir(), 'warden-runner-'));
after(() => rmSync(dir, { recursive: true, force: true }));
/** Running (a zombie nobody reaped yet counts as gone: it runs nothing). */
const alive = (pid: number): boolean => { try { return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8')); } catch { return false; } };

it('a hanging file fails at the timeout naming what it still runs; a file that leaks a process fails; both are killed', { timeout: 120_000 }, () => {
  const marker = `warden-runner-${process.pid}`;
  // A test waiting for ever on a child that keeps its pipes open (the old hang).
  writeFileSync(join(dir, 'hang.test.js'), `import { it } from 'node:test';
import { spawn } from 'node:child_process';
it('waits for ever', async () => {
  spawn('bash', ['-c', 'exec -a ${marker}-hang sleep 1000'], { stdio: 'pipe' });
  await new Promise(() => { setInterval(() => {}, 1000); });
});
`);
  // A passing test that leaves a detached process behind.
  writeFileSync(join(dir, 'leak.test.js'), `import { it } from 'node:test';
import { spawn } from 'node:child_process';
it('passes but leaks', () => { spawn('bash', ['-c', 'exec -a ${marker}-leak sleep 1000'], { stdio: 'ignore', detached: true }).unref(); });
`);
  writeFileSync(join(dir, 'fine.test.js'), `import { it } from 'node:test';\nit('passes', () => {});\n`);
  const t0 = Date.now();
  const r = spawnSync(process.execPath, [join(REPO, 'scripts', 'run-tests.mjs')], { cwd: REPO, env: { ...process.env, WARDEN_TEST_DIR: dir, WARDEN_TEST_FILE_TIMEOUT: '8' }, encoding: 'utf8', timeout: 100_000 });
  const out = r.stdout + r.stderr;
  assert.equal(r.status, 1, out);
  assert.ok(Date.now() - t0 < 90_000, 'the runner came back');
  assert.match(out, /hang\.test\.js did not finish within 8 s; killing what it still runs:\n(# {3}pid \d+: .*\n)+/);
  assert.match(out, new RegExp(`#   pid \\d+: ${marker}-hang 1000`));
  assert.match(out, /leak\.test\.js left 1 process\(es\) behind \(now killed\):\n# {3}pid \d+: /);
  assert.match(out, new RegExp(`#   pid \\d+: ${marker}-leak 1000`));
  assert.match(out, /# ==== .*fine\.test\.js: ok/);
  assert.match(out, /# failed files \(2\):\n/);
  assert.match(out, /\n# {3}.*hang\.test\.js \(timed out\)\n/);
  assert.match(out, /\n# {3}.*leak\.test\.js \(left processes behind\)\n/);
  const pids = [...out.matchAll(new RegExp(`pid (\\d+): ${marker}`, 'g'))].map((m) => Number(m[1]));
  assert.equal(pids.length, 2);
  for (const pid of pids) assert.equal(alive(pid), false, `pid ${pid} was killed`);
});
