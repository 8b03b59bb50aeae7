/**
 * The attack review measured it: under --nofile=1024, 1,100 idle connections to the control socket
 * made edits stick for as long as they were held and raised 32,800 watch-degraded alerts in
 * 10 s. With the socket's limits (connections, request size, idle time) the guard keeps its
 * descriptors: a tamper is still reverted at once, with one alert and a quiet log, and a
 * command gets through again once the idle clients are cut off.
 */
import { it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { CLI, cli, makeRoot, readAlertsOf, type TestRoot } from '../helpers/root.js';
import { waitFor } from '../helpers/wait-for.js';

const ORG = 'orgs/bookclub.toml';
const roots: TestRoot[] = [];
after(() => { for (const t of roots) t.cleanup(); });
const noPrlimit = spawnSync('prlimit', ['--version'], { stdio: 'ignore' }).status === 0 ? false : 'prlimit (util-linux) is not installed';

it('1,100 idle control connections under --nofile=1024 neither block a revert nor flood alerts or the log', { skip: noPrlimit, timeout: 120_000 }, async () => {
  const t = makeRoot();
  roots.push(t);
  assert.equal(cli(t, ['init']).code, 0);
  const proc = spawn('prlimit', ['--nofile=1024:1024', process.execPath, CLI, 'run', '--guard', '--root', t.root], { env: t.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d) => { out += String(d); });
  proc.stderr.on('data', (d) => { err += String(d); });
  const exited = new Promise<number | null>((r) => proc.once('exit', (c) => r(c)));
  const socks: Socket[] = [];
  try {
    await waitFor(() => out.includes('ready\n') || proc.exitCode !== null, 30_000, 'daemon ready');
    assert.ok(out.includes('ready\n'), err);
    const errBefore = err.split('\n').length;
    // 1,100 clients connect and say nothing.
    let settled = 0;
    for (let i = 0; i < 1100; i++) {
      const s = connect(t.p('snapshots/control/warden.sock'));
      s.on('error', () => {});
      s.once('connect', () => { settled++; });
      s.once('close', () => { settled++; });
      socks.push(s);
    }
    await waitFor(() => settled >= 1100, 30_000, 'every connection accepted or refused');
    // The guard still has descriptors: a tamper is reverted, once, promptly.
    const approved = readFileSync(t.p(ORG), 'utf8');
    writeFileSync(t.p(ORG), 'members = ["666"]\n');
    await waitFor(() => readFileSync(t.p(ORG), 'utf8') === approved, 20_000, 'the revert');
    await waitFor(() => readAlertsOf(t).some((a) => a.path === ORG), 20_000, 'the alert');
    const alerts = readAlertsOf(t);
    // One write can be seen as "emptied" then "content": at most one alert per step, all
    // about the tampered file; none about the watcher or anything else.
    assert.ok(alerts.length >= 1 && alerts.length <= 2 && alerts.every((a) => a.path === ORG), JSON.stringify(alerts.map((a) => [a.path, a.reason])));
    // A command is served again once the idle clients are cut off (10 s), while they stay connected.
    const status = await waitFor(() => { const r = cli(t, ['status', '--json']); return r.code === 0 && (JSON.parse(r.stdout) as { daemon: { running: boolean } }).daemon.running ? r : null; }, 60_000, 'status sees the daemon');
    assert.ok(status);
    const newLines = err.split('\n').slice(errBefore - 1).filter(Boolean);
    assert.ok(newLines.length <= 10, `the daemon logged ${newLines.length} lines:\n${newLines.slice(0, 20).join('\n')}`);
    assert.ok(newLines.some((l) => /control socket: more than \d+ connections/.test(l)), newLines.join('\n'));
  } finally {
    for (const s of socks) s.destroy();
    if (proc.exitCode === null) proc.kill('SIGTERM');
    await exited;
  }
});
