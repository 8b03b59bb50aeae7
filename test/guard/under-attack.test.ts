/**
 * The guard under attack. Each test reproduces one finding of a red-team run
 * against the real daemon: hostile names, a failing stderr, an exhausted inotify, late
 * writes, storms and floods. Bounded so the suite stays fast; the heavy variants with
 * numbers are in bench/storm.ts.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync, closeSync, existsSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, readdirSync, readlinkSync, renameSync, rmSync,
  statSync, writeFileSync, writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import {
  CLI, cli, makeRoot, protectedPicture, readAlertsOf, startDaemon, waitFor, TEST_WARDEN_TOML,
  type Daemon, type TestRoot,
} from '../helpers/root.js';
import { cleanupAll, killOwned, own } from '../helpers/children.js';
import { parseBody } from '../../src/store/baseline.js';
import { readableCli } from '../helpers/readable-copy.js';

const ORG = 'orgs/bookclub.toml';
const roots: TestRoot[] = [];
const daemons: Daemon[] = [];
const cleanups: (() => void)[] = [];

function fresh(wardenToml = TEST_WARDEN_TOML.replace('rescan_seconds = 30', 'rescan_seconds = 5')): TestRoot {
  const t = makeRoot({ wardenToml });
  roots.push(t);
  assert.equal(cli(t, ['init']).code, 0);
  return t;
}
async function daemon(t: TestRoot, env?: NodeJS.ProcessEnv): Promise<Daemon> {
  const d = await startDaemon(t, ['--guard'], env);
  daemons.push(d);
  return d;
}
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

// Every step runs whatever the others did: a daemon that will not stop must not skip a userdel.
afterEach(() => cleanupAll([
  ...daemons.splice(0).map((d) => () => d.stopWithin(10_000)),
  () => killOwned(),
  ...cleanups.splice(0),
  ...roots.splice(0).map((t) => () => t.cleanup()),
]));

describe('hostile names', () => {
  it('a name with a newline cannot forge a journal line', async () => {
    const t = fresh();
    const d = await daemon(t);
    const name = 'orgs/x\n<6>warden: all protected files verified clean x.toml';
    writeFileSync(t.p(name), 'members = []\n');
    await waitFor(() => readAlertsOf(t).some((a) => a.reason === 'unexpected-file' && a.path === name) && !existsSync(t.p(name)), 10_000, 'removal');
    await waitFor(() => d.stderr().includes('unexpected-file'), 5_000, 'journal line');
    const lines = d.stderr().split('\n');
    assert.ok(!lines.some((l) => l.startsWith('<6>warden: all protected')), 'no forged line');
    assert.ok(lines.some((l) => l.includes('x\\n<6>warden: all protected')), 'the name is shown escaped');
  });

  it('an ESC]52 clipboard write in a name never reaches the terminal (alerts, why)', async () => {
    const t = fresh();
    await daemon(t);
    const name = 'orgs/\u001b]52;c;ZXZpbA==\u0007.toml';
    writeFileSync(t.p(name), 'members = []\n');
    await waitFor(() => readAlertsOf(t).some((a) => a.path === name), 10_000, 'removal');
    for (const args of [['alerts'], ['why', 'orgs']]) {
      const r = cli(t, args);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout.includes('\\e]52;c;ZXZpbA==\\x07'), `${args[0]} shows the name escaped: ${r.stdout}`);
      assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(r.stdout), `${args[0]} prints no control character`);
    }
  });
});

describe('never killed by its own output', () => {
  async function stillReverts(t: TestRoot, proc: ReturnType<typeof spawn>): Promise<void> {
    const approved = protectedPicture(t);
    for (let i = 0; i < 5; i++) {
      writeFileSync(t.p(ORG), `members = ["out-${i}"]\n`);
      writeFileSync(t.p(`orgs/new-${i}.toml`), 'members = []\n');
      await waitFor(() => same(protectedPicture(t), approved), 10_000, `revert ${i}`);
      assert.equal(proc.exitCode, null, 'the guard is still running');
    }
    await waitFor(() => readAlertsOf(t).filter((a) => a.path.startsWith('orgs/new-')).length === 5, 10_000, 'every revert recorded');
    assert.equal(proc.exitCode, null, 'the guard is still running');
  }

  function spawnGuard(t: TestRoot, stderr: 'pipe' | number): ReturnType<typeof spawn> {
    const proc = own(spawn(process.execPath, [CLI, 'run', '--guard', '--root', t.root], { env: t.env, stdio: ['ignore', 'pipe', stderr] }), 'a child of this test');
    cleanups.push(() => { if (proc.exitCode === null) proc.kill('SIGKILL'); });
    return proc;
  }

  it('stderr to a closed pipe (EPIPE)', async () => {
    const t = fresh();
    const proc = spawnGuard(t, 'pipe');
    let out = '';
    proc.stdout!.on('data', (b) => { out += String(b); });
    proc.stderr!.destroy(); // the reader goes away: every write to stderr is EPIPE
    await waitFor(() => out.includes('ready\n'), 20_000, 'ready');
    await stillReverts(t, proc);
  });

  it('stderr to a full file system (ENOSPC)', async () => {
    const t = fresh();
    const full = openSync('/dev/full', 'w');
    const proc = spawnGuard(t, full);
    closeSync(full);
    let out = '';
    proc.stdout!.on('data', (b) => { out += String(b); });
    await waitFor(() => out.includes('ready\n'), 20_000, 'ready');
    await stillReverts(t, proc);
  });
});

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

describe('nothing lost', () => {
  it('100 truncate-then-write edits, some in pieces: every marker is in quarantine', async () => {
    const t = fresh();
    await daemon(t);
    const approved = protectedPicture(t);
    const markers: string[] = [];
    for (let i = 0; i < 100; i++) {
      const marker = `marker-${i}-${Math.random().toString(36).slice(2)}`;
      markers.push(marker);
      const fd = openSync(t.p(ORG), 'w'); // O_TRUNC: the file is empty from here
      sleep(i % 2 ? 15 : 3); // long enough for the revert of the emptied file to win the race
      const text = `members = ["${marker}"]\n`;
      const pieces = i % 3 === 0 ? [text] : i % 3 === 1 ? [text.slice(0, 9), text.slice(9)] : [text.slice(0, 5), text.slice(5, 14), text.slice(14)];
      for (const [k, piece] of pieces.entries()) { if (k) sleep(4); writeSync(fd, piece); }
      closeSync(fd);
      await waitFor(() => same(protectedPicture(t), approved), 10_000, `edit ${i} reverted`);
    }
    // The late bytes went into the rejected inode, which quarantine holds.
    const kept = readdirSync(t.p('snapshots/quarantine')).flatMap((id) => (lstatSync(t.p(`snapshots/quarantine/${id}`)).isFile() ? [readFileSync(t.p(`snapshots/quarantine/${id}`), 'utf8')] : readdirSync(t.p(`snapshots/quarantine/${id}`)).map((n) => readFileSync(t.p(`snapshots/quarantine/${id}/${n}`), 'utf8')))).join('\n');
    const lost = markers.filter((m) => !kept.includes(m));
    assert.deepEqual(lost, [], `${lost.length} of 100 markers lost`);
  });

  it('every quarantine folder is 0700; every file kept is 0600 and shares no inode with a path the attacker holds; a directory is kept as it was', async () => {
    const t = fresh();
    await daemon(t);
    const approved = protectedPicture(t);
    // An unexpected file, a directory with a file in it, a FIFO; all world-readable.
    writeFileSync(t.p('orgs/extra.toml'), 'members = []\n', { mode: 0o644 });
    mkdirSync(t.p('orgs/dir.toml'), { mode: 0o755 });
    writeFileSync(t.p('orgs/dir.toml/inner'), 'x', { mode: 0o644 });
    // A too-large credential file, 0644, with a hard link the attacker keeps.
    const big = t.p('config/credentials.toml.partial');
    writeFileSync(big, Buffer.alloc(2 * 1024 * 1024, 0x41), { mode: 0o644 });
    chmodSync(big, 0o644);
    const alias = join(t.base, 'held-link');
    linkSync(big, alias);
    renameSync(big, t.p('config/credentials.toml'));
    await waitFor(() => same(protectedPicture(t), approved) && readAlertsOf(t).some((a) => a.path === 'config/credentials.toml' && a.quarantine)
      && ['orgs/extra.toml', 'orgs/dir.toml'].every((p) => readAlertsOf(t).some((a) => a.path === p && a.quarantine)), 10_000, 'reverts');
    const heldIno = statSync(alias).ino;
    // A directory is not warden's to change (docs/ARCHITECTURE.md, invariant 19): moved whole,
    // its mode and its file's as they were; the 0700 folder around it keeps everyone else out.
    const dirKept = readAlertsOf(t).find((a) => a.path === 'orgs/dir.toml' && a.quarantine)!.quarantine!;
    assert.equal(lstatSync(t.p(dirKept)).mode & 0o777, 0o755, 'the directory keeps its mode');
    assert.equal(lstatSync(t.p(`${dirKept}/inner`)).mode & 0o777, 0o644, 'and so does the file in it');
    assert.equal(readFileSync(t.p(`${dirKept}/inner`), 'utf8'), 'x');
    const walk = (rel: string): void => {
      const st = lstatSync(t.p(rel));
      if (st.isSymbolicLink() || rel === dirKept) return;
      if (st.isDirectory()) {
        assert.equal(st.mode & 0o777, 0o700, `${rel} is 0700`);
        for (const n of readdirSync(t.p(rel))) walk(`${rel}/${n}`);
        return;
      }
      assert.equal(st.mode & 0o777, 0o600, `${rel} is 0600`);
      assert.notEqual(st.ino, heldIno, `${rel} is not the inode the attacker holds`);
      assert.equal(st.nlink, 1, `${rel} has no other name`);
    };
    walk('snapshots/quarantine');
    const cred = readAlertsOf(t).find((a) => a.path === 'config/credentials.toml' && a.quarantine)!;
    assert.ok(statSync(t.p(cred.quarantine!)).size > 0, 'a bounded copy of the too-large file is kept');
  });
});

describe('priorities and bounds', () => {
  it('a revert of an approved file is not queued behind a storm of new files', async () => {
    const t = fresh();
    const d = await daemon(t);
    const orgApproved = readFileSync(t.p(ORG), 'utf8');
    // 3,000 new org files, then one real edit, all queued while the guard is stopped: when it
    // goes on, the kernel hands it the 3,000 creations first and the real edit last.
    d.proc.kill('SIGSTOP');
    try {
      for (let i = 0; i < 3000; i++) writeFileSync(t.p(`orgs/s${i}.toml`), 'members = []\n');
      writeFileSync(t.p(ORG), 'members = ["during-storm"]\n');
    } finally { d.proc.kill('SIGCONT'); }
    const storm = () => readdirSync(t.p('orgs')).filter((n) => /^s\d+\.toml$/.test(n)).length;
    let left = -1;
    await waitFor(() => { left = storm(); return readFileSync(t.p(ORG), 'utf8') === orgApproved; }, 60_000, 'the real edit reverted');
    assert.ok(left > 1500, `the real revert went first (${left} of 3,000 new files still waiting)`);
    await waitFor(() => storm() === 0, 120_000, 'storm removed');
    // Bounded: alerts fold, yet every removal is counted.
    const alerts = readAlertsOf(t).filter((a) => a.reason === 'unexpected-file');
    assert.ok(alerts.length < 600, `alerts fold (${alerts.length} lines for 3,000 removals)`);
    await waitFor(() => readAlertsOf(t).filter((a) => a.reason === 'unexpected-file').reduce((n, a) => n + (a.count ?? 1), 0) === 3000, 20_000, 'every removal counted');
    const q = readdirSync(t.p('snapshots/quarantine')).length;
    assert.ok(q <= 1100, `quarantine bounded (${q} entries)`);
    assert.ok(readAlertsOf(t).some((a) => /quarantine quota/.test(a.detail ?? '')), 'the overflow is recorded');
    assert.equal(d.proc.exitCode, null);
  });
});

/** A throwaway user who owns the root and runs warden: root bypasses every permission, the owner does not. */
function asUser(t: TestRoot): { uid: number; gid: number; cli(args: string[]): { code: number; stdout: string; stderr: string }; daemon(): Promise<Daemon> } {
  const name = `wt12${Math.random().toString(36).slice(2, 8)}`;
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
  cleanups.push(() => { spawnSync('userdel', [name]); });
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
  execFileSync('chown', ['-R', `${uid}:${gid}`, t.base]);
  const env = { ...t.env, HOME: t.base };
  return {
    uid, gid,
    cli(args) {
      const r = spawnSync(process.execPath, [readableCli(), ...args, '--root', t.root], { env, uid, gid, encoding: 'utf8', timeout: 60_000 });
      return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
    },
    async daemon() {
      const d = await startDaemon(t, ['--guard'], { HOME: t.base }, 20_000, { uid, gid });
      daemons.push(d);
      return d;
    },
  };
}

function freshAsUser(rescanSeconds = 5): { t: TestRoot; u: ReturnType<typeof asUser> } {
  const t = makeRoot({ wardenToml: TEST_WARDEN_TOML.replace('rescan_seconds = 30', `rescan_seconds = ${rescanSeconds}`) });
  roots.push(t);
  const u = asUser(t);
  const init = u.cli(['init']);
  assert.equal(init.code, 0, init.stderr);
  return { t, u };
}

describe('no blinding (the guard runs as the root\'s owner, not as root)', () => {
  it('chmod 0300 ROOT is put back, and an edit made meanwhile is reverted', async () => {
    const { t, u } = freshAsUser();
    const rootMode = statSync(t.root).mode & 0o7777;
    const org = readFileSync(t.p(ORG), 'utf8');
    await u.daemon();
    chmodSync(t.root, 0o300);
    writeFileSync(t.p(ORG), 'members = ["blinded"]\n');
    await waitFor(() => (statSync(t.root).mode & 0o7777) === rootMode && readFileSync(t.p(ORG), 'utf8') === org, 10_000, 'root mode and the file back');
    await waitFor(() => readAlertsOf(t).some((a) => a.path === '.' && a.reason === 'mode'), 5_000, 'an alert for the root');
  });

  it('chmod 0100 config is put back, and edits below it are reverted', async () => {
    const { t, u } = freshAsUser();
    const mode = statSync(t.p('config')).mode & 0o7777;
    const cond = readFileSync(t.p('config/conditions.toml'), 'utf8');
    await u.daemon();
    writeFileSync(t.p('config/conditions.toml'), '# blinded\n');
    chmodSync(t.p('config'), 0o100);
    await waitFor(() => (statSync(t.p('config')).mode & 0o7777) === mode && readFileSync(t.p('config/conditions.toml'), 'utf8') === cond, 10_000, 'config mode and the file back');
    assert.ok(readAlertsOf(t).some((a) => a.path === 'config' && a.reason === 'mode'));
  });

  it('verify and status report an unreadable root instead of crashing', () => {
    const { t, u } = freshAsUser();
    chmodSync(t.root, 0o300);
    try {
      for (const cmd of ['verify', 'status']) {
        const r = u.cli([cmd]);
        assert.ok(!/internal error|EACCES|at .*\.js:\d+/.test(r.stderr), `${cmd} does not crash: ${r.stderr}`);
        assert.equal(r.code, cmd === 'verify' ? 1 : r.code);
        assert.match(r.stdout, /DRIFT \.:? \(?mode/, `${cmd} names the root's mode`);
      }
    } finally { chmodSync(t.root, 0o755); }
  });
});

describe('no leak', () => {
  it('a text file later listed in credentials.files is re-stored as a credential: out of blobs/, out of git', async () => {
    const toml = TEST_WARDEN_TOML + '\n[[protect]]\npath = "config/api.toml"\n';
    const t = makeRoot({ wardenToml: toml });
    roots.push(t);
    const SECRET = 'first-secret-value-0123456789';
    writeFileSync(t.p('config/api.toml'), `[svc]\nkey = "${SECRET}"\n`);
    assert.equal(cli(t, ['init']).code, 0);
    const sha = createHash('sha256').update(readFileSync(t.p('config/api.toml'))).digest('hex');
    assert.ok(existsSync(t.p(`snapshots/blobs/${sha}`)), 'as text it is a blob (the finding)');
    const next = toml.replace('files = ["config/credentials.toml"]', 'files = ["config/credentials.toml", "config/api.toml"]')
      + '\n[credentials.groups.svc]\nkeys = ["key"]\n';
    writeFileSync(join(t.base, 'next.toml'), next);
    const r = cli(t, ['apply', 'config/warden.toml', '--from', join(t.base, 'next.toml')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr + r.stdout, /config\/api\.toml.*credential.*history/i, 'the owner is told its earlier history is in git');
    const raw = readFileSync(t.p('snapshots/baseline/index'));
    const index = parseBody(raw.subarray(raw.indexOf(0x0a) + 1));
    assert.equal(index.files['config/api.toml']?.kind, 'credentials');
    assert.ok(!existsSync(t.p(`snapshots/blobs/${sha}`)), 'out of blobs/');
    assert.ok(existsSync(t.p(`snapshots/secrets/${sha}`)), 'into secrets/');
    await waitFor(() => spawnSync('git', ['-C', t.p('snapshots/history'), 'ls-files'], { encoding: 'utf8' }).stdout.includes('config/api.toml.fingerprints'), 10_000, 'history commit');
    const tree = spawnSync('git', ['-C', t.p('snapshots/history'), 'show', 'HEAD:config/api.toml'], { encoding: 'utf8' });
    assert.notEqual(tree.status, 0, 'the plain copy is no longer in the current tree');
    // A later edit is treated as a credential change: keys and fingerprints only.
    const d = await daemon(t);
    const NEW = 'second-secret-value-9876543210';
    writeFileSync(t.p('config/api.toml.x'), `[svc]\nkey = "${NEW}"\n`);
    renameSync(t.p('config/api.toml.x'), t.p('config/api.toml'));
    await waitFor(() => readAlertsOf(t).some((a) => a.path === 'config/api.toml' && a.credential_changes?.length), 10_000, 'credential alert');
    assert.ok(!d.stderr().includes(NEW) && !readFileSync(t.p('snapshots/alerts.jsonl'), 'utf8').includes(NEW));
  });

  it('re-stored as a credential while another protected text file holds the same bytes: that file keeps its blob and is still reverted', async () => {
    const toml = TEST_WARDEN_TOML + '\n[[protect]]\npath = "config/api.toml"\n\n[[protect]]\npath = "config/api-copy.toml"\n';
    const t = makeRoot({ wardenToml: toml });
    roots.push(t);
    const body = '[svc]\nkey = "shared-bytes-0123456789"\n';
    writeFileSync(t.p('config/api.toml'), body);
    writeFileSync(t.p('config/api-copy.toml'), body);
    assert.equal(cli(t, ['init']).code, 0);
    const sha = createHash('sha256').update(body).digest('hex');
    const next = toml.replace('files = ["config/credentials.toml"]', 'files = ["config/credentials.toml", "config/api.toml"]')
      + '\n[credentials.groups.svc]\nkeys = ["key"]\n';
    writeFileSync(join(t.base, 'next.toml'), next);
    const r = cli(t, ['apply', 'config/warden.toml', '--from', join(t.base, 'next.toml')]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(t.p(`snapshots/blobs/${sha}`)), 'the blob stays: config/api-copy.toml is still text with these bytes');
    await daemon(t);
    writeFileSync(t.p('config/api-copy.toml'), '[svc]\nkey = "planted"\n');
    const a = await waitFor(() => readAlertsOf(t).find((x) => x.path === 'config/api-copy.toml'), 10_000, 'the revert of the copy');
    assert.equal(a.action, 'reverted', JSON.stringify(a));
    assert.equal(readFileSync(t.p('config/api-copy.toml'), 'utf8'), body, 'the approved bytes are back');
  });
});

/** The processes started below `pid` (by id: we end only what we started). */
function descendants(pid: number): number[] {
  const kids = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map(Number);
  return kids.flatMap((k) => [k, ...descendants(k)]);
}

describe('no leak: edit copies and who asked', () => {
  it('kill -9 of warden edit: the private copy is gone by the next edit', async () => {
    const t = fresh();
    const tmp = join(t.base, 'tmp');
    mkdirSync(tmp, { mode: 0o700 });
    const editor = join(t.base, 'slow-editor');
    writeFileSync(editor, '#!/bin/sh\nexec sleep 61\n', { mode: 0o755 });
    const env = { ...t.env, TMPDIR: tmp, EDITOR: editor };
    const p = own(spawn(process.execPath, [CLI, 'edit', 'config/credentials.toml', '--root', t.root], { env, stdio: 'ignore' }), 'a child of this test');
    cleanups.push(() => { if (p.exitCode === null) p.kill('SIGKILL'); });
    await waitFor(() => readdirSync(tmp).some((n) => n.startsWith('warden-edit-') && readdirSync(join(tmp, n)).length > 0), 10_000, 'the private copy exists');
    // The copy is written before the editor starts: wait for the editor (its sleep) to be among the children.
    const cmdline = (pid: number) => { try { return readFileSync(`/proc/${pid}/cmdline`, 'latin1'); } catch { return ''; } };
    await waitFor(() => descendants(p.pid!).some((pid) => cmdline(pid).includes('sleep')), 10_000, 'the editor runs');
    const editorPids = descendants(p.pid!);
    p.kill('SIGKILL');
    await waitFor(() => p.exitCode !== null || p.signalCode !== null, 5_000, 'edit killed');
    for (const pid of editorPids) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } } // its editor, orphaned
    assert.ok(readdirSync(tmp).length > 0, 'kill -9 left the copy (the finding)');
    const r = cli(t, ['edit', ORG], { env: { TMPDIR: tmp, EDITOR: 'true' } });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(readdirSync(tmp), [], 'no copy with credential values left');
  });

  it('history records the OS user warden sees, not the one the client claims', async () => {
    const t = fresh();
    await daemon(t);
    const { callDaemon } = await import('../../src/daemon/control.js');
    const { Store } = await import('../../src/store/store.js');
    const store = Store.open(t.root);
    try {
      const res = await callDaemon(store, { op: 'change', change: { action: 'propose', command: `apply ${ORG}`, user: 'the-owner-honest',
        changes: [{ path: ORG, content_b64: Buffer.from(readFileSync(t.p(ORG), 'utf8').replace(/hourly_cap = \d+/, 'hourly_cap = 21')).toString('base64') }] } });
      assert.ok(res.kind === 'ok' && res.res.ok, JSON.stringify(res));
    } finally { store.close(); }
    await waitFor(() => /members|apply/.test(spawnSync('git', ['-C', t.p('snapshots/history'), 'log', '-1', '--format=%B'], { encoding: 'utf8' }).stdout), 10_000, 'history commit');
    const msg = spawnSync('git', ['-C', t.p('snapshots/history'), 'log', '-1', '--format=%B'], { encoding: 'utf8' }).stdout;
    const me = execFileSync('id', ['-un'], { encoding: 'utf8' }).trim();
    assert.match(msg, new RegExp(`user: ${me} \\(client said "the-owner-honest"\\)`), msg);
  });
});

describe('robust edges', () => {
  it('apply of a name past the file system limit is refused before anything changes', () => {
    const t = fresh();
    const before = readFileSync(t.p('snapshots/baseline/index'));
    const name = `orgs/${'n'.repeat(240)}.toml`;
    const src = join(t.base, 'org.toml');
    writeFileSync(src, readFileSync(t.p(ORG)));
    const r = cli(t, ['apply', name, '--from', src]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /at most \d+ bytes/);
    assert.doesNotMatch(r.stderr, /ENAMETOOLONG/);
    assert.ok(readFileSync(t.p('snapshots/baseline/index')).equals(before), 'the baseline did not move');
    assert.equal(cli(t, ['verify']).code, 0, 'no drift left behind');
  });
});

describe('robust edges: a hung history', () => {
  /** git processes whose working directory is this history (a stuck child would be one). */
  function gitsIn(t: TestRoot): number[] {
    const out: number[] = [];
    for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
      try { if (readlinkSync(`/proc/${pid}/cwd`).startsWith(t.p('snapshots/history'))) out.push(Number(pid)); } catch { /* gone or not ours */ }
    }
    return out;
  }

  it('a FIFO planted as .git/HEAD: the change finishes, the failed history is reported, no git is left, reverts go on', async () => {
    const t = fresh();
    const env = { WARDEN_GIT_TIMEOUT_MS: '3000' };
    await daemon(t, env);
    const head = t.p('snapshots/history/.git/HEAD');
    rmSync(head);
    execFileSync('mkfifo', [head]);
    const src = join(t.base, 'org.toml');
    writeFileSync(src, readFileSync(t.p(ORG), 'utf8').replace(/hourly_cap = \d+/, 'hourly_cap = 33'));
    const started = Date.now();
    const apply = own(spawn(process.execPath, [CLI, 'apply', ORG, '--from', src, '--root', t.root], { env: { ...t.env, ...env }, stdio: 'ignore' }), 'a child of this test');
    cleanups.push(() => { if (apply.exitCode === null) apply.kill('SIGKILL'); });
    const exited = new Promise<number | null>((res) => apply.once('exit', (c) => res(c)));
    await waitFor(() => readFileSync(t.p(ORG), 'utf8').includes('hourly_cap = 33'), 10_000, 'the change is applied');
    // While git hangs, a direct edit is still reverted at once.
    const cond = readFileSync(t.p('config/conditions.toml'), 'utf8');
    writeFileSync(t.p('config/conditions.toml'), '# during a hung history\n');
    await waitFor(() => readFileSync(t.p('config/conditions.toml'), 'utf8') === cond, 5_000, 'revert during the hung history');
    const code = await exited;
    assert.equal(code, 0, 'the change itself succeeded');
    assert.ok(Date.now() - started < 30_000, 'the change did not wait for the hung git');
    await waitFor(() => gitsIn(t).length === 0, 10_000, 'no git child left behind');
    assert.equal(cli(t, ['verify']).code, 0);
  });
});
