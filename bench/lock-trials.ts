/**
 * Kill trials of the one writer: SIGKILL from outside, after a random delay, of
 *   - "daemon": `warden run --guard` anywhere from its first instruction to shortly after ready
 *     (taking the lock, loading, verifying, serving);
 *   - "command": `warden apply` applying a change under the lock with the daemon down.
 * No product seam picks the moment. After every kill the next start must succeed on its own
 * (no hand-deleted lock, no init --force), and the baseline must be the old or the new
 * approved state: the file holds one of the two and `warden verify` agrees with the store.
 * The kill windows are calibrated on this machine: 0–120 % of a full run's duration.
 *
 * Used by test/store/kill-trials.test.ts (20 trials) and on its own:
 * `node dist/bench/lock-trials.js [N]` (e.g. 500 for the heavy count).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { randomInt } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export interface LockTrialStats {
  trials: number;
  daemonKills: number;
  commandKills: number;
  /** Kills that landed while the process was still running (the rest came after it finished). */
  killedRunning: number;
  /** Kills after which a lock file was left behind for the next start to judge stale. */
  lockLeft: number;
  /**
   * Kills that left a new temporary lock file holding the killed process's own line: they
   * landed between creating the lock and linking it into place, where the old code left an
   * empty warden.lock that no start would ever take over.
   */
  killedWhileCreating: number;
  /** Kills that left a stale lock moved aside (between the rename and the unlink). */
  killedWhileRemovingStale: number;
  /** Starts after a kill that did not reach ready on their own (must be 0). */
  startFailures: number;
  /** Command trials where the file was neither the old nor the new content (must be 0). */
  neither: number;
  /** Command trials where `warden verify` disagreed after the restart (must be 0). */
  verifyFailures: number;
  applied: number;
  keptOld: number;
  calibration: { readyMs: number; applyMs: number };
  ms: number;
  failures: string[];
}

const REPO = resolve(import.meta.dirname, '..', '..');
const CLI = join(REPO, 'dist', 'src', 'cli', 'main.js');
const ORG = 'orgs/bookclub.toml';
const LOCK = 'snapshots/control/warden.lock';

const WARDEN_TOML = `approval = "none"
rescan_seconds = 30
max_bytes = 1048576

[owner]
discord_id = "123456789012345678"
`;

interface Proc { proc: ChildProcess; out: () => string; err: () => string; exited: Promise<number | null> }

function start(args: string[], env: NodeJS.ProcessEnv, input?: string): Proc {
  const proc = spawn(process.execPath, [CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '', err = '';
  proc.stdout!.on('data', (d) => { out += String(d); });
  proc.stderr!.on('data', (d) => { err += String(d); });
  proc.stdin!.on('error', () => {});
  proc.stdin!.end(input ?? '');
  const exited = new Promise<number | null>((res) => proc.once('exit', (code) => res(code)));
  return { proc, out: () => out, err: () => err, exited };
}

const running = (p: Proc): boolean => p.proc.exitCode === null && p.proc.signalCode === null;

async function waitFor(pred: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 5));
  }
  return true;
}

async function kill9(p: Proc): Promise<boolean> {
  const wasRunning = running(p);
  if (wasRunning) p.proc.kill('SIGKILL');
  await p.exited;
  return wasRunning;
}

/** Start the daemon; resolves with it once ready, or with the reason it did not get there. */
async function startReady(root: string, env: NodeJS.ProcessEnv): Promise<{ d: Proc; ok: boolean }> {
  const d = start(['run', '--guard', '--root', root], env);
  const ok = await waitFor(() => d.out().includes('ready\n') || !running(d), 30_000) && d.out().includes('ready\n');
  return { d, ok };
}

export async function runLockTrials(n: number, opts: { log?: (l: string) => void } = {}): Promise<LockTrialStats> {
  const t0 = Date.now();
  const base = mkdtempSync(join(tmpdir(), 'warden-locktrials-'));
  const root = join(base, 'root');
  mkdirSync(root);
  for (const d of ['config', 'orgs', 'blocks']) cpSync(join(REPO, d), join(root, d), { recursive: true });
  writeFileSync(join(root, 'config/warden.toml'), WARDEN_TOML);
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: join(base, 'state'), NO_COLOR: '1' };
  for (const k of ['STATE_DIRECTORY', 'NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WARDEN_TEST_CRASH_AT', 'WARDEN_TEST_STEP_DELAY_MS']) delete env[k];
  const stats: LockTrialStats = {
    trials: 0, daemonKills: 0, commandKills: 0, killedRunning: 0, lockLeft: 0, killedWhileCreating: 0, killedWhileRemovingStale: 0, startFailures: 0, neither: 0, verifyFailures: 0,
    applied: 0, keptOld: 0, calibration: { readyMs: 0, applyMs: 0 }, ms: 0, failures: [],
  };
  const live: Proc[] = [];
  const seenTemps = new Set<string>();
  const fail = (msg: string) => { stats.failures.push(msg); opts.log?.(`FAIL ${msg}`); };
  try {
    const init = spawnSync(process.execPath, [CLI, 'init', '--root', root], { env, encoding: 'utf8' });
    if (init.status !== 0) throw new Error(`lock trials: init failed: ${init.stderr}`);
    const original = readFileSync(join(root, ORG), 'utf8');
    const versions = [original, `${original}\n# a sanctioned edit\n`];
    let approved = original;

    // Calibrate the kill windows on this machine.
    let c0 = Date.now();
    const cal = await startReady(root, env);
    if (!cal.ok) throw new Error(`lock trials: the daemon does not start: ${cal.d.err()}`);
    stats.calibration.readyMs = Date.now() - c0;
    cal.d.proc.kill('SIGTERM');
    await cal.d.exited;
    c0 = Date.now();
    const a = start(['apply', ORG, '--from', '-', '--root', root], env, versions[1]);
    if (await a.exited !== 0) throw new Error(`lock trials: apply fails: ${a.err()}`);
    stats.calibration.applyMs = Date.now() - c0;
    approved = versions[1] as string;

    for (let i = 0; i < n; i++) {
      const mode = i % 2 === 0 ? 'daemon' : 'command';
      let label: string;
      let killed = 0;
      const before = approved;
      const next = versions.find((v) => v !== approved) as string;
      if (mode === 'daemon') {
        const delay = randomInt(0, Math.ceil(stats.calibration.readyMs * 1.2) + 1);
        const d = start(['run', '--guard', '--root', root], env);
        live.push(d);
        killed = d.proc.pid ?? 0;
        await new Promise((r) => setTimeout(r, delay));
        if (!running(d) && d.proc.exitCode !== 0) fail(`trial ${i + 1}: the daemon exited by itself (${d.proc.exitCode}): ${d.err()}`);
        if (await kill9(d)) stats.killedRunning++;
        stats.daemonKills++;
        label = `daemon killed after ${delay} ms${d.out().includes('ready\n') ? ' (was ready)' : ''}`;
      } else {
        const delay = randomInt(0, Math.ceil(stats.calibration.applyMs * 1.2) + 1);
        const c = start(['apply', ORG, '--from', '-', '--root', root], env, next);
        live.push(c);
        killed = c.proc.pid ?? 0;
        await new Promise((r) => setTimeout(r, delay));
        if (await kill9(c)) stats.killedRunning++;
        else if (c.proc.exitCode !== 0) fail(`trial ${i + 1}: apply failed by itself (${c.proc.exitCode}): ${c.err()}`);
        stats.commandKills++;
        label = `apply killed after ${delay} ms`;
      }
      if (existsSync(join(root, LOCK))) { stats.lockLeft++; label += ', lock left'; }
      const ctl = join(root, 'snapshots/control');
      for (const f of existsSync(ctl) ? readdirSync(ctl) : []) {
        if (!/^warden\.lock\..+\.tmp$/.test(f) || seenTemps.has(f)) continue;
        seenTemps.add(f);
        let text = '';
        try { text = readFileSync(join(ctl, f), 'latin1'); } catch { /* swept */ }
        if (text.startsWith(`${killed} `)) { stats.killedWhileCreating++; label += ', killed between create and link'; }
        else { stats.killedWhileRemovingStale++; label += ', killed while removing a stale lock'; }
      }
      const s = await startReady(root, env);
      live.push(s.d);
      stats.trials++;
      if (!s.ok) {
        stats.startFailures++;
        fail(`trial ${i + 1} (${label}): the next start failed: ${s.d.err().slice(-600)}`);
        await kill9(s.d);
        break;
      }
      if (mode === 'command') {
        const now = readFileSync(join(root, ORG), 'utf8');
        if (now === next) { stats.applied++; approved = next; label += ' → new'; }
        else if (now === before) { stats.keptOld++; label += ' → old'; }
        else { stats.neither++; fail(`trial ${i + 1} (${label}): the file is neither the old nor the new state`); }
        const v = spawnSync(process.execPath, [CLI, 'verify', '--root', root], { env, encoding: 'utf8' });
        if (v.status !== 0) { stats.verifyFailures++; fail(`trial ${i + 1} (${label}): verify exit ${v.status}: ${v.stdout}${v.stderr}`); }
      }
      opts.log?.(`trial ${i + 1}: ${label}; the next start succeeded`);
      // Leave it stopped for the next trial: SIGTERM, or a kill -9 at a random moment after ready.
      if (randomInt(0, 2) === 0) { s.d.proc.kill('SIGTERM'); await s.d.exited; }
      else { await new Promise((r) => setTimeout(r, randomInt(0, 300))); await kill9(s.d); }
    }
  } finally {
    for (const p of live) if (running(p)) { p.proc.kill('SIGKILL'); await p.exited; }
    stats.ms = Date.now() - t0;
    rmSync(base, { recursive: true, force: true });
  }
  return stats;
}

// `node dist/bench/lock-trials.js [N]` runs the trials on their own.
if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.dirname, 'lock-trials.js')) {
  const n = Number(process.argv[2] ?? 20);
  void runLockTrials(n, { log: (l) => process.stderr.write(l + '\n') }).then((s) => {
    process.stdout.write(JSON.stringify(s, null, 2) + '\n');
    process.exitCode = s.startFailures || s.neither || s.verifyFailures || s.failures.length ? 1 : 0;
  });
}
