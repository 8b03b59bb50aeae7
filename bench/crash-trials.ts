/**
 * Crash trials (issue 4): kill -9 the process applying a two-file credential rotation at
 * random points, restart the daemon, and check that the set is wholly old or wholly new —
 * never mixed — and that a `half-applied` alert exists whenever the rotation was
 * interrupted (its intent journal was on disk when the process died).
 *
 * Two ways of killing, alternating at random:
 *   - "step": the daemon applies the change and SIGKILLs itself at a step of the
 *     transaction chosen at random (WARDEN_TEST_CRASH_AT, see src/changes/seam.ts);
 *   - "delay": no daemon; `warden cred rotate` applies under the lock, slowed down by
 *     WARDEN_TEST_STEP_DELAY_MS, and is sent SIGKILL from outside after a random delay.
 *
 * One root serves every trial (init once); each trial rotates from whatever the last one
 * left. Used by test/changes/crash.test.ts (20 trials) and by the bench (1,000).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes, randomInt } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'smol-toml';
import { waitFor } from '../test/helpers/wait-for.js';

export interface CrashTrialStats {
  trials: number;
  interrupted: number;
  mixed: number;
  rolledBack: number;
  rolledForward: number;
  ms: number;
  /** Interrupted trials after which no half-applied alert was found (must be 0). */
  missingAlerts: number;
  /** Trials after which the files were not what the baseline approves (must be 0). */
  baselineMismatch: number;
  byStep: Record<string, number>;
}

const REPO = resolve(import.meta.dirname, '..', '..');
const CLI = join(REPO, 'dist', 'src', 'cli', 'main.js');
const STEPS = ['begin', 'journal-blobs', 'journal', 'file-1', 'file-2', 'baseline', 'done'];

const WARDEN_TOML = `approval = "none"
rescan_seconds = 30
max_bytes = 1048576

[owner]
discord_id = "123456789012345678"

[credentials]
files = ["config/credentials.toml", "config/discord-app.toml"]

[credentials.groups.discord]
keys = ["token", "application_id"]
check = "discord-token"
`;

interface Proc { proc: ChildProcess; out: () => string; err: () => string; exited: Promise<number | null> }

function start(args: string[], env: NodeJS.ProcessEnv, input?: string): Proc {
  const proc = spawn(process.execPath, [CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let out = '', err = '';
  proc.stdout!.on('data', (d) => { out += String(d); });
  proc.stderr!.on('data', (d) => { err += String(d); });
  proc.stdin!.on('error', () => {});
  proc.stdin!.end(input ?? '');
  const exited = new Promise<number | null>((res) => proc.once('exit', (code) => res(code)));
  return { proc, out: () => out, err: () => err, exited };
}

async function startDaemon(root: string, env: NodeJS.ProcessEnv): Promise<Proc> {
  const d = start(['run', '--guard', '--root', root], env);
  let exited = false;
  void d.exited.then(() => { exited = true; });
  await waitFor(() => d.out().includes('ready\n') || exited, 30_000, 'daemon ready');
  if (!d.out().includes('ready\n')) throw new Error(`crash trials: daemon did not start: ${d.err()}`);
  return d;
}

async function stop(p: Proc): Promise<void> {
  if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill('SIGTERM');
  await p.exited;
}

function newValues(): { token: string; application_id: string } {
  const app = String(randomInt(100_000_000, 999_999_999)) + String(randomInt(100_000_000, 999_999_999));
  return { application_id: app, token: `${Buffer.from(app).toString('base64').replace(/=+$/, '')}.${randomBytes(4).toString('hex')}.${randomBytes(12).toString('base64url')}` };
}

function readSet(root: string): { token?: string; application_id?: string } {
  const a = parse(readFileSync(join(root, 'config/credentials.toml'), 'utf8')) as { discord?: { token?: string } };
  const b = parse(readFileSync(join(root, 'config/discord-app.toml'), 'utf8')) as { discord?: { application_id?: string } };
  return { token: a.discord?.token, application_id: b.discord?.application_id };
}

function alertsOf(root: string): { reason: string; action: string; path: string }[] {
  try { return readFileSync(join(root, 'snapshots/alerts.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)); } catch { return []; }
}

export async function runCrashTrials(n: number, opts: { log?: (l: string) => void } = {}): Promise<CrashTrialStats> {
  const t0 = Date.now();
  const base = mkdtempSync(join(tmpdir(), 'warden-crash-'));
  const root = join(base, 'root');
  mkdirSync(root);
  for (const d of ['config', 'orgs', 'blocks']) cpSync(join(REPO, 'test', 'fixtures', 'example-root', d), join(root, d), { recursive: true });
  writeFileSync(join(root, 'config/warden.toml'), WARDEN_TOML);
  let cur = newValues();
  writeFileSync(join(root, 'config/credentials.toml'), `# the token lives here\n[discord]\ntoken = "${cur.token}"\n\n[anthropic]\napi_key = "sk-ant-EXAMPLE-not-a-real-key"\n`, { mode: 0o600 });
  writeFileSync(join(root, 'config/discord-app.toml'), `# the application id lives here\n[discord]\napplication_id = "${cur.application_id}"\n`, { mode: 0o600 });
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: join(base, 'state'), NO_COLOR: '1' };
  for (const k of ['STATE_DIRECTORY', 'NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WARDEN_TEST_CRASH_AT', 'WARDEN_TEST_STEP_DELAY_MS']) delete env[k];
  const stats: CrashTrialStats = { trials: 0, interrupted: 0, mixed: 0, rolledBack: 0, rolledForward: 0, ms: 0, missingAlerts: 0, baselineMismatch: 0, byStep: {} };
  const init = start(['init', '--root', root], env);
  if (await init.exited !== 0) throw new Error(`crash trials: init failed: ${init.err()}`);
  try {
    for (let i = 0; i < n; i++) {
      const next = newValues();
      const input = `${next.token}\n${next.application_id}\n`;
      const mode = randomInt(0, 3) === 0 ? 'delay' : 'step';
      const label = mode === 'step' ? STEPS[randomInt(0, STEPS.length)] as string : 'delay';
      stats.byStep[label] = (stats.byStep[label] ?? 0) + 1;
      if (mode === 'step') {
        const d = await startDaemon(root, { ...env, WARDEN_TEST_CRASH_AT: label });
        const c = start(['cred', 'rotate', 'discord', '--root', root], env, input);
        await c.exited;
        await d.exited; // it killed itself at the step
      } else {
        const c = start(['cred', 'rotate', 'discord', '--root', root], { ...env, WARDEN_TEST_STEP_DELAY_MS: '20' }, input);
        const timer = setTimeout(() => { try { c.proc.kill('SIGKILL'); } catch { /* gone */ } }, randomInt(0, 700));
        await c.exited;
        clearTimeout(timer);
      }
      const interrupted = existsSync(join(root, 'snapshots/journal/intent'));
      const before = alertsOf(root).length;
      const d = await startDaemon(root, env);
      const after = alertsOf(root).slice(before);
      const got = readSet(root);
      const isOld = got.token === cur.token && got.application_id === cur.application_id;
      const isNew = got.token === next.token && got.application_id === next.application_id;
      stats.trials++;
      if (!isOld && !isNew) stats.mixed++;
      if (after.some((a) => a.reason === 'changed-while-stopped' && /credentials|discord-app/.test(a.path))) stats.baselineMismatch++;
      if (interrupted) {
        stats.interrupted++;
        const half = after.filter((a) => a.reason === 'half-applied');
        if (!half.length) stats.missingAlerts++;
        else if (half.every((a) => a.action === 'flagged')) stats.rolledForward++;
        else stats.rolledBack++;
      }
      opts.log?.(`trial ${i + 1}: ${label} → ${isNew ? 'new' : isOld ? 'old' : 'MIXED'}${interrupted ? ' (interrupted)' : ''}`);
      if (isNew) cur = next;
      await stop(d);
    }
  } finally {
    stats.ms = Date.now() - t0;
    rmSync(base, { recursive: true, force: true });
  }
  return stats;
}

// `node dist/bench/crash-trials.js [N]` runs the trials on their own.
if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.dirname, 'crash-trials.js')) {
  const n = Number(process.argv[2] ?? 20);
  runCrashTrials(n, { log: (l) => process.stderr.write(l + '\n') }).then((s) => { process.stdout.write(JSON.stringify(s, null, 2) + '\n'); process.exitCode = s.mixed || s.missingAlerts || s.baselineMismatch ? 1 : 0; });
}
