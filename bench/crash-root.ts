/**
 * Plumbing of the credential crash trials (bench/crash-trials.ts): a root with a two-file
 * credential set, the CLI as a child process that is always reaped (a deadline on every
 * wait, SIGKILL of every live child when this process exits), and reading what a kill left.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'smol-toml';
import { newCredSet, TWO_FILE_CRED_WARDEN_TOML, type CredSet } from '../test/helpers/cred-set.js';

const REPO = resolve(import.meta.dirname, '..', '..');
const CLI = join(REPO, 'dist', 'src', 'cli', 'main.js');


export type { CredSet };

export interface Proc {
  proc: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
  /** Set once the process is gone (exit code or signal known). */
  gone: () => boolean;
  /** Resolves true when the process exited within `ms`; false when it did not (it is then SIGKILLed and reaped). */
  exitWithin(ms: number): Promise<boolean>;
}

const live = new Set<ChildProcess>();
const bases = new Set<string>();
/** On any exit (also process.exit from a signal handler): kill every live child group, remove every root not yet removed. */
process.once('exit', () => {
  for (const c of live) { try { process.kill(-c.pid!, 'SIGKILL'); } catch { /* gone */ } }
  for (const b of bases) { try { rmSync(b, { recursive: true, force: true }); } catch { /* best effort */ } }
});

export function removeCrashRoot(base: string): void {
  rmSync(base, { recursive: true, force: true });
  bases.delete(base);
}

/** Spawn the CLI in its own process group; stdin gets `input` and is closed. */
export function start(args: string[], env: NodeJS.ProcessEnv, input?: string): Proc {
  const proc = spawn(process.execPath, [CLI, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  live.add(proc);
  let out = '', err = '';
  let done = false;
  proc.stdout!.on('data', (d) => { out += String(d); });
  proc.stderr!.on('data', (d) => { err = (err + String(d)).slice(-20_000); });
  proc.stdin!.on('error', () => {});
  proc.stdin!.end(input ?? '');
  const exited = new Promise<number | null>((res) => proc.once('exit', (code) => { done = true; live.delete(proc); res(code); }));
  return {
    proc, out: () => out, err: () => err, exited, gone: () => done,
    async exitWithin(ms) {
      let t: NodeJS.Timeout | undefined;
      const timedOut = await Promise.race([exited.then(() => false), new Promise<boolean>((res) => { t = setTimeout(() => res(true), ms); })]);
      clearTimeout(t);
      if (!timedOut) return true;
      try { process.kill(-proc.pid!, 'SIGKILL'); } catch { /* gone */ }
      await exited;
      return false;
    },
  };
}

export const newValues = newCredSet;

/** A fresh root under `base` holding the set `cur`, and the environment for its processes. */
export function makeCrashRoot(prefix: string, cur: CredSet): { base: string; root: string; env: NodeJS.ProcessEnv } {
  const base = mkdtempSync(join(tmpdir(), prefix));
  bases.add(base);
  const root = join(base, 'root');
  mkdirSync(root);
  for (const d of ['config', 'orgs', 'blocks']) cpSync(join(REPO, 'test', 'fixtures', 'example-root', d), join(root, d), { recursive: true });
  writeFileSync(join(root, 'config/warden.toml'), TWO_FILE_CRED_WARDEN_TOML);
  writeFileSync(join(root, 'config/credentials.toml'), `# the token lives here\n[discord]\ntoken = "${cur.token}"\n\n[anthropic]\napi_key = "sk-ant-EXAMPLE-not-a-real-key"\n`, { mode: 0o600 });
  writeFileSync(join(root, 'config/discord-app.toml'), `# the application id lives here\n[discord]\napplication_id = "${cur.application_id}"\n`, { mode: 0o600 });
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: join(base, 'state'), NO_COLOR: '1' };
  for (const k of ['STATE_DIRECTORY', 'NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WATCHDOG_PID', 'WARDEN_ROOT', 'WARDEN_TEST_CRASH_AT', 'WARDEN_TEST_STEP_DELAY_MS', 'WARDEN_TEST_WATCH_FAULT']) delete env[k];
  return { base, root, env };
}

export function readSet(root: string): Partial<CredSet> {
  const a = parse(readFileSync(join(root, 'config/credentials.toml'), 'utf8')) as { discord?: { token?: string } };
  const b = parse(readFileSync(join(root, 'config/discord-app.toml'), 'utf8')) as { discord?: { application_id?: string } };
  return { token: a.discord?.token, application_id: b.discord?.application_id };
}

export const sameSet = (a: Partial<CredSet>, b: CredSet) => a.token === b.token && a.application_id === b.application_id;

export function alertsOf(root: string): { reason: string; action: string; path: string }[] {
  try { return readFileSync(join(root, 'snapshots/alerts.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)); } catch { return []; }
}

/** The transaction's intent manifest (src/changes/journal.ts): on disk from its durable write until the journal is removed. */
export const intentOnDisk = (root: string) => existsSync(join(root, 'snapshots/journal/intent'));

/** Where a kill landed, read from what it left (never from a product seam). */
export type Landing = 'before' | 'inside' | 'after';

/**
 * inside: the intent manifest was on disk (the next start must recover it with half-applied);
 * before: no manifest and the files still hold the old set; after: no manifest and the new set.
 * null: no manifest and a mixed set — which no kill may leave.
 */
export function landing(root: string, old: CredSet, next: CredSet): Landing | null {
  if (intentOnDisk(root)) return 'inside';
  let s: Partial<CredSet>;
  try { s = readSet(root); } catch { return null; }
  return sameSet(s, old) ? 'before' : sameSet(s, next) ? 'after' : null;
}
