/**
 * Shared plumbing for `npm run bench`: temp roots, child processes that are always killed,
 * percentiles, /proc sampling. Nothing here imports warden's sources: the bench drives the
 * built CLI (dist/src/cli/main.js) as separate processes, as a user would.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { waitFor as waitForAny } from '../test/helpers/wait-for.js';

export const REPO = resolve(import.meta.dirname, '..', '..');
export const CLI = join(REPO, 'dist', 'src', 'cli', 'main.js');
export const BENCH_DIST = join(REPO, 'dist', 'bench');
export const FIXTURE = join(REPO, 'test', 'fixtures', 'example-root');

export const log = (msg: string): void => { process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`); };

// ---------------------------------------------------------------- process hygiene

const children = new Set<ChildProcess>();
const tempDirs = new Set<string>();

const groups = new Set<number>();

/** A child started with `detached: true` leads its own process group: killed as a group. */
export function trackGroup(c: ChildProcess): ChildProcess {
  track(c);
  if (c.pid) groups.add(c.pid);
  c.once('exit', () => { if (c.pid) groups.delete(c.pid); });
  return c;
}

export function killGroup(pid: number): void {
  try { process.kill(-pid, 'SIGKILL'); } catch { /* gone */ }
  groups.delete(pid);
}

function killAll(): void {
  for (const g of groups) killGroup(g);
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) { try { c.kill('SIGKILL'); } catch { /* gone */ } }
  }
  children.clear();
}

export function cleanupTemps(): void {
  for (const d of tempDirs) { try { rmSync(d, { recursive: true, force: true }); } catch { /* best effort */ } }
  tempDirs.clear();
}

process.on('exit', () => { killAll(); cleanupTemps(); });
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => { log(`${sig}: killing children and exiting`); killAll(); cleanupTemps(); process.exit(130); });
}

export function track(c: ChildProcess): ChildProcess {
  children.add(c);
  c.once('exit', () => children.delete(c));
  return c;
}

export interface Proc {
  proc: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
  /** SIGTERM, then SIGKILL after 3 s. */
  stop(): Promise<void>;
}

/** Spawn a long-running process and wait until it prints `ready` on stdout. Returns the time it took (ms). */
export async function startReady(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 30_000): Promise<Proc & { readyMs: number }> {
  const t0 = performance.now();
  const proc = track(spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '';
  let err = '';
  let readyAt = 0;
  proc.stdout!.on('data', (d: Buffer) => { out += String(d); if (!readyAt && out.includes('ready\n')) readyAt = performance.now(); });
  proc.stderr!.on('data', (d: Buffer) => { err += String(d); });
  const exited = new Promise<number | null>((res) => proc.once('exit', (code) => res(code)));
  const p: Proc = {
    proc, pid: proc.pid ?? -1, stdout: () => out, stderr: () => err, exited,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      proc.kill('SIGTERM');
      const t = setTimeout(() => { try { proc.kill('SIGKILL'); } catch { /* gone */ } }, 3000);
      await exited;
      clearTimeout(t);
    },
  };
  try {
    await waitFor(() => readyAt > 0 || proc.exitCode !== null, timeoutMs, `${args.join(' ')} ready`, 1);
  } catch (e) { await p.stop(); throw e; }
  if (!readyAt) throw new Error(`${cmd} ${args.join(' ')} exited before ready (code ${proc.exitCode}): ${err.slice(-2000)}`);
  return { ...p, readyMs: readyAt - t0 };
}

/** Run a command to completion; returns wall time (ms) of the whole process. */
export async function timed(cmd: string, args: string[], env: NodeJS.ProcessEnv, okCodes = [0]): Promise<{ ms: number; stdout: string; stderr: string; code: number | null }> {
  const t0 = performance.now();
  const proc = track(spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] }));
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d: Buffer) => { out += String(d); });
  proc.stderr!.on('data', (d: Buffer) => { err += String(d); });
  const code = await new Promise<number | null>((res) => proc.once('exit', (c) => res(c)));
  const ms = performance.now() - t0;
  if (!okCodes.includes(code ?? -1)) throw new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err.slice(-2000)}${out.slice(-500)}`);
  return { ms, stdout: out, stderr: err, code };
}

/** The one waitFor (test/helpers/wait-for.ts); the bench polls every 5 ms by default. */
export const waitFor = <T>(pred: () => T | Promise<T>, timeoutMs: number, what: string, everyMs = 5): Promise<NonNullable<T>> => waitForAny(pred, timeoutMs, what, everyMs);

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- roots

export const OWNER = '123456789012345678';
export const TOKEN = 'MTIzNDU2Nzg5MDEyMzQ1Njc4.bench.bot-token-value';

export interface BenchRoot {
  base: string;
  root: string;
  env: NodeJS.ProcessEnv;
  tokenFile: string;
  p(rel: string): string;
}

export function wardenToml(opts: { protect?: string[]; discordApi?: string; tokenFile?: string; rescanSeconds?: number }): string {
  return [
    'approval = "none"',
    ...(opts.rescanSeconds !== undefined ? [`rescan_seconds = ${opts.rescanSeconds}`] : []),
    '',
    '[owner]',
    `discord_id = "${OWNER}"`,
    '',
    ...(opts.protect ?? []).flatMap((p) => ['[[protect]]', `path = "${p}"`, 'kind = "text"', '']),
    '[credentials]',
    'files = ["config/credentials.toml"]',
    '',
    '[credentials.groups.discord]',
    'keys = ["token", "application_id"]',
    'check = "discord-token"',
    '',
    ...(opts.discordApi ? ['[notify.discord]', `token_file = "${opts.tokenFile}"`, `api = "${opts.discordApi}"`, ''] : []),
  ].join('\n');
}

/**
 * A fresh root: a copy of the suite's fixture root (test/fixtures/example-root), extra files, a
 * warden.toml, its own XDG_STATE_HOME, and a 0600 Discord token file outside the root.
 */
export function makeRoot(name: string, toml: (tokenFile: string) => string, files: Record<string, string | Buffer> = {}): BenchRoot {
  const base = mkdtempSync(join(tmpdir(), `warden-bench-${name}-`));
  tempDirs.add(base);
  const root = join(base, 'root');
  mkdirSync(root, { recursive: true });
  for (const d of ['config', 'orgs', 'blocks']) cpSync(join(FIXTURE, d), join(root, d), { recursive: true });
  const tokenFile = join(base, 'discord-token');
  writeFileSync(tokenFile, TOKEN + '\n', { mode: 0o600 });
  chmodSync(tokenFile, 0o600);
  writeFileSync(join(root, 'config', 'warden.toml'), toml(tokenFile));
  for (const [rel, content] of Object.entries(files)) {
    const p = join(root, rel);
    mkdirSync(resolve(p, '..'), { recursive: true });
    writeFileSync(p, content);
  }
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: join(base, 'state'), NO_COLOR: '1' };
  for (const k of ['STATE_DIRECTORY', 'NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WATCHDOG_PID', 'WARDEN_ROOT', 'WARDEN_TEST_WATCH_FAULT']) delete env[k];
  return { base, root, env, tokenFile, p: (rel) => join(root, rel) };
}

export function newTempDir(name: string): string {
  const d = mkdtempSync(join(tmpdir(), `warden-bench-${name}-`));
  tempDirs.add(d);
  return d;
}

export function removeTemp(d: string): void {
  try { rmSync(d, { recursive: true, force: true }); } catch { /* best effort */ }
  tempDirs.delete(d);
}

export function wardenSync(r: BenchRoot, args: string[]): { code: number | null; stdout: string; stderr: string } {
  const res = spawnSync(process.execPath, [CLI, ...args, '--root', r.root], { env: r.env, encoding: 'utf8', timeout: 120_000 });
  return { code: res.status, stdout: res.stdout, stderr: res.stderr };
}

// ---------------------------------------------------------------- numbers

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}

export function summary(xs: number[]): { n: number; p50: number; p90: number; p99: number; max: number; mean: number } {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: percentile(s, 50), p90: percentile(s, 90), p99: percentile(s, 99), max: s[s.length - 1] ?? NaN, mean: s.reduce((a, b) => a + b, 0) / (s.length || 1) };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = s.length >> 1;
  return s.length % 2 ? s[m] as number : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

// ---------------------------------------------------------------- /proc

let clkTck = 0;
export function clockTicks(): number {
  if (!clkTck) {
    const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    clkTck = Number(r.stdout.trim()) || 100;
  }
  return clkTck;
}

/** utime + stime of a process, in seconds (/proc/<pid>/stat fields 14 and 15). */
export function cpuSeconds(pid: number): number {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = s.slice(s.lastIndexOf(')') + 2).split(' '); // fields[0] is field 3 (state)
  return (Number(fields[11]) + Number(fields[12])) / clockTicks();
}

/** kB fields of /proc/<pid>/status (VmRSS, RssAnon, …), in MB; NaN for a field not there. */
export function statusMB<K extends string>(pid: number, keys: readonly K[]): Record<K, number> {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const out = {} as Record<K, number>;
  for (const k of keys) out[k] = Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN) / 1024;
  return out;
}

/** VmRSS and VmHWM of a process, in MB (/proc/<pid>/status). */
export function memMB(pid: number): { rss: number; hwm: number } {
  const m = statusMB(pid, ['VmRSS', 'VmHWM']);
  return { rss: m.VmRSS, hwm: m.VmHWM };
}
