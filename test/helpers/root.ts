/**
 * Test roots and the real CLI/daemon. Every root is a fresh copy of the suite's fixture root in a
 * temp directory, with its own state directory (HMAC key) and an "outside" directory that
 * attacks point at, so tests can prove nothing outside the root was touched.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, lstatSync, readlinkSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { waitFor } from './wait-for.js';
import { cleanupAll, killOwned, own } from './children.js';
import { readableCli } from './readable-copy.js';
import type { Alert } from '../../src/store/alert-types.js';

export const REPO = resolve(import.meta.dirname, '..', '..', '..');
export const CLI = join(REPO, 'dist', 'src', 'cli', 'main.js');
/** The test seams' variables (seamed-main.ts SEAM_VARS: importing that file would run the CLI). */
export const SEAM_VAR_NAMES = ['WARDEN_TEST_DIR_WATCH_BLIND', 'WARDEN_TEST_INODE_WATCH_BLIND', 'WARDEN_TEST_STORE_WATCH_BLIND', 'WARDEN_TEST_WATCH_FAULT', 'WARDEN_STAMP_POLL'] as const;
/** The CLI with the detection layers' test seams set from the environment (seamed-main.ts); tests only. */
export const SEAMED_CLI = join(REPO, 'dist', 'test', 'helpers', 'seamed-main.js');
/**
 * The example root the suite owns (a copy of config/, orgs/, blocks/ as committed). Tests
 * never copy the working tree's example files: the README tour changes them with `apply`.
 */
export const FIXTURE = join(REPO, 'test', 'fixtures', 'example-root');

export const TEST_WARDEN_TOML = `approval = "none"
rescan_seconds = 30
max_bytes = 1048576

[owner]
discord_id = "123456789012345678"

[credentials]
files = ["config/credentials.toml"]

[credentials.groups.discord]
keys = ["token", "application_id"]
check = "discord-token"
`;

export interface TestRoot {
  base: string;
  root: string;
  outside: string;
  env: NodeJS.ProcessEnv;
  p(rel: string): string;
  cleanup(): void;
}

export function makeRoot(opts: { wardenToml?: string; base?: string } = {}): TestRoot {
  const base = opts.base ?? mkdtempSync(join(tmpdir(), 'warden-test-'));
  const root = join(base, 'root');
  const outside = join(base, 'outside');
  mkdirSync(root, { recursive: true });
  mkdirSync(outside, { recursive: true });
  for (const d of ['config', 'orgs', 'blocks']) cpSync(join(FIXTURE, d), join(root, d), { recursive: true });
  writeFileSync(join(root, 'config', 'warden.toml'), opts.wardenToml ?? TEST_WARDEN_TOML);
  writeFileSync(join(outside, 'target.txt'), 'outside content\n');
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: join(base, 'state'), NO_COLOR: '1' };
  delete env.STATE_DIRECTORY;
  delete env.NOTIFY_SOCKET;
  delete env.WATCHDOG_USEC;
  // Retried: a daemon killed a moment ago may still have had a write in flight (ENOTEMPTY).
  return { base, root, outside, env, p: (rel) => join(root, rel), cleanup: () => rmSync(base, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }) };
}

export interface CliResult { code: number; stdout: string; stderr: string }

/** makeRoot, then `warden init`; a failed init fails the test with its stderr. */
export function makeInitRoot(opts: Parameters<typeof makeRoot>[0] = {}): TestRoot {
  const t = makeRoot(opts);
  const r = cli(t, ['init']);
  if (r.code !== 0) { t.cleanup(); throw new Error(`warden init exited ${r.code}: ${r.stderr}`); }
  return t;
}

/**
 * Roots and daemons a test file makes, stopped and removed together (call cleanup in
 * afterEach/after): daemons first, so none outlives its root. Every step runs whatever
 * the others did (a daemon that would not stop, a root that would not go), and every
 * child the test owns (test/helpers/children.ts) is killed, so a failed test leaves
 * nothing running.
 */
export function testWorld() {
  const roots: TestRoot[] = [];
  const daemons: Daemon[] = [];
  return {
    root(opts: Parameters<typeof makeRoot>[0] & { init?: boolean } = {}): TestRoot {
      const t = opts.init ? makeInitRoot(opts) : makeRoot(opts);
      roots.push(t);
      return t;
    },
    async daemon(t: TestRoot, args?: string[], env?: NodeJS.ProcessEnv, readyMs?: number): Promise<Daemon> {
      const d = await startDaemon(t, args, env, readyMs);
      daemons.push(d);
      return d;
    },
    async cleanup(): Promise<void> {
      await cleanupAll([
        ...daemons.splice(0).map((d) => () => d.stopWithin(10_000)),
        () => killOwned(),
        ...roots.splice(0).map((t) => () => t.cleanup()),
      ]);
    },
  };
}

export function cli(t: TestRoot, args: string[], opts: { input?: string | Buffer; env?: NodeJS.ProcessEnv } = {}): CliResult {
  const r = spawnSync(process.execPath, [CLI, ...args, '--root', t.root], { env: { ...t.env, ...opts.env }, input: opts.input ?? '', encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

export interface Daemon {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then wait for the exit (as long as it takes). */
  stop(): Promise<number | null>;
  /** SIGTERM; SIGKILL if it has not exited within `ms`. Never waits longer than that plus the kill. */
  stopWithin(ms: number): Promise<number | null>;
  kill9(): Promise<void>;
}

/**
 * `warden run` on the root, resolved once it prints `ready`. The child is owned
 * (children.ts) from the moment it is spawned: when it never gets ready, or exits first,
 * it is killed before the error is thrown, so a failed start leaves nothing running.
 */
export async function startDaemon(t: TestRoot, args: string[] = ['--guard'], env: NodeJS.ProcessEnv = {}, readyMs = 20_000, as?: { uid: number; gid: number }): Promise<Daemon> {
  // As another user: the CLI from a readable copy (the checkout may be private). A watch
  // layer blinded (a test seam): the CLI through seamed-main.ts, which sets it in-process.
  const seamed = Object.keys(env).some((k) => (SEAM_VAR_NAMES as readonly string[]).includes(k));
  const proc = own(spawn(process.execPath, [as ? readableCli() : seamed ? SEAMED_CLI : CLI, 'run', ...args, '--root', t.root], { env: { ...t.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], ...as }), `warden run ${args.join(' ')} --root ${t.root}`);
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d) => { out += String(d); });
  proc.stderr!.on('data', (d) => { err += String(d); });
  const exited = new Promise<number | null>((res) => proc.once('exit', (code) => res(code)));
  const kill9 = async (): Promise<void> => { if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL'); await exited; };
  try {
    await waitFor(() => out.includes('ready\n') || proc.exitCode !== null, readyMs, 'daemon ready');
  } catch (e) {
    await kill9();
    throw new Error(`${(e as Error).message}; the daemon was killed; its stderr: ${err}`);
  }
  if (!out.includes('ready\n')) { await kill9(); throw new Error(`daemon did not start: ${err}`); }
  return {
    proc,
    stdout: () => out,
    stderr: () => err,
    async stop() { if (proc.exitCode === null) proc.kill('SIGTERM'); return exited; },
    async stopWithin(ms: number) {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((r) => { timer = setTimeout(() => r('late'), ms); });
      const r = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (r !== 'late') return r;
      await kill9();
      throw new Error(`the daemon (pid ${proc.pid}) did not stop within ${ms} ms of SIGTERM; killed`);
    },
    kill9,
  };
}

export { waitFor } from './wait-for.js';

/**
 * Every alert in the root's alerts.jsonl. A missing file means "no alert yet" (the store
 * creates it with the first alert) and gives []; anything else that cannot be read, a torn
 * line or a line that is not an alert throws, so a "no alert was raised" assertion cannot
 * pass on a broken file.
 */
export function readAlertsOf(t: TestRoot): Alert[] {
  return readAlertsFile(t.p('snapshots/alerts.jsonl'));
}

/** readAlertsOf for a store given by its alerts.jsonl path (a store outside the root). */
export function readAlertsFile(file: string): Alert[] {
  let text: string;
  try { text = readFileSync(file, 'utf8'); } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  if (text !== '' && !text.endsWith('\n')) throw new Error(`${file}: the last line is torn (no newline at the end)`);
  return text.split('\n').filter(Boolean).map((line, i) => {
    let a: unknown;
    try { a = JSON.parse(line); } catch (e) { throw new Error(`${file}:${i + 1}: not JSON: ${(e as Error).message}`); }
    const r = a as Partial<Alert> | null;
    if (!r || typeof r !== 'object' || typeof r.id !== 'string' || typeof r.reason !== 'string') throw new Error(`${file}:${i + 1}: not an alert`);
    return a as Alert;
  });
}

export const sha = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

/** sha256 of a file's bytes; null only when nothing is there (anything else unreadable throws). */
export function fileSha(path: string): string | null {
  try { return sha(readFileSync(path)); } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/** A picture of a directory tree (type + content hash / link target + mode) to prove it did not change. */
export function treeSnapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out[r] = `link:${readlinkSync(p)}`;
      else if (st.isDirectory()) { out[r] = `dir:${(st.mode & 0o7777).toString(8)}`; walk(p, r); }
      else if (st.isFile()) out[r] = `file:${(st.mode & 0o7777).toString(8)}:${sha(readFileSync(p))}`;
      else out[r] = 'other';
    }
  };
  walk(dir, '');
  return out;
}

/** Approved state of the protected files right after init (content + mode). */
export function protectedPicture(t: TestRoot): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of ['config', 'orgs', 'blocks/conditional']) {
    const snap = treeSnapshot(t.p(d));
    for (const [k, v] of Object.entries(snap)) out[`${d}/${k}`] = v;
  }
  return out;
}

export function secretValues(t: TestRoot): string[] {
  const text = readFileSync(t.p('config/credentials.toml'), 'utf8');
  return [...text.matchAll(/=\s*"([^"]+)"/g)].map((m) => m[1] as string);
}
