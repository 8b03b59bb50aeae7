/** Start, stop, crash, restart, tamper, and the bad inputs of the guard core. */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { parseBody, serializeBody } from '../../src/store/baseline.js';
import {
  cli, makeRoot, protectedPicture, readAlertsOf, testWorld, treeSnapshot, waitFor, TEST_WARDEN_TOML,
  type Daemon, type TestRoot,
} from '../helpers/root.js';

const ORG = 'orgs/bookclub.toml';
const world = testWorld();
/** The seal files beneath a state directory (keys/<root id>.seal). */
function findSeals(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((n) => n.endsWith('.seal')).map((n) => join(dir, n));
}
const fresh = (wardenToml?: string): TestRoot => world.root(wardenToml ? { wardenToml } : {});
const daemon = (t: TestRoot, args?: string[], env?: NodeJS.ProcessEnv): Promise<Daemon> => world.daemon(t, args, env);
afterEach(() => world.cleanup());

describe('startup and restart', () => {
  it('kill -9, an edit while stopped, then a restart reverts it as changed-while-stopped', async () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    const approved = protectedPicture(t);
    const d = await daemon(t);
    await d.kill9();
    appendFileSync(t.p(ORG), 'hourly_cap = 1\n');
    rmSync(t.p('config/guests.toml'));
    writeFileSync(t.p('orgs/sneaky.toml'), 'members = []\n');
    await daemon(t);
    // `ready` is printed only after startup verification: no waiting needed.
    assert.deepEqual(protectedPicture(t), approved);
    const alerts = readAlertsOf(t);
    for (const [path, also] of [[ORG, 'content'], ['config/guests.toml', 'deleted'], ['orgs/sneaky.toml', 'unexpected-file']] as const) {
      const a = alerts.find((x) => x.path === path);
      assert.ok(a, `alert for ${path}`);
      assert.equal(a.reason, 'changed-while-stopped');
      assert.equal(a.also?.[0], also);
    }
  });

  it("a protected path's missing parent planted as a symlink to outside is never followed by the guard's own pass", async () => {
    // plugins/ does not exist at init, so it is no protected directory the repair pass puts
    // right: only the walk's O_NOFOLLOW keeps the startup sweep from entering the link.
    const t = fresh(TEST_WARDEN_TOML + '\n[[protect]]\npath = "plugins/extra/settings.toml"\n');
    assert.equal(cli(t, ['init']).code, 0);
    mkdirSync(join(t.outside, 'fake', 'extra'), { recursive: true });
    writeFileSync(join(t.outside, 'fake', 'extra', 'settings.toml'), 'planted = 1\n');
    const outsideBefore = treeSnapshot(t.outside);
    symlinkSync(join(t.outside, 'fake'), t.p('plugins'));
    const d = await daemon(t);
    // `ready` comes after the startup sweep.
    assert.deepEqual(treeSnapshot(t.outside), outsideBefore, 'nothing outside the root was read as protected, moved or written');
    assert.deepEqual(readAlertsOf(t).filter((a) => a.path.startsWith('plugins/')), [], 'no alert for a file that is not beneath the root');
    assert.equal(d.proc.exitCode, null);
  });

  it('a stale lock left by kill -9 does not stop the next start', async () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    const d = await daemon(t);
    await d.kill9();
    assert.ok(existsSync(t.p('snapshots/control/warden.lock')));
    await daemon(t);
  });

  it('SIGTERM stops within 2 s and removes the lock and socket', async () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    const d = await daemon(t);
    const started = Date.now();
    const code = await d.stop();
    assert.ok(Date.now() - started < 2000, 'stopped within 2 s');
    assert.equal(code, 0);
    assert.ok(!existsSync(t.p('snapshots/control/warden.lock')));
    assert.ok(!existsSync(t.p('snapshots/control/warden.sock')));
  });

  it('run --init-if-needed takes the first baseline, as npm start does', async () => {
    const t = fresh();
    await daemon(t, ['--guard', '--init-if-needed']);
    assert.equal(cli(t, ['verify']).code, 0);
    assert.equal(cli(t, ['status', '--json']).code, 0);
  });

  it('status --json says the daemon runs and shows each file', async () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    await daemon(t);
    const s = JSON.parse(cli(t, ['status', '--json']).stdout);
    assert.equal(s.daemon.running, true);
    assert.ok(s.files.some((f: { path: string; state: string }) => f.path === ORG && f.state === 'ok'));
    assert.ok(s.warnings.some((w: string) => w.includes('approval = "none"')));
  });
});

describe('the store is tamper-evident', () => {
  it('an edited index raises baseline-tampered, is written back, and guarding goes on', async () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    const approved = protectedPicture(t);
    const before = readFileSync(t.p('snapshots/baseline/index'));
    await daemon(t);
    // Make the attacker's file look approved: swap its hash into the index.
    writeFileSync(t.p(ORG), 'members = ["evil"]\n');
    await waitFor(() => readAlertsOf(t).some((a) => a.path === ORG), 10_000, 'first revert');
    const nl0 = before.indexOf(0x0a);
    const edit = parseBody(before.subarray(nl0 + 1));
    edit.files['orgs/bookclub.toml']!.sha256 = '0'.repeat(64);
    const forged = Buffer.concat([before.subarray(0, nl0 + 1), serializeBody(edit)]);
    writeFileSync(t.p('snapshots/baseline/index'), forged);
    await waitFor(() => readAlertsOf(t).some((a) => a.reason === 'baseline-tampered'), 10_000, 'tamper alert');
    await waitFor(() => readFileSync(t.p('snapshots/baseline/index')).equals(before), 10_000, 'index written back');
    writeFileSync(t.p(ORG), 'members = ["evil-again"]\n');
    await waitFor(() => JSON.stringify(protectedPicture(t)) === JSON.stringify(approved), 10_000, 'still guarding with the held baseline');
  });

  it('an altered blob is detected and repaired from the live file that still has the approved content', async () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    await daemon(t);
    const blob = readdirSync(t.p('snapshots/blobs'))[0]!;
    const original = readFileSync(t.p(`snapshots/blobs/${blob}`));
    writeFileSync(t.p(`snapshots/blobs/${blob}`), 'forged');
    await waitFor(() => readAlertsOf(t).some((a) => a.reason === 'baseline-tampered' && a.path.endsWith(blob)), 10_000, 'blob tamper alert');
    await waitFor(() => readFileSync(t.p(`snapshots/blobs/${blob}`)).equals(original), 10_000, 'blob repaired');
    // Approved bytes are not held in memory: the repair names the live file it came from.
    const a = readAlertsOf(t).find((x) => x.reason === 'baseline-tampered' && x.path.endsWith(blob));
    assert.match(a?.detail ?? '', /written back from \S+, which still has the approved content/);
  });

  it('an older, authentic index copied back is refused at the next start (the seal)', async () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    const old = readFileSync(t.p('snapshots/baseline/index'));
    const next = readFileSync(t.p(ORG), 'utf8').replace('hourly_cap = 20', 'hourly_cap = 21');
    assert.equal(cli(t, ['apply', ORG, '--from', '-'], { input: next }).code, 0);
    writeFileSync(t.p('snapshots/baseline/index'), old);
    const run = cli(t, ['run', '--guard']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /baseline-tampered: .*not the latest approved one/);
    assert.ok(readAlertsOf(t).some((a) => a.reason === 'baseline-tampered'));
    assert.equal(cli(t, ['verify']).code, 2);
  });

  it('a deleted index is tampering, not "no baseline yet": npm start does not re-adopt the disk', async () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    rmSync(t.p('snapshots/baseline'), { recursive: true });
    appendFileSync(t.p(ORG), 'hourly_cap = 1000\n');
    const run = cli(t, ['run', '--guard', '--init-if-needed']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /baseline-tampered: .*removed/);
    assert.ok(!existsSync(t.p('snapshots/baseline/index')), 'did not re-baseline the edited files');
  });

  it('a tampered index at start fails closed (exit 2) and leaves an alert', async () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    appendFileSync(t.p('snapshots/baseline/index'), ' ');
    const run = cli(t, ['run', '--guard']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /baseline-tampered/);
    assert.ok(readAlertsOf(t).some((a) => a.reason === 'baseline-tampered'));
    assert.equal(cli(t, ['verify']).code, 2);
  });

  it('a forged index with the seal removed is refused for its HMAC (the seal is not the only check)', async () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    // The attacker edits a policy file and rewrites the index body to approve it, keeping the
    // old header (they cannot compute the HMAC without the key), then removes the seal so only
    // the HMAC stands between the forgery and adoption.
    const edited = readFileSync(t.p(ORG), 'utf8').replace('hourly_cap = 20', 'hourly_cap = 99');
    writeFileSync(t.p(ORG), edited);
    const raw = readFileSync(t.p('snapshots/baseline/index'));
    const nl = raw.indexOf(0x0a);
    const body = parseBody(raw.subarray(nl + 1));
    body.files[ORG]!.sha256 = createHash('sha256').update(edited).digest('hex');
    body.files[ORG]!.size = Buffer.byteLength(edited);
    writeFileSync(t.p('snapshots/baseline/index'), Buffer.concat([raw.subarray(0, nl + 1), serializeBody(body)]));
    const seals = findSeals(join(t.base, 'state'));
    assert.equal(seals.length, 1, 'one seal for this root');
    rmSync(seals[0]!);
    const v = cli(t, ['verify']);
    assert.equal(v.code, 2, `verify refuses the forged index: ${v.stdout}${v.stderr}`);
    assert.match(v.stdout + v.stderr, /baseline-tampered: baseline\/index cannot be trusted \(index HMAC does not match\)/);
    const run = cli(t, ['run', '--guard']);
    assert.equal(run.code, 2);
    assert.match(run.stderr, /baseline-tampered: baseline\/index cannot be trusted \(index HMAC does not match\)/);
    assert.equal(readFileSync(t.p(ORG), 'utf8'), edited, 'nothing was restored from a forged baseline');
  });
});

describe('bad input', () => {
  it('malformed warden.toml: exit 2 naming file, line and column, nothing created', () => {
    const t = fresh('approval = "tty"\nrescan_seconds = \n');
    const r = cli(t, ['init']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /config\/warden\.toml:2:\d+/);
    assert.ok(!existsSync(t.p('snapshots/baseline')));
  });

  it('an unknown key in warden.toml is named with its line', () => {
    const t = fresh(TEST_WARDEN_TOML + '\n[notify]\nmin_interval_seconds = 1\nbogus = true\n');
    const r = cli(t, ['init']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /config\/warden\.toml:\d+:\d+: \[notify\.bogus\] unknown key "bogus"/);
  });

  it('a missing root is exit 2', () => {
    const t = fresh();
    const x = cli({ ...t, root: join(t.base, 'does-not-exist') }, ['verify']);
    assert.equal(x.code, 2);
    assert.match(x.stderr, /does not exist/);
  });

  it('no baseline yet: verify and status say so (exit 2); run says so and exits 78, which the unit does not restart', () => {
    const t = fresh();
    for (const args of [['verify'], ['run', '--guard'], ['status']]) {
      const r = cli(t, args);
      assert.equal(r.code, args[0] === 'run' ? 78 : 2, args.join(' '));
      assert.match(r.stderr, /no baseline yet|warden init/);
    }
  });

  it('a protected path that is not a regular file at init: exit 2, nothing changed', () => {
    const t = fresh();
    rmSync(t.p('config/guests.toml'));
    execFileSync('mkfifo', [t.p('config/guests.toml')]);
    const before = treeSnapshot(t.root);
    const r = cli(t, ['init']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /config\/guests\.toml is a fifo, not a regular file/);
    assert.deepEqual(treeSnapshot(t.root), before);
  });

  it('init refuses to replace a baseline without --force', () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    const r = cli(t, ['init']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /already exists/);
    assert.equal(cli(t, ['init', '--force']).code, 0);
  });

  it('unknown flags and commands are usage errors', () => {
    const t = fresh();
    assert.equal(cli(t, ['verify', '--bogus']).code, 2);
    assert.equal(cli(t, ['frobnicate']).code, 2);
  });
});

describe('verify', () => {
  it('is clean (0), then lists drift (1) without changing anything', () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    assert.equal(cli(t, ['verify']).code, 0);
    appendFileSync(t.p(ORG), '#');
    rmSync(t.p('config/guests.toml'));
    const before = treeSnapshot(t.root);
    const r = cli(t, ['verify', '--json']);
    assert.equal(r.code, 1);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out.drift.map((x: { path: string; reason: string }) => `${x.path}:${x.reason}`).sort(), ['config/guests.toml:deleted', `${ORG}:content`]);
    assert.deepEqual(treeSnapshot(t.root), before, 'verify changed nothing');
  });
});

describe('apply (minimal sanctioned change)', () => {
  it('installs through the daemon; later direct edits revert to the new version', async () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    await daemon(t);
    const next = readFileSync(t.p(ORG), 'utf8').replace('hourly_cap = 20', 'hourly_cap = 30');
    const r = cli(t, ['apply', ORG, '--from', '-'], { input: next });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(t.p(ORG), 'utf8'), next);
    writeFileSync(t.p(ORG), 'members = []\n');
    await waitFor(() => readFileSync(t.p(ORG), 'utf8') === next, 10_000, 'revert to the applied version');
    const hist = cli(t, ['history', ORG]).stdout;
    assert.match(hist, /apply orgs\/bookclub\.toml/);
  });

  it('refuses invalid TOML with file:line:column and changes nothing', async () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    const before = readFileSync(t.p(ORG));
    const r = cli(t, ['apply', ORG, '--from', '-'], { input: 'members = [\n' });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /orgs\/bookclub\.toml:\d+:\d+/);
    assert.ok(readFileSync(t.p(ORG)).equals(before));
    assert.equal(cli(t, ['verify']).code, 0);
  });

  it('works under the lock when the daemon is down; the next start keeps it', async () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    const next = readFileSync(t.p(ORG), 'utf8').replace('hourly_cap = 20', 'hourly_cap = 25');
    assert.equal(cli(t, ['apply', ORG, '--from', '-'], { input: next }).code, 0);
    await daemon(t);
    assert.equal(readFileSync(t.p(ORG), 'utf8'), next);
    assert.equal(readAlertsOf(t).length, 0);
  });
});

describe('restore failures', () => {
  it('a directory made immutable: revert-failed, file left intact, retried until it works', async (ctx) => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    try { execFileSync('chattr', ['+i', t.p('orgs')], { stdio: 'ignore' }); execFileSync('chattr', ['-i', t.p('orgs')], { stdio: 'ignore' }); }
    catch { ctx.skip('chattr +i is not available here'); return; }
    await daemon(t);
    const approved = protectedPicture(t);
    // Lock the directory (no entry can be created, so no temp file), then edit in place.
    execFileSync('chattr', ['+i', t.p('orgs')]);
    writeFileSync(t.p(ORG), 'members = ["stuck"]\n');
    try {
      await waitFor(() => readAlertsOf(t).some((a) => a.action === 'revert-failed'), 10_000, 'revert-failed');
      assert.equal(readFileSync(t.p(ORG), 'utf8'), 'members = ["stuck"]\n', 'never truncated or half-written');
    } finally {
      execFileSync('chattr', ['-i', t.p('orgs')]);
    }
    await waitFor(() => JSON.stringify(protectedPicture(t)) === JSON.stringify(approved), 15_000, 'retry succeeded');
    await waitFor(() => readAlertsOf(t).some((a) => a.action === 'reverted' && a.path === ORG), 10_000, 'the reverted alert follows the restore');
  });

  // KNOWN BUG, open (found when this session's lanes were merged): on a full tmpfs holding the
  // root and its embedded store, the in-place revert lands but its alert is never written, not
  // even once there is room (alerts.jsonl stays empty; the only stderr line is "could not keep
  // rejected content … ENOSPC"). Marked todo so the report keeps showing it; it must fail until fixed.
  it('disk full (store on the same full file system): the revert still lands in place, the alert names the full disk once it can be written (docs/CONTRACT.md §Revert)', async (ctx) => {
    const base = join(makeRoot().base);
    const mnt = join(base, 'mnt');
    mkdirSync(mnt);
    try { execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', mnt], { stdio: 'ignore' }); }
    catch { rmSync(base, { recursive: true, force: true }); ctx.skip('cannot mount a tmpfs here'); return; }
    try {
      const t = makeRoot({ base: mnt });
      t.env.XDG_STATE_HOME = join(base, 'state');
      assert.equal(cli(t, ['init']).code, 0);
      const approved = protectedPicture(t);
      const d = await daemon(t);
      const size = statSync(t.p(ORG)).size;
      try { execFileSync('dd', ['if=/dev/zero', `of=${join(mnt, 'filler')}`, 'bs=4k', 'status=none'], { stdio: 'ignore' }); } catch { /* ENOSPC expected */ }
      // Overwrite in place (no truncation, no new blocks): the edit lands; no temp file can be
      // made, so the approved bytes go back over the rejected file's own blocks.
      const fd = openSync(t.p(ORG), 'r+');
      writeSync(fd, 'y'.repeat(size), 0);
      closeSync(fd);
      await waitFor(() => JSON.stringify(protectedPicture(t)) === JSON.stringify(approved), 5_000, 'reverted while the disk is still full');
      assert.ok(existsSync(join(mnt, 'filler')), 'the disk was still full');
      rmSync(join(mnt, 'filler'));
      // Within seconds, not at the next rescan (rescan_seconds = 30): alerts kept in memory are retried every second.
      await waitFor(() => readAlertsOf(t).some((a) => a.path === ORG && a.action === 'reverted' && /full \(ENOSPC\)/.test(a.detail ?? '')), 8_000, 'the alert, naming the full disk, made it to disk once there was room').catch((err: unknown) => { throw new Error(`${String(err)}; alerts: ${JSON.stringify(readAlertsOf(t).map((a) => [a.path, a.action, a.reason, a.detail]))}; stderr: ${d.stderr().slice(-6000)}`); });
      assert.equal(JSON.stringify(protectedPicture(t)), JSON.stringify(approved));
      await d.stop();
    } finally {
      spawnSync('umount', ['-l', mnt]);
      rmSync(base, { recursive: true, force: true });
    }
  });
});

describe('watcher resilience', () => {
  it('inotify limit reached: falls back to polling, raises an alert, keeps reverting', async () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    const approved = protectedPicture(t);
    await daemon(t, ['--guard'], { WARDEN_TEST_WATCH_FAULT: 'ENOSPC' });
    await waitFor(() => readAlertsOf(t).some((a) => a.reason === 'watch-degraded' && a.action === 'flagged' && /polling/.test(a.detail ?? '')), 10_000, 'degraded alert');
    await waitFor(() => JSON.parse(cli(t, ['status', '--json']).stdout).daemon.polling === true, 10_000, 'status shows polling');
    writeFileSync(t.p(ORG), 'members = ["polled"]\n');
    await waitFor(() => JSON.stringify(protectedPicture(t)) === JSON.stringify(approved), 10_000, 'reverted while polling');
  });

  it('while polling, an edit that keeps inode and size and puts mtime back (no watch event) is caught by the rescan', async () => {
    // Polling starts at once (inotify fails before its first watch); inotify is tried again only
    // on the rescan timer, 10 s later, so the edit below happens while only the poller watches.
    const t = fresh(TEST_WARDEN_TOML.replace('rescan_seconds = 30', 'rescan_seconds = 10'));
    assert.equal(cli(t, ['init']).code, 0);
    const approved = protectedPicture(t);
    const d = await daemon(t, ['--guard'], { WARDEN_TEST_WATCH_FAULT: 'ENOSPC:early' });
    await waitFor(() => readAlertsOf(t).some((a) => a.reason === 'watch-degraded'), 10_000, 'degraded alert');
    const before = statSync(t.p(ORG), { bigint: true });
    const old = readFileSync(t.p(ORG), 'utf8');
    const edited = old.replace('hourly_cap = 20', 'hourly_cap = 99');
    assert.equal(Buffer.byteLength(edited), Buffer.byteLength(old));
    assert.doesNotMatch(d.stderr(), /inotify works again/, 'still polling before the edit');
    // In place (same inode), same size, then mtime put back to the nanosecond with atime later than
    // it: the poller sees no change (chokidar compares size and mtime), only ctime moved.
    const py = 'import os,sys\nfd=os.open(sys.argv[1],os.O_WRONLY)\nst=os.fstat(fd)\nos.pwrite(fd,sys.argv[2].encode(),0)\nos.utime(fd,ns=(st.st_mtime_ns+10**9,st.st_mtime_ns))\nos.close(fd)\n';
    const r = spawnSync('python3', ['-c', py, t.p(ORG), edited], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const after = statSync(t.p(ORG), { bigint: true });
    assert.deepEqual([after.ino, after.size, after.mtimeNs], [before.ino, before.size, before.mtimeNs], 'inode, size and mtime as before');
    assert.notEqual(after.ctimeNs, before.ctimeNs, 'only ctime tells');
    assert.equal(readFileSync(t.p(ORG), 'utf8'), edited, 'the edit is in place');
    await waitFor(() => JSON.stringify(protectedPicture(t)) === JSON.stringify(approved), 40_000, 'the rescan to revert the edit');
    await waitFor(() => readAlertsOf(t).some((a) => a.path === ORG && a.action === 'reverted'), 10_000, 'the revert alert');
  });

  it('a protected directory recreated is watched again', async () => {
    const t = fresh();
    assert.equal(cli(t, ['init']).code, 0);
    const approved = protectedPicture(t);
    await daemon(t);
    // warden may put a file back while rm -rf is still deleting (ENOTEMPTY): try until the directory went.
    for (let k = 0; ; k++) {
      try { rmSync(t.p('orgs'), { recursive: true, force: true }); break; }
      catch (err) { if ((err as NodeJS.ErrnoException).code !== 'ENOTEMPTY' || k > 50) throw err; }
    }
    await waitFor(() => JSON.stringify(protectedPicture(t)) === JSON.stringify(approved), 10_000, 'orgs restored');
    for (let i = 0; i < 3; i++) {
      writeFileSync(t.p(ORG), `members = ["round-${i}"]\n`);
      await waitFor(() => JSON.stringify(protectedPicture(t)) === JSON.stringify(approved), 5_000, `revert in the recreated directory, round ${i}`);
    }
  });
});
