/**
 * Fresh initialised roots and guard daemons for the tests that attack the real daemon
 * (test/guard/hostile-names, stderr-failures, inotify-exhausted, quarantine-nothing-lost,
 * revert-priority, no-blinding, no-leak, long-name-apply, hung-history). Importing this module
 * registers one afterEach: every daemon started through it is stopped, every process owned
 * killed, every cleanup pushed run and every root removed, whatever the others did (a daemon
 * that will not stop must not skip a userdel).
 */
import { afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cli, makeRoot, startDaemon, TEST_WARDEN_TOML, type Daemon, type TestRoot } from './root.js';
import { readableCli } from './readable-copy.js';
import { cleanupAll, killOwned } from './children.js';

export const roots: TestRoot[] = [];
export const daemons: Daemon[] = [];
export const cleanups: (() => void)[] = [];

export function fresh(wardenToml = TEST_WARDEN_TOML.replace('rescan_seconds = 30', 'rescan_seconds = 5')): TestRoot {
  const t = makeRoot({ wardenToml });
  roots.push(t);
  assert.equal(cli(t, ['init']).code, 0);
  return t;
}
export async function daemon(t: TestRoot, env?: NodeJS.ProcessEnv): Promise<Daemon> {
  const d = await startDaemon(t, ['--guard'], env);
  daemons.push(d);
  return d;
}

afterEach(() => cleanupAll([
  ...daemons.splice(0).map((d) => () => d.stopWithin(10_000)),
  () => killOwned(),
  ...cleanups.splice(0),
  ...roots.splice(0).map((t) => () => t.cleanup()),
]));

/** A throwaway user who owns the root and runs warden: root bypasses every permission, the owner does not. */
export function asUser(t: TestRoot): { uid: number; gid: number; cli(args: string[]): { code: number; stdout: string; stderr: string }; daemon(): Promise<Daemon> } {
  const name = `wt12${Math.random().toString(36).slice(2, 8)}`;
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
  cleanups.push(() => { spawnSync('userdel', [name]); });
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
  execFileSync('chown', ['-R', `${uid}:${gid}`, t.base]);
  const env = { ...t.env, HOME: t.base };
  return {
    uid, gid,
    cli(args) {
      const r = spawnSync(process.execPath, [readableCli(), ...args, '--root', t.root], { env, uid, gid, encoding: 'utf8', timeout: 60_000 });
      return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
    },
    async daemon() {
      const d = await startDaemon(t, ['--guard'], { HOME: t.base }, 20_000, { uid, gid });
      daemons.push(d);
      return d;
    },
  };
}

export function freshAsUser(rescanSeconds = 5): { t: TestRoot; u: ReturnType<typeof asUser> } {
  const t = makeRoot({ wardenToml: TEST_WARDEN_TOML.replace('rescan_seconds = 30', `rescan_seconds = ${rescanSeconds}`) });
  roots.push(t);
  const u = asUser(t);
  const init = u.cli(['init']);
  assert.equal(init.code, 0, init.stderr);
  return { t, u };
}
