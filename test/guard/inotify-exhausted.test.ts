/**
 * The real daemon when inotify is exhausted: before the first watch, by a flood of watcher
 * errors, or for real (every instance of the user taken): one alert, polling, reverts go on,
 * and inotify comes back when it can.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { cli, protectedPicture, readAlertsOf, waitFor, TEST_WARDEN_TOML } from '../helpers/root.js';
import { own } from '../helpers/children.js';
import { cleanups, daemon, fresh, freshAsUser } from '../helpers/fresh-guard.js';

const ORG = 'orgs/bookclub.toml';
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

describe('exhausted kernel resources', () => {
  it('inotify exhausted before the first watch is armed: watch-degraded once, polling, reverts', async () => {
    const t = fresh();
    const d = await daemon(t, { WARDEN_TEST_WATCH_FAULT: 'ENOSPC:early' });
    await waitFor(() => readAlertsOf(t).some((a) => a.reason === 'watch-degraded'), 10_000, 'degraded alert');
    await waitFor(() => JSON.parse(cli(t, ['status', '--json']).stdout).daemon.polling === true, 10_000, 'status shows polling');
    const approved = protectedPicture(t);
    writeFileSync(t.p(ORG), 'members = ["polled"]\n');
    await waitFor(() => same(protectedPicture(t), approved), 10_000, 'reverted while polling');
    assert.equal(readAlertsOf(t).filter((a) => a.reason === 'watch-degraded').length, 1);
    assert.equal(d.proc.exitCode, null);
  });

  it('a flood of watcher errors (EMFILE) is one alert and a bounded number of log lines', async () => {
    const t = fresh();
    const d = await daemon(t, { WARDEN_TEST_WATCH_FAULT: 'EMFILE:flood' });
    await waitFor(() => readAlertsOf(t).some((a) => a.reason === 'watch-degraded'), 10_000, 'degraded alert');
    await waitFor(() => JSON.parse(cli(t, ['status', '--json']).stdout).daemon.polling === true, 10_000, 'status shows polling');
    const approved = protectedPicture(t);
    writeFileSync(t.p(ORG), 'members = ["flood"]\n');
    await waitFor(() => same(protectedPicture(t), approved), 10_000, 'reverted during the flood');
    assert.equal(readAlertsOf(t).filter((a) => a.reason === 'watch-degraded').length, 1, 'one watch-degraded alert');
    const lines = d.stderr().split('\n').length;
    assert.ok(lines < 600, `stderr stays bounded (${lines} lines for 20,000 errors)`);
  });

  it('for real: a user whose inotify instances are all taken gets polling and an alert, then inotify back', async () => {
    // The limit is per user: a throwaway user's filler takes all of its inotify instances
    // (max_user_instances), so nobody else on this machine is starved.
    const { t, u } = freshAsUser(1);
    const filler = own(spawn('python3', ['-c', [
      'import ctypes, sys, time', 'libc = ctypes.CDLL(None)',
      'fds = [libc.inotify_init() for _ in range(100000)]', 'print(sum(1 for f in fds if f >= 0), flush=True)', 'time.sleep(120)',
    ].join('\n')], { uid: u.uid, gid: u.gid, stdio: ['ignore', 'pipe', 'inherit'] }), 'the inotify filler');
    cleanups.push(() => { if (filler.exitCode === null) filler.kill('SIGKILL'); });
    let held = '';
    filler.stdout!.on('data', (b) => { held += String(b); });
    await waitFor(() => held.includes('\n'), 10_000, 'the filler holds every inotify instance');
    assert.ok(Number(held) > 0);
    const d = await u.daemon();
    await waitFor(() => readAlertsOf(t).some((a) => a.reason === 'watch-degraded'), 10_000, 'degraded alert');
    assert.equal(JSON.parse(u.cli(['status', '--json']).stdout).daemon.polling, true);
    const approved = readFileSync(t.p(ORG), 'utf8');
    writeFileSync(t.p(ORG), 'members = ["exhausted"]\n');
    await waitFor(() => readFileSync(t.p(ORG), 'utf8') === approved, 10_000, 'reverted while polling');
    filler.kill('SIGKILL');
    await waitFor(() => JSON.parse(u.cli(['status', '--json']).stdout).daemon.polling === false, 20_000, 'back on inotify');
    assert.equal(readAlertsOf(t).filter((a) => a.reason === 'watch-degraded').length, 1);
    assert.equal(d.proc.exitCode, null);
  });

  it('returns to inotify when it can', async () => {
    const t = fresh(TEST_WARDEN_TOML.replace('rescan_seconds = 30', 'rescan_seconds = 1'));
    await daemon(t, { WARDEN_TEST_WATCH_FAULT: 'ENOSPC' });
    await waitFor(() => readAlertsOf(t).some((a) => a.reason === 'watch-degraded'), 10_000, 'degraded alert');
    await waitFor(() => JSON.parse(cli(t, ['status', '--json']).stdout).daemon.polling === false, 15_000, 'back on inotify');
    const approved = protectedPicture(t);
    writeFileSync(t.p(ORG), 'members = ["back"]\n');
    await waitFor(() => same(protectedPicture(t), approved), 10_000, 'reverted after the return');
  });
});

