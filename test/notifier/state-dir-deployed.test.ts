/**
 * Where the deployment's guard finds the notifier's delivery state (docs/DEPLOY.md §2.6.1:
 * the guard blanks a one-time code in the outbox once it was delivered). The guard runs
 * with $STATE_DIRECTORY=/var/lib/warden-guard; the notifier unit keeps its state in its
 * own StateDirectory=, /var/lib/warden-notify. A guard that looked in its own state
 * directory never saw a delivery, and the code stayed in the outbox until its request was
 * settled.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findNotifierStateDir } from '../../src/notifier/delivery-state.js';

const base = mkdtempSync(join(tmpdir(), 'warden-notify-dir-'));
after(() => rmSync(base, { recursive: true, force: true }));
const guardState = join(base, 'warden-guard');
const notifyState = join(base, 'warden-notify');
mkdirSync(guardState, { mode: 0o700 });
mkdirSync(notifyState, { mode: 0o700 });
const root = join(base, 'root');
const env = { HOME: base, WARDEN_GUARD_STATE_DIR: guardState, WARDEN_NOTIFY_STATE_DIR: notifyState };

describe('the notifier\'s delivery state in the deployment', () => {
  it('the guard unit ($STATE_DIRECTORY is its own) reads the notifier unit\'s state directory', () => {
    assert.equal(findNotifierStateDir(root, { ...env, STATE_DIRECTORY: guardState }), notifyState);
  });
  it('the notifier unit keeps its own StateDirectory=', () => {
    assert.equal(findNotifierStateDir(root, { ...env, STATE_DIRECTORY: notifyState }), notifyState);
  });
  it('a command run as the warden account (no $STATE_DIRECTORY) reads the notifier unit\'s', () => {
    assert.equal(findNotifierStateDir(root, env), notifyState);
  });
});
