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
import { cli, makeRoot, startDaemon, TEST_WARDEN_TOML, type Daemon, type TestRoot } from './root.js';
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
