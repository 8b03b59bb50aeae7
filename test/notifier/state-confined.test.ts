/**
 * The embedded notifier's state (snapshots/notify/delivery-state.json) is written and read
 * beneath the root, never through a link: a snapshots/notify swapped for a link to a
 * directory outside is refused, and a delivery-state.json that is a link is replaced, not
 * followed (write-file-atomic would resolve it and overwrite the link's target).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startNotifier } from '../../src/notifier/index.js';
import { defaultNotifierStateDir, readDeliveryState } from '../../src/notifier/delivery-state.js';
import { config, fixture } from './helpers.js';

async function runOnce(root: string, stateDir: string, cfg: ReturnType<typeof config>, logs: string[]): Promise<void> {
  const n = await startNotifier({ root, stateDir, config: cfg, log: (l) => logs.push(l), timing: { pollMs: 50 } });
  await n.stop();
}

test('embedded: snapshots/notify swapped for a link outside the root: no state written or read through it', async () => {
  const fx = fixture();
  try {
    const outside = join(fx.dir, 'outside-notify');
    mkdirSync(outside);
    // What someone outside would like warden to believe: everything delivered.
    const forged = JSON.stringify({ version: 1, root: fx.root, updated: 'x', notifier: { pid: 1, started: 'x' }, channels: { desktop: { status: 'ok', delivered: {}, attempts: {}, last_success: null, last_alert_message: null, last_error: null, next_attempt: null } }, expired: {}, last_liveness: null });
    writeFileSync(join(outside, 'delivery-state.json'), forged);
    symlinkSync(outside, join(fx.root, 'snapshots/notify'));
    const logs: string[] = [];
    await runOnce(fx.root, defaultNotifierStateDir(fx.root, true), config(fx, null), logs);
    assert.deepEqual(readdirSync(outside), ['delivery-state.json'], 'no temp or state file written outside the root');
    assert.equal(readFileSync(join(outside, 'delivery-state.json'), 'utf8'), forged, 'the outside file is untouched');
    assert.ok(logs.some((l) => /cannot write delivery state/.test(l) && /ELOOP|ENOTDIR/.test(l)), logs.join('\n'));
    assert.equal(readDeliveryState(fx.root, defaultNotifierStateDir(fx.root, true)).stateFound, false, 'state behind a link is not read');
  } finally { fx.cleanup(); }
});

test('embedded: a delivery-state.json that is a link is replaced by a 0600 file, its target untouched', async () => {
  const fx = fixture();
  try {
    const victim = join(fx.dir, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    const dir = defaultNotifierStateDir(fx.root, true);
    mkdirSync(dir, { mode: 0o700 });
    symlinkSync(victim, join(dir, 'delivery-state.json'));
    await runOnce(fx.root, dir, config(fx, null), []);
    assert.equal(readFileSync(victim, 'utf8'), 'precious\n', 'the link target outside the root is untouched');
    const st = lstatSync(join(dir, 'delivery-state.json'));
    assert.ok(st.isFile(), 'the link was replaced by a regular file');
    assert.equal(st.mode & 0o777, 0o600);
    const r = readDeliveryState(fx.root, dir);
    assert.equal(r.stateFound, true);
    assert.equal(r.notifier?.pid, process.pid);
  } finally { fx.cleanup(); }
});

test('embedded: a fresh state directory is made 0700 beneath the root and read back', async () => {
  const fx = fixture();
  try {
    const dir = defaultNotifierStateDir(fx.root, true);
    await runOnce(fx.root, dir, config(fx, null), []);
    assert.equal(lstatSync(dir).mode & 0o777, 0o700);
    assert.equal(readDeliveryState(fx.root).stateFound, true);
  } finally { fx.cleanup(); }
});
