/**
 * Which store a command uses (src/store/location.ts): the deployment never consults the
 * embedded store; a session prefers a state-directory store for the root; a system state
 * directory counts only when the account running the command owns it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chownSync, mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { locateStore, rootId, stateBase } from '../../src/store/location.js';

function world(): { base: string; root: string; done(): void } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'warden-loc-')));
  const root = join(base, 'root');
  mkdirSync(join(root, 'snapshots', 'baseline'), { recursive: true });
  return { base, root, done: () => rmSync(base, { recursive: true, force: true }) };
}

test('the guard unit ($STATE_DIRECTORY): the state store, even with ROOT/snapshots planted', () => {
  const w = world();
  try {
    const env = { STATE_DIRECTORY: join(w.base, 'warden-guard'), XDG_STATE_HOME: join(w.base, 'xdg') };
    const l = locateStore(w.root, env);
    assert.equal(l.mode, 'state');
    assert.equal(l.dir, join(w.base, 'warden-guard', 'stores', rootId(w.root)));
    assert.equal(l.exists, false, 'a planted ROOT/snapshots does not count as the store');
  } finally { w.done(); }
});

test('the notifier unit: its own $STATE_DIRECTORY is not the guard’s; the system guard directory is', () => {
  const w = world();
  try {
    const sys = join(w.base, 'lib', 'warden-guard');
    mkdirSync(sys, { recursive: true, mode: 0o700 });
    const env = { STATE_DIRECTORY: join(w.base, 'lib', 'warden-notify'), WARDEN_GUARD_STATE_DIR: sys, XDG_STATE_HOME: join(w.base, 'xdg') };
    assert.deepEqual(stateBase(env), { dir: sys, deployment: true });
    assert.equal(locateStore(w.root, env).mode, 'state');
  } finally { w.done(); }
});

test('a system guard directory of another account is not ours: a session', () => {
  const w = world();
  try {
    const sys = join(w.base, 'lib', 'warden-guard');
    mkdirSync(sys, { recursive: true, mode: 0o700 });
    chownSync(sys, 65534, 65534);
    const env = { WARDEN_GUARD_STATE_DIR: sys, XDG_STATE_HOME: join(w.base, 'xdg') };
    assert.equal(stateBase(env).deployment, false);
    const l = locateStore(w.root, env);
    assert.equal(l.mode, 'embedded');
    assert.equal(l.dir, join(w.root, 'snapshots'));
  } finally { w.done(); }
});

test('a session: ROOT/snapshots unless the state directory holds a store for this root', () => {
  const w = world();
  try {
    const env = { XDG_STATE_HOME: join(w.base, 'xdg'), WARDEN_GUARD_STATE_DIR: join(w.base, 'none') };
    assert.equal(locateStore(w.root, env).mode, 'embedded');
    mkdirSync(join(w.base, 'xdg', 'warden', 'stores', rootId(w.root)), { recursive: true });
    const l = locateStore(w.root, env);
    assert.equal(l.mode, 'state');
    assert.equal(l.exists, true);
  } finally { w.done(); }
});
