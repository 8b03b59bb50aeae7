/**
 * `warden notify test` in the deployment goes through the running notifier, which alone
 * holds the bot token (src/cli/notify-relay.ts; docs/DEPLOY.md, "Who runs which command"):
 * the test message is queued in the store's outbox and the command reports what the
 * notifier did with it, delivered or not, within a deadline.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startNotifier, readDeliveryState } from '../../src/notifier/index.js';
import { appendOutboxMessage } from '../../src/store/outbox-messages.js';
import { relayTest, relayingNotifier, type RelayIo } from '../../src/cli/notify-relay.js';
import type { DeliveryReport } from '../../src/notifier/delivery-state.js';
import { DiscordEmulator } from '../helpers/discord-emulator.js';
import { TOKEN, config, fixture } from '../notifier/helpers.js';

const FAST = { pollMs: 50, backoffBaseMs: 100, backoffCapMs: 400 };

function io(root: string, stateDir: string): RelayIo {
  return {
    append: (text, id) => appendOutboxMessage(root, { id, time: new Date().toISOString(), kind: 'test', text }),
    look: () => readDeliveryState(root, stateDir),
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    now: () => Date.now(),
  };
}

test('the test message goes through the running notifier: delivered on Discord, said so', async () => {
  const fx = fixture();
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  const n = await startNotifier({ root: fx.root, stateDir: fx.stateDir, config: config(fx, emu.api), log: () => {}, timing: FAST });
  try {
    const r = await relayTest(fx.root, 'warden test message: This is a test', 4242, io(fx.root, fx.stateDir), 20_000);
    assert.deepEqual(r, { channel: 'discord', ok: true, state: 'ok', via: 'delivered by the running notifier (pid 4242), which holds the token' });
    assert.equal(emu.messages.length, 1);
    assert.match(emu.messages[0]!.content, /warden test message: This is a test/);
  } finally { await n.stop(); await emu.stop(); fx.cleanup(); }
});

test('Discord down: the relay says the notifier did not deliver it by the deadline, with its error', async () => {
  const fx = fixture();
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  const api = emu.api;
  await emu.stop();
  const n = await startNotifier({ root: fx.root, stateDir: fx.stateDir, config: config(fx, api), log: () => {}, timing: FAST });
  try {
    const r = await relayTest(fx.root, 'warden test message', 7, io(fx.root, fx.stateDir), 1_500);
    assert.equal(r.state, 'failed');
    assert.equal(r.ok, false);
    assert.match(r.error ?? '', /^the running notifier \(pid 7\) did not deliver the test message within 2 s \(.+\); it stays queued/);
  } finally { await n.stop(); fx.cleanup(); }
});

test('the relay is used only as the deployed guard\'s account, with a live notifier that has a Discord channel', () => {
  const report = (over: Partial<DeliveryReport> = {}): DeliveryReport => ({
    stateDir: '/x', stateFound: true, notifier: { pid: 99, started: '', updated: '' },
    channels: { discord: { status: 'ok', last_success: null, last_error: null, next_attempt: null } },
    alerts: {}, messages: {}, outboxDepth: 0, lastDeliveryError: null, logLinesIgnored: 0, ...over,
  } as DeliveryReport);
  const alive = () => true;
  assert.deepEqual(relayingNotifier('/r', true, report(), alive), { pid: 99 });
  assert.equal(relayingNotifier('/r', false, report(), alive), null, 'not the deployment: the command sends itself');
  assert.equal(relayingNotifier('/r', true, report(), () => false), null, 'no live notifier');
  assert.equal(relayingNotifier('/r', true, report({ channels: {} }), alive), null, 'the notifier has no Discord channel');
  assert.equal(relayingNotifier('/r', true, null, alive), null, 'no delivery state');
});
