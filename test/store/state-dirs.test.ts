/**
 * Where a root's store and key live (src/store/location.ts), against real directories: the
 * guard's state directory (systemd's list, or the system directory when it is ours), else
 * $XDG_STATE_HOME/warden; the embedded store ROOT/snapshots only when the state directory
 * holds none for this root.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { chownSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { locateStore, rootId, runtimeBase, stateBase, storeDirOf, systemRuntimeDir, systemStateDir } from '../../src/store/location.js';
import { ioBase, ioSuite } from '../helpers/io-store.js';

let n = 0;
function dir(): string { const d = join(ioBase(), `loc-${++n}`); mkdirSync(d, { recursive: true }); return d; }
/** An environment naming no guard directory that exists. */
const none = (d: string, more: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ WARDEN_GUARD_STATE_DIR: join(d, 'no-state'), WARDEN_GUARD_RUNTIME_DIR: join(d, 'no-run'), ...more });

ioSuite('store I/O: where the store and key live (location.ts)', () => {
  describe('rootId', () => {
    it('is the first 16 hex digits of the sha256 of the root path', () => {
      assert.equal(rootId('/srv/agent'), createHash('sha256').update('/srv/agent').digest('hex').slice(0, 16));
      assert.match(rootId('/x'), /^[0-9a-f]{16}$/);
      assert.notEqual(rootId('/x'), rootId('/x/'));
    });
  });

  describe('stateBase', () => {
    it("systemd's STATE_DIRECTORY: its first absolute entry that is not the notifier's", () => {
      const d = dir();
      assert.deepEqual(stateBase(none(d, { STATE_DIRECTORY: '/a/warden-guard' })), { dir: '/a/warden-guard', deployment: true });
      assert.deepEqual(stateBase(none(d, { STATE_DIRECTORY: '/b/warden-notify:/a/warden-guard' })), { dir: '/a/warden-guard', deployment: true });
      assert.deepEqual(stateBase(none(d, { STATE_DIRECTORY: 'relative:/c/guard' })), { dir: '/c/guard', deployment: true });
      // Only the notifier's own directory (or nothing absolute): not the guard's.
      const xdg = join(d, 'xdg');
      assert.deepEqual(stateBase(none(d, { STATE_DIRECTORY: '/b/warden-notify', XDG_STATE_HOME: xdg })), { dir: join(xdg, 'warden'), deployment: false });
      assert.deepEqual(stateBase(none(d, { STATE_DIRECTORY: '', XDG_STATE_HOME: xdg })), { dir: join(xdg, 'warden'), deployment: false });
    });

    it('the system state directory counts only when it is a real directory of this user', () => {
      const d = dir();
      const sys = join(d, 'sys');
      const xdg = join(d, 'xdg');
      const env = { WARDEN_GUARD_STATE_DIR: sys, XDG_STATE_HOME: xdg };
      assert.deepEqual(stateBase(env), { dir: join(xdg, 'warden'), deployment: false }, 'absent');
      writeFileSync(sys, '');
      assert.deepEqual(stateBase(env), { dir: join(xdg, 'warden'), deployment: false }, 'a file');
      const real = join(d, 'real');
      mkdirSync(real);
      const link = join(d, 'link');
      symlinkSync(real, link);
      assert.deepEqual(stateBase({ ...env, WARDEN_GUARD_STATE_DIR: link }), { dir: join(xdg, 'warden'), deployment: false }, 'a link to a directory');
      assert.deepEqual(stateBase({ ...env, WARDEN_GUARD_STATE_DIR: real }), { dir: real, deployment: true }, 'our own directory');
      if (process.geteuid?.() === 0) {
        const theirs = join(d, 'theirs');
        mkdirSync(theirs);
        chownSync(theirs, 4242, 4242);
        assert.deepEqual(stateBase({ ...env, WARDEN_GUARD_STATE_DIR: theirs }), { dir: join(xdg, 'warden'), deployment: false }, "another user's");
      }
    });

    it('XDG_STATE_HOME when absolute, else ~/.local/state; the guard directories default to /var/lib and /run', () => {
      const d = dir();
      assert.deepEqual(stateBase(none(d, { XDG_STATE_HOME: '/x/y' })), { dir: '/x/y/warden', deployment: false });
      const home = join(homedir(), '.local', 'state', 'warden');
      assert.deepEqual(stateBase(none(d, { XDG_STATE_HOME: 'x/y' })), { dir: home, deployment: false });
      assert.deepEqual(stateBase(none(d)), { dir: home, deployment: false });
      assert.equal(systemStateDir({}), '/var/lib/warden-guard');
      assert.equal(systemStateDir({ WARDEN_GUARD_STATE_DIR: 'rel/dir' }), '/var/lib/warden-guard');
      assert.equal(systemStateDir({ WARDEN_GUARD_STATE_DIR: '/opt/st' }), '/opt/st');
      assert.equal(systemRuntimeDir({}), '/run/warden-guard');
      assert.equal(systemRuntimeDir({ WARDEN_GUARD_RUNTIME_DIR: 'rel' }), '/run/warden-guard');
      assert.equal(systemRuntimeDir({ WARDEN_GUARD_RUNTIME_DIR: '/opt/rt' }), '/opt/rt');
    });
  });

  describe('runtimeBase', () => {
    it("systemd's RUNTIME_DIRECTORY, else the system runtime directory when ours, else none", () => {
      const d = dir();
      assert.equal(runtimeBase(none(d, { RUNTIME_DIRECTORY: '/run/warden-notify:/run/warden-guard' })), '/run/warden-guard');
      assert.equal(runtimeBase(none(d, { RUNTIME_DIRECTORY: '/run/warden-notify' })), null);
      assert.equal(runtimeBase(none(d)), null);
      const rt = join(d, 'rt');
      mkdirSync(rt);
      assert.equal(runtimeBase(none(d, { WARDEN_GUARD_RUNTIME_DIR: rt })), rt);
    });
  });

  describe('locateStore', () => {
    it('a session: ROOT/snapshots until the state directory holds a store for this root, which then wins', () => {
      const d = dir();
      const root = join(d, 'root');
      mkdirSync(root);
      const xdg = join(d, 'xdg');
      const env = none(d, { XDG_STATE_HOME: xdg });
      const base = { dir: join(xdg, 'warden'), deployment: false };
      const id = rootId(root);
      assert.deepEqual(locateStore(root, env), { root, id, mode: 'embedded', dir: join(root, 'snapshots'), base, runtimeDir: null, exists: false });
      mkdirSync(join(root, 'snapshots'));
      assert.deepEqual(locateStore(root, env), { root, id, mode: 'embedded', dir: join(root, 'snapshots'), base, runtimeDir: null, exists: true });
      assert.equal(storeDirOf(root, env), join(root, 'snapshots'));
      // A file in the state directory's place is no store there.
      mkdirSync(join(xdg, 'warden', 'stores'), { recursive: true });
      writeFileSync(join(xdg, 'warden', 'stores', id), '');
      assert.equal(locateStore(root, env).mode, 'embedded');
      const other = join(d, 'root2');
      mkdirSync(join(xdg, 'warden', 'stores', rootId(other)));
      assert.deepEqual(locateStore(other, env), { root: other, id: rootId(other), mode: 'state', dir: join(xdg, 'warden', 'stores', rootId(other)), base, runtimeDir: null, exists: true });
      assert.equal(storeDirOf(other, env), join(xdg, 'warden', 'stores', rootId(other)));
    });

    it('the deployment: always the state directory (the embedded store is never consulted), the socket beside the runtime directory', () => {
      const d = dir();
      const root = join(d, 'root');
      mkdirSync(join(root, 'snapshots'), { recursive: true });
      const st = join(d, 'warden-guard');
      const id = rootId(root);
      const env = none(d, { STATE_DIRECTORY: st, RUNTIME_DIRECTORY: '/run/x-guard' });
      assert.deepEqual(locateStore(root, env), { root, id, mode: 'state', dir: join(st, 'stores', id), base: { dir: st, deployment: true }, runtimeDir: join('/run/x-guard', id), exists: false });
      mkdirSync(join(st, 'stores', id), { recursive: true });
      assert.equal(locateStore(root, env).exists, true);
    });
  });
});
