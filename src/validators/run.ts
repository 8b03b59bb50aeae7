/**
 * The harness's I/O (docs/RUNTIMES.md, "The runtime's own check"): a fresh 0700 scratch
 * home holding a copy of the candidate, the runtime's check run there with no network, a
 * minimal environment and a time limit (its whole process group killed), the scratch
 * removed, and the verdict. The real file is never opened by the check: it sees bytes.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { buildPlan, exposedWithin, isScript, wrap } from './plan.js';
import { judge, unavailable, type Outcome } from './verdict.js';
import { locateProgram, pickNode, probeIsolation } from './locate.js';
import type { Isolation, ValidatorSpec, Verdict } from './spec.js';

export interface ValidateOptions {
  /** The runtime's npm package (its node_modules directory); else the program is looked up on `searchPath`. */
  packageDir?: string;
  /** Where to look for the program (default: this process's PATH). */
  searchPath?: string;
  /** Node binaries for script launchers, first new enough wins (default: this Node). */
  nodes?: readonly string[];
  /** More directories to hide from the check (warden's state directory). */
  hide?: readonly string[];
  /** Where the scratch home is made (default: the system's temporary directory). */
  tmpDir?: string;
  /** Force an isolation (tests); "none" is never run. */
  isolation?: Isolation;
}

/** Hidden behind an empty tmpfs inside bubblewrap, when present: every user's home and runtime directory, warden's state (docs/DEPLOY.md). */
export const HIDDEN = ['/home', '/root', '/run/user', '/var/lib/warden-guard', '/var/lib/warden-notify', '/run/warden-guard'];
/** Files shown as empty inside bubblewrap, when present. */
export const HIDDEN_FILES = ['/etc/shadow', '/etc/gshadow', '/proc/sysrq-trigger'];

const CAP = 256 * 1024;
/** How long the output pipes may stay open after the check exited. */
const CLOSE_GRACE_MS = 1000;

function collect(stream: NodeJS.ReadableStream | null, into: { text: string }): void {
  stream?.setEncoding('utf8');
  stream?.on('data', (d: string) => { if (into.text.length < CAP) into.text += d.slice(0, CAP - into.text.length); });
}

/** Run the runtime's own check on `candidate` (the bytes a change would write to the file shown as `shownAs`). */
export async function validate(spec: ValidatorSpec, candidate: string | Uint8Array, shownAs: string, o: ValidateOptions = {}): Promise<Verdict> {
  const where = locateProgram(spec, { ...(o.packageDir !== undefined ? { packageDir: o.packageDir } : {}), ...(o.searchPath !== undefined ? { searchPath: o.searchPath } : {}) });
  if ('reason' in where) return unavailable(spec, where.reason);
  const node = pickNode(spec, o.nodes ?? [process.execPath]);
  if (typeof node !== 'string') return unavailable(spec, node.reason);
  const iso = o.isolation !== undefined ? { isolation: o.isolation, reason: 'forced' } : probeIsolation();
  if (iso.isolation === 'none') return unavailable(spec, iso.reason);
  if (iso.isolation !== 'bwrap' && spec.mayRunCode) return unavailable(spec, `${spec.runtime} ${spec.name} may run code the candidate names and needs bubblewrap (${iso.reason})`);

  const scratch = mkdtempSync(join(o.tmpDir ?? tmpdir(), 'warden-validate-'));
  try {
    const plan = buildPlan(spec, { scratch, program: where.program, pathDirs: [dirname(node)], name: shownAs.split('/').pop() ?? '', ...(isScript(where.program) ? { interpreter: node } : {}) });
    for (const d of plan.dirs) mkdirSync(d, { recursive: true, mode: 0o700 });
    writeFileSync(plan.candidate, candidate, { flag: 'wx', mode: 0o600 });
    const hide = [...HIDDEN, ...(o.hide ?? [])].filter((h) => existsSync(h));
    const expose = exposedWithin([where.packageRoot, dirname(node)], ['/tmp', ...hide]);
    const run = wrap(plan, scratch, { isolation: iso.isolation, root: process.getuid?.() === 0, hide, expose, blank: HIDDEN_FILES.filter((f) => existsSync(f)) });
    const outcome = await spawnBounded(run.file, run.args, { cwd: plan.cwd, env: plan.env, timeoutMs: spec.timeoutMs, statusFd: iso.isolation === 'bwrap' });
    if (iso.isolation === 'unshare' && outcome.exitCode === 1 && /^unshare: /.test(outcome.stderr)) outcome.started = false;
    return judge(spec, outcome, { candidate: plan.candidate, scratch, shownAs, isolation: iso.isolation });
  } catch (e) {
    return { ...unavailable(spec, `could not run: ${(e as Error).message}`), status: 'error' };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Spawn in a process group of its own; at the deadline, and again once it exits, the whole group is killed. */
export function spawnBounded(file: string, args: readonly string[], o: { cwd: string; env: Record<string, string>; timeoutMs: number; statusFd?: boolean }): Promise<Outcome> {
  return new Promise((resolve) => {
    const started = performance.now();
    const out = { text: '' };
    const err = { text: '' };
    const status = { text: '' };
    let timedOut = false;
    let exited: { code: number | null; signal: string | null; ms: number } | undefined;
    const child = spawn(file, args, { cwd: o.cwd, env: o.env, stdio: o.statusFd === true ? ['ignore', 'pipe', 'pipe', 'pipe'] : ['ignore', 'pipe', 'pipe'], detached: true });
    const killGroup = (): void => {
      if (child.pid === undefined) return;
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* the group is gone */ }
    };
    const timer = setTimeout(() => { timedOut = true; killGroup(); }, o.timeoutMs);
    collect(child.stdout, out);
    collect(child.stderr, err);
    if (o.statusFd === true) collect(child.stdio[3] as NodeJS.ReadableStream | null, status);
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const e = exited ?? { code: null, signal: null, ms: performance.now() - started };
      const outcome: Outcome = { exitCode: e.code, signal: e.signal, timedOut, stdout: out.text, stderr: err.text, durationMs: e.ms };
      if (o.statusFd === true) outcome.started = status.text.includes('"child-pid"');
      resolve(outcome);
    };
    child.on('error', (e) => { err.text += `${e.message}\n`; exited ??= { code: null, signal: null, ms: performance.now() - started }; finish(); });
    child.on('exit', (code, signal) => {
      exited = { code, signal, ms: performance.now() - started };
      // whatever it left behind in its group goes with it (its pipes then close); a process
      // of another session that still holds them (out of the group's reach under unshare)
      // is not waited for: the output read so far is the answer
      killGroup();
      setTimeout(() => { child.stdout?.destroy(); child.stderr?.destroy(); child.stdio[3]?.destroy(); finish(); }, CLOSE_GRACE_MS).unref();
    });
    child.on('close', finish);
  });
}
