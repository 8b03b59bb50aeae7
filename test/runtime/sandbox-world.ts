/**
 * Shared by the sandbox tests: a world (a workspace, memories, policy files), and a runtime
 * that runs a member's argv in it through `runSandboxed`, as root (this process) or as an
 * ordinary uid (a child runtime started with setpriv: test/runtime/sandbox-child.ts).
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, openSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPolicy, type SessionContext } from '../../src/policy/index.js';
import { prepareSandbox, runSandboxed, sandboxPlanFor, startSandbox, type SandboxResult } from '../../src/runtime/index.js';

export const ALICE = '222222222222222222';
export const BOOK_CH = '444444444444444444';
export const GUILD_CTX: SessionContext = { kind: 'guild', guild: '1', channel: BOOK_CH };
export const isRoot = process.getuid?.() === 0;

/** Why bwrap cannot run here, or null. */
export function bwrapMissing(): string | null {
  const v = spawnSync('bwrap', ['--version'], { encoding: 'utf8' });
  if (v.error) return `bwrap is not installed (${(v.error as NodeJS.ErrnoException).code}; Debian package bubblewrap)`;
  const r = spawnSync('bwrap', ['--unshare-all', '--unshare-user', '--ro-bind', '/usr', '/usr', '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--', '/usr/bin/true'], { encoding: 'utf8' });
  if (r.status !== 0) return `bwrap cannot create its namespaces here (${(r.stderr || String(r.status)).trim()})`;
  if (isRoot && spawnSync('setpriv', ['--version']).error) return 'setpriv is not installed (util-linux)';
  if (spawnSync('/usr/bin/prlimit', ['--version']).error) return '/usr/bin/prlimit is not installed (util-linux)';
  if (spawnSync('ldd', ['--version']).error) return 'ldd is not installed (libc-bin)';
  return null;
}

/** The runtimes a test runs under: this process, and (as root) a child runtime as uid 65534. */
export const RUNTIMES: { who: 'self' | 'nobody'; label: string }[] = isRoot
  ? [{ who: 'self', label: 'runtime as root' }, { who: 'nobody', label: 'runtime as uid 65534' }]
  : [{ who: 'self', label: 'runtime as this user' }];

const q = (xs: string[]) => `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;
export const orgToml = (members: string[], channels: string[], folders: string[], commands: string[]) =>
  `members = ${q(members)}\nchannels = ${q(channels)}\nfolders = ${q(folders)}\ncommands = ${q(commands)}\nhourly_cap = 5\n`;

export interface World {
  base: string; ws: string; mem: string;
  files: { path: string; text: string }[];
  /** Write a file (parents made, everything world-readable so uid 65534 may read it). */
  put(rel: string, text: string): string;
  link(rel: string, target: string): void;
  done(): void;
}

/** A world whose org bookclub (ALICE, channel BOOK_CH) has `folders`, `commands`, and conditions.toml `conditions`. */
export function world(folders: string[], conditions: string, commands = ['cat', 'sh', 'ls', 'find', 'git log', 'grep', 'touch', 'env', 'sleep', 'head', 'id', 'mount']): World {
  const base = mkdtempSync(join(tmpdir(), 'warden-sandbox-'));
  chmodSync(base, 0o755);
  const ws = join(base, 'workspace');
  const mem = join(base, 'memories');
  mkdirSync(ws, { mode: 0o755 });
  mkdirSync(mem, { mode: 0o755 });
  const files = [
    { path: 'config/conditions.toml', text: conditions || '[workspace."/nothing-here/"]\nwhen = "discord:dm"\naction = "deny"\n' },
    { path: 'config/guests.toml', text: 'channels = []\nfolders = []\n' },
    { path: 'config/warden.toml', text: '[owner]\ndiscord_id = "123456789012345678"\n' },
    { path: 'orgs/bookclub.toml', text: orgToml([ALICE], [BOOK_CH], folders, commands) },
    { path: 'orgs/other.toml', text: orgToml(['333333333333333333'], ['888888888888888888'], ['/workspace/other/'], ['cat']) },
  ];
  assert.deepEqual(buildPolicy(files).errors, []);
  const mkParents = (p: string) => {
    const parts: string[] = [];
    for (let d = dirname(p); d.length > base.length; d = dirname(d)) parts.unshift(d);
    for (const d of parts) { mkdirSync(d, { recursive: true }); chmodSync(d, 0o755); }
  };
  return {
    base, ws, mem, files,
    put(rel, text) { const p = join(base, rel); mkParents(p); writeFileSync(p, text, { mode: 0o644 }); chmodSync(p, 0o644); return p; },
    link(rel, target) { const p = join(base, rel); mkParents(p); symlinkSync(target, p); },
    done() { rmSync(base, { recursive: true, force: true }); },
  };
}

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'sandbox-child.js');

/**
 * Run argv for ALICE in ctx through the plan, by a runtime running as `who`, with `env`
 * added to that runtime's environment (a token the command must never see).
 */
export function runMember(w: World, who: 'self' | 'nobody', argv: string[], opts: { ctx?: SessionContext; env?: Record<string, string>; timeoutMs?: number; swap?: { dir: string; to: string } } = {}): Promise<SandboxResult> {
  const ctx = opts.ctx ?? GUILD_CTX;
  const dirs = { workspaceDir: w.ws, memoriesDir: w.mem };
  if (BEFORE) return runBefore(BEFORE, w, who, argv, ctx, dirs, opts);
  if (who === 'self') {
    const saved: Record<string, string | undefined> = {};
    for (const [k, v] of Object.entries(opts.env ?? {})) { saved[k] = process.env[k]; process.env[k] = v; }
    try {
      const plan = sandboxPlanFor(buildPolicy(w.files).policy, ALICE, ctx, argv, dirs);
      if (!opts.swap) return runSandboxed(plan, { timeoutMs: opts.timeoutMs ?? 20_000 });
      const prepared = prepareSandbox(plan);
      renameSync(opts.swap.dir, `${opts.swap.dir}.old`);
      symlinkSync(opts.swap.to, opts.swap.dir);
      return startSandbox(plan, prepared, { timeoutMs: opts.timeoutMs ?? 20_000 });
    } finally {
      for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
    }
  }
  return new Promise((resolve, reject) => {
    const c = spawn('setpriv', ['--reuid', '65534', '--regid', '65534', '--clear-groups', '--', process.execPath, CHILD],
      { env: { ...process.env, ...(opts.env ?? {}) }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    c.stdout.on('data', (b: Buffer) => { out += b.toString('utf8'); });
    c.stderr.on('data', (b: Buffer) => { err += b.toString('utf8'); });
    c.on('error', reject);
    c.on('close', (code) => {
      if (code !== 0) { reject(new Error(`child runtime failed (${code}): ${err}`)); return; }
      resolve(JSON.parse(out) as SandboxResult);
    });
    c.stdin.end(JSON.stringify({ files: w.files, user: ALICE, ctx, argv, dirs, timeoutMs: opts.timeoutMs ?? 20_000, swap: opts.swap }));
  });
}

/** Wait until `check` holds, or fail at the deadline. */
export async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * The reproduction against an older build: WARDEN_SANDBOX_BEFORE=<its dist directory> runs
 * these tests on that build's plan the way docs/RUNTIME.md then showed it
 * (execFile(plan.file, plan.args), the runtime's environment inherited). Test-only.
 */
const BEFORE = process.env.WARDEN_SANDBOX_BEFORE ?? '';
async function runBefore(dist: string, w: World, who: 'self' | 'nobody', argv: string[], ctx: SessionContext, dirs: { workspaceDir: string; memoriesDir: string },
  opts: { env?: Record<string, string>; timeoutMs?: number; swap?: { dir: string; to: string } }): Promise<SandboxResult> {
  const old = await import(join(dist, 'src/runtime/index.js')) as { sandboxPlanFor: (...a: unknown[]) => { ok: boolean; file: string; args: string[]; reason?: string } };
  const pol = await import(join(dist, 'src/policy/index.js')) as { buildPolicy: typeof buildPolicy };
  const plan = old.sandboxPlanFor(pol.buildPolicy(w.files).policy, ALICE, ctx, argv, dirs);
  if (!plan.ok) throw new Error(plan.reason);
  if (opts.swap) { renameSync(opts.swap.dir, `${opts.swap.dir}.old`); symlinkSync(opts.swap.to, opts.swap.dir); }
  const [file, args] = who === 'nobody' ? ['setpriv', ['--reuid', '65534', '--regid', '65534', '--clear-groups', '--', plan.file, ...plan.args]] as const : [plan.file, plan.args] as const;
  return new Promise((resolve) => {
    const c = spawn(file, args, { env: { ...process.env, ...(opts.env ?? {}) }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    const t = setTimeout(() => c.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
    c.stdout.on('data', (b: Buffer) => { stdout += b.toString('utf8'); });
    c.stderr.on('data', (b: Buffer) => { stderr += b.toString('utf8'); });
    c.on('close', (code, signal) => { clearTimeout(t); resolve({ code, signal, stdout, stderr, timedOut: false, truncated: false }); });
  });
}

/** Open a file in this process without close-on-exec (what Node never does by itself): every child inherits it. */
export function inheritable(path: string): number {
  const koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
  const fcntl = koffi.load('libc.so.6').func('int fcntl(int fd, int cmd, int arg)') as (fd: number, cmd: number, arg: number) => number;
  const fd = openSync(path, 'r');
  assert.equal(fcntl(fd, 2 /* F_SETFD */, 0), 0);
  return fd;
}
