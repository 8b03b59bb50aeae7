/** Run a command on a pseudo-terminal and answer its prompts (test/helpers/pty_run.py). */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { CLI, REPO, type TestRoot } from './root.js';

export const PTY_RUN = join(REPO, 'test', 'helpers', 'pty_run.py');

export interface PtyOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** The script's own deadline for the whole run, in seconds (default 30). */
  deadlineS?: number;
  /** Give the last answer again to every later match. */
  repeatLast?: boolean;
  /** spawnSync's timeout, ms (default: the deadline plus 30 s). */
  timeoutMs?: number;
}

export interface PtyResult { code: number; stdout: string; stderr: string; out: string }

/** Run cmd on a fresh terminal; answers are [regex, text], each typed once its regex appears. */
export function ptyRun(answers: [string, string][], cmd: string[], opts: PtyOptions = {}): PtyResult {
  const deadline = opts.deadlineS ?? 30;
  const flags = ['--deadline', String(deadline), ...(opts.repeatLast ? ['--repeat-last'] : [])];
  const r = spawnSync('python3', [PTY_RUN, ...flags, JSON.stringify(answers), '--', ...cmd],
    { env: opts.env, cwd: opts.cwd, encoding: 'utf8', timeout: opts.timeoutMs ?? (deadline + 30) * 1000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr, out: r.stdout + r.stderr };
}

/** The real CLI on a terminal, against a test root. */
export function ptyCli(t: TestRoot, answers: [string, string][], args: string[], env: NodeJS.ProcessEnv = {}, opts: PtyOptions = {}): PtyResult {
  return ptyRun(answers, [process.execPath, CLI, ...args, '--root', t.root], { ...opts, env: { ...t.env, ...env } });
}
