/**
 * `warden apply --from -` on a non-blocking stdin (inherited O_NONBLOCK, as some shells and
 * supervisors hand it over) that stays empty for a while: the command waits without
 * burning a core, then applies what arrives.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CLI, cli, makeRoot, type TestRoot } from '../helpers/root.js';
import { waitFor } from '../helpers/wait-for.js';

const roots: TestRoot[] = [];
after(() => { for (const t of roots) t.cleanup(); });

/**
 * How many read(2) calls a process made (/proc/PID/io syscr). CPU time would say the same
 * on an idle machine, but on a loaded one a spinning process gets only its share of a core;
 * the number of reads does not depend on the load.
 */
function readCalls(pid: number): number {
  const m = /^syscr: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'));
  assert.ok(m, 'syscr in /proc/PID/io');
  return Number(m[1]);
}

// python3 sets O_NONBLOCK on fd 0, then execs the CLI in the same process.
const NONBLOCK_EXEC = 'import fcntl, os, sys\nfl = fcntl.fcntl(0, fcntl.F_GETFL)\nfcntl.fcntl(0, fcntl.F_SETFL, fl | os.O_NONBLOCK)\nos.execv(sys.argv[1], sys.argv[1:])\n';

test('apply --from - on an empty non-blocking stdin sleeps instead of spinning, then applies', { timeout: 60_000 }, async () => {
  const t = makeRoot();
  roots.push(t);
  assert.equal(cli(t, ['init']).code, 0);
  const ORG = 'orgs/bookclub.toml';
  const wanted = readFileSync(t.p(ORG), 'utf8').replace('hourly_cap = 20', 'hourly_cap = 13');
  const child = spawn('python3', ['-c', NONBLOCK_EXEC, process.execPath, CLI, 'apply', ORG, '--from', '-', '--root', t.root], { env: t.env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += String(d); });
  child.stderr.on('data', (d) => { out += String(d); });
  const exited = new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  try {
    // Wait until node (not python any more) runs the CLI, and it has read its modules.
    await waitFor(() => readFileSync(`/proc/${child.pid}/comm`, 'utf8').trim() !== 'python3', 20_000, 'the CLI started');
    await new Promise((r) => setTimeout(r, 1000)); // the scenario: stdin stays empty …
    const r0 = readCalls(child.pid!);
    await new Promise((r) => setTimeout(r, 2000)); // … for 2 s more, measured
    const reads = readCalls(child.pid!) - r0;
    // Spinning on EAGAIN makes tens of thousands of reads in 2 s; sleeping up to 50 ms between
    // tries makes about 40.
    assert.ok(reads < 1000, `the waiting command made ${reads} read calls in 2 s`);
    child.stdin.end(wanted);
    assert.equal(await exited, 0, out);
    assert.equal(readFileSync(t.p(ORG), 'utf8'), wanted);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});
