/**
 * One writer (docs/CONTRACT.md §Changes): the lock is created complete, a lock whose holder is dead
 * (or reused, or unreadable and old) never stops a start, a command never applies under its
 * own lock while a daemon guards the root, and nothing a second writer does can make the next
 * start fail. Everything here drives the real CLI and daemon against real files.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CLI, cli, readAlertsOf, testWorld, waitFor, type Daemon, type TestRoot,
} from '../helpers/root.js';

const ORG = 'orgs/bookclub.toml';
const LOCK = 'snapshots/control/warden.lock';
const SOCK = 'snapshots/control/warden.sock';
const world = testWorld();
const procs: ChildProcess[] = [];
const fresh = (): TestRoot => world.root({ init: true });
const daemon = (t: TestRoot): Promise<Daemon> => world.daemon(t);

afterEach(async () => {
  for (const p of procs.splice(0)) if (p.exitCode === null && p.signalCode === null) { p.kill('SIGKILL'); await new Promise((r) => p.once('exit', r)); }
  await world.cleanup();
});

/**
 * A guard the commands cannot see (another network namespace, as the deployment's
 * PrivateNetwork=yes hides its kernel-held lock), started and ready, with its socket and
 * lock then removed: the setup of every "second writer" trial.
 */
async function unseenDaemon(t: TestRoot): Promise<{ proc: ChildProcess; stderr: () => string }> {
  const p = spawn('unshare', ['-n', process.execPath, CLI, 'run', '--guard', '--root', t.root], { env: t.env, stdio: ['ignore', 'pipe', 'pipe'] });
  procs.push(p);
  let out = '', err = '';
  p.stdout!.on('data', (c) => { out += String(c); });
  p.stderr!.on('data', (c) => { err += String(c); });
  await waitFor(() => out.includes('ready\n') || p.exitCode !== null, 20_000, 'unseen daemon ready');
  assert.ok(out.includes('ready\n'), err);
  rmSync(t.p(SOCK));
  rmSync(t.p(LOCK));
  return { proc: p, stderr: () => err };
}

const bootId = (): string => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();

/** A pid that existed and is gone now. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

/** A live process that is not warden: stands in for a pid the kernel handed to someone else. */
function otherProcess(): ChildProcess {
  const p = spawn('sleep', ['120'], { stdio: 'ignore' });
  procs.push(p);
  return p;
}

function plantLock(t: TestRoot, content: string | Buffer, ageSeconds = 0): void {
  mkdirSync(t.p('snapshots/control'), { recursive: true, mode: 0o700 });
  writeFileSync(t.p(LOCK), content, { mode: 0o600 });
  if (ageSeconds) { const then = new Date(Date.now() - ageSeconds * 1000); utimesSync(t.p(LOCK), then, then); }
}

function applyOrg(t: TestRoot, text: string) {
  return cli(t, ['apply', ORG, '--from', '-'], { input: text });
}

describe('a lock left behind never stops the next start', () => {
  const cases: [string, (t: TestRoot) => void][] = [
    ['empty (kill -9 between create and write), 1 minute old', (t) => plantLock(t, '', 60)],
    ['garbled, 1 minute old', (t) => plantLock(t, Buffer.from([0xff, 0x00, 0x13, 0x37, 0x0a]), 60)],
    ['naming a dead pid', (t) => plantLock(t, `${deadPid()} 12345 ${bootId()} daemon\n`)],
    ['naming a dead pid (the old one-number format)', (t) => plantLock(t, `${deadPid()}\n`)],
    ['naming a live pid of another process (reused pid)', (t) => plantLock(t, `${otherProcess().pid} 1 ${bootId()} daemon\n`)],
    ['from an earlier boot', (t) => plantLock(t, `${otherProcess().pid} 1 00000000-0000-4000-8000-000000000000 daemon\n`)],
  ];
  for (const [what, plant] of cases) {
    it(`the daemon starts over a lock ${what}`, async () => {
      const t = fresh();
      plant(t);
      const d = await daemon(t);
      assert.ok(d.stdout().includes('ready'));
      // While it runs, the lock names it (pid first, then its start time and boot).
      assert.match(readFileSync(t.p(LOCK), 'utf8'), new RegExp(`^${d.proc.pid} \\d+ \\S+ daemon\\n$`));
    });
    it(`a command applies (daemon down) over a lock ${what}`, () => {
      const t = fresh();
      plant(t);
      const r = applyOrg(t, `${readFileSync(t.p(ORG), 'utf8')}\n# sanctioned\n`);
      assert.equal(r.code, 0, r.stderr);
      assert.match(readFileSync(t.p(ORG), 'utf8'), /# sanctioned/);
      assert.ok(!existsSync(t.p(LOCK)), 'the command removed its own lock');
    });
  }

  it('a fresh empty lock (a crash a moment ago) is taken over once it is old enough', async () => {
    const t = fresh();
    plantLock(t, '');
    const d = await daemon(t);
    assert.ok(d.stdout().includes('ready'));
  });
});

describe('a command never applies beside a running daemon', () => {
  it('socket and lock removed, then apply: refused with exit 3, nothing applied, the next start succeeds', async () => {
    const t = fresh();
    const approved = readFileSync(t.p(ORG), 'utf8');
    const d = await daemon(t);
    rmSync(t.p(SOCK));
    rmSync(t.p(LOCK));
    const r = applyOrg(t, `${approved}\n# applied beside the daemon\n`);
    assert.equal(r.code, 3, `exit code (stderr: ${r.stderr})`);
    assert.match(r.stderr, new RegExp(`daemon \\(pid ${d.proc.pid}\\)`));
    assert.match(r.stderr, /nothing was applied/);
    assert.equal(readFileSync(t.p(ORG), 'utf8'), approved);
    // The daemon puts its lock back by itself.
    await waitFor(() => existsSync(t.p(LOCK)) && readFileSync(t.p(LOCK), 'utf8').startsWith(`${d.proc.pid} `), 10_000, 'the lock recreated');
    assert.equal(await d.stop(), 0);
    await daemon(t);
    assert.equal(cli(t, ['verify']).code, 0);
  });

  it('a second `warden run` on the same root is refused at once, naming the daemon', async () => {
    const t = fresh();
    const d = await daemon(t);
    const r = spawnSync(process.execPath, [CLI, 'run', '--guard', '--root', t.root], { env: t.env, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, new RegExp(`daemon \\(pid ${d.proc.pid}\\) already guards `));
  });

  it('a second writer the lock cannot see (daemon in another network namespace) cannot make the next start fail', async () => {
    const t = fresh();
    const approved = readFileSync(t.p(ORG), 'utf8');
    const { proc: p } = await unseenDaemon(t);
    const r = applyOrg(t, `${approved}\n# a second writer\n`);
    process.stderr.write(`# second writer beside a daemon in another namespace: exit ${r.code}\n`);
    // Either refused (the daemon already put its lock back) or applied beside it and then
    // reverted by the daemon as tampering; never a store the next start refuses.
    assert.ok(r.code === 0 || r.code === 3, `exit ${r.code}: ${r.stderr}`);
    if (r.code === 0) await waitFor(() => readFileSync(t.p(ORG), 'utf8') === approved, 15_000, 'the daemon reverted the second writer');
    await waitFor(() => existsSync(t.p(LOCK)), 10_000, 'the lock recreated');
    const exited = new Promise((res) => p.once('exit', res));
    p.kill('SIGTERM');
    await exited;
    const d = await daemon(t);
    assert.ok(d.stdout().includes('ready'));
    assert.equal(cli(t, ['verify']).code, 0);
    assert.equal(readFileSync(t.p(ORG), 'utf8'), approved);
    if (r.code === 0) assert.ok(readAlertsOf(t).some((a) => a.reason === 'baseline-tampered'), 'the second write was reported');
  });
});

describe('two daemons never fight over one store', () => {
  it('a daemon whose lock another daemon took (another network namespace) stops; the other keeps guarding', async () => {
    const t = fresh();
    const approved = readFileSync(t.p(ORG), 'utf8');
    const { proc: a, stderr } = await unseenDaemon(t);
    const b = await daemon(t);
    await waitFor(() => a.exitCode !== null, 15_000, 'daemon A stops');
    assert.match(stderr(), new RegExp(`another warden daemon \\(pid ${b.proc.pid}\\) took over`));
    assert.equal(b.proc.exitCode, null, 'daemon B still runs');
    assert.ok(readFileSync(t.p(LOCK), 'utf8').startsWith(`${b.proc.pid} `), 'the lock names B');
    writeFileSync(t.p(ORG), `${approved}\nhourly_cap = 9999\n`);
    await waitFor(() => readFileSync(t.p(ORG), 'utf8') === approved, 10_000, 'daemon B reverts an edit');
    assert.equal(await b.stop(), 0);
    await daemon(t);
  });
});

describe('the seal and the index', () => {
  const sealOf = (t: TestRoot): string => {
    const dir = join(t.base, 'state', 'warden', 'keys');
    const f = readdirSync(dir).find((n) => n.endsWith('.seal'));
    assert.ok(f, 'a seal exists');
    return join(dir, f);
  };

  it('a start that finds them disagreeing refuses with a message pointing at the owner\'s review, and an alert', async () => {
    const t = fresh();
    const old = readFileSync(t.p('snapshots/baseline/index'));
    assert.equal(applyOrg(t, `${readFileSync(t.p(ORG), 'utf8')}\n# newer\n`).code, 0);
    writeFileSync(t.p('snapshots/baseline/index'), old);
    const r = spawnSync(process.execPath, [CLI, 'run', '--guard', '--root', t.root], { env: t.env, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /not the latest approved one \(generation 1, the seal names 2;/);
    assert.match(r.stderr, /run 'warden init --force' on a terminal; it shows what differs from the last approved state/);
    assert.ok(readAlertsOf(t).some((a) => a.reason === 'baseline-tampered'));
  });

  it('only the lock holder writes the seal: a reader (verify, status) never does', async () => {
    const t = fresh();
    const seal = sealOf(t);
    rmSync(seal);
    assert.equal(cli(t, ['verify']).code, 0);
    const st = cli(t, ['status']);
    assert.ok([0, 1, 3].includes(st.code), `status exit ${st.code} (3: no daemon): ${st.stderr}`);
    assert.ok(!existsSync(seal), 'a reader wrote the seal');
    await daemon(t);
    assert.ok(existsSync(seal), 'the daemon settles the seal');
  });
});
