/**
 * A temporary home for a profile's root, the real CLI run in it, and `warden run --guard
 * --profile …` started against it (docs/PROFILES.md, "A profile's root"): what the
 * profile-root integration tests share. Each test file makes one world and calls stopGuards
 * after each test and removeHomes at the end.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, waitFor } from './root.js';
import { own } from './children.js';

export interface ProfileHome { top: string; home: string; env: NodeJS.ProcessEnv; stateDir: string }
export interface RunningGuard { stop(): Promise<void>; err(): string; out(): string }

/** Variables of the test runner's environment that would point warden elsewhere. */
const DROPPED = ['STATE_DIRECTORY', 'NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WARDEN_ROOT', 'XDG_CONFIG_HOME'];

export function profileWorld(prefix: string) {
  const homes: ProfileHome[] = [];
  const guards: RunningGuard[] = [];
  return {
    /** A new empty home (`top/home`), its state in `top/state`; `env` adds to, `drop` removes from its environment. */
    home(env: NodeJS.ProcessEnv = {}, drop: readonly string[] = []): ProfileHome {
      const top = realpathSync(mkdtempSync(join(tmpdir(), `warden-${prefix}-`)));
      const home = join(top, 'home');
      mkdirSync(home, { recursive: true });
      const e: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: join(top, 'state'), WARDEN_GUARD_STATE_DIR: join(top, 'no-guard-state'), WARDEN_GUARD_RUNTIME_DIR: join(top, 'no-guard-run'), NO_COLOR: '1', HOME: home, ...env };
      for (const k of [...DROPPED, ...drop]) delete e[k];
      const h = { top, home, env: e, stateDir: join(top, 'state', 'warden') };
      homes.push(h);
      return h;
    },
    /** The real CLI in that home. */
    cli(h: ProfileHome, args: string[], input = ''): { code: number; stdout: string; stderr: string } {
      const r = spawnSync(process.execPath, [CLI, ...args], { env: h.env, cwd: '/', input, encoding: 'utf8', timeout: 60_000 });
      return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
    },
    /** `warden run --guard SEL…` (or `mode`), resolved once it prints `ready`. */
    async guard(h: ProfileHome, sel: string[], mode: string[] = ['--guard']): Promise<RunningGuard> {
      const proc = own(spawn(process.execPath, [CLI, 'run', ...mode, ...sel], { env: h.env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] }), `warden run ${mode.join(' ')} ${sel.join(' ')}`);
      let out = '';
      let err = '';
      proc.stdout!.on('data', (d) => { out += String(d); });
      proc.stderr!.on('data', (d) => { err += String(d); });
      const exited = new Promise<void>((r) => proc.once('exit', () => r()));
      await waitFor(() => out.includes('ready\n') || proc.exitCode !== null, 20_000, 'guard ready');
      assert.ok(out.includes('ready\n'), `the guard did not start: ${err}`);
      const g: RunningGuard = { async stop() { if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM'); await exited; }, err: () => err, out: () => out };
      guards.push(g);
      return g;
    },
    async stopGuards(): Promise<void> { for (const g of guards.splice(0)) await g.stop(); },
    removeHomes(): void { for (const h of homes.splice(0)) rmSync(h.top, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }); },
  };
}
