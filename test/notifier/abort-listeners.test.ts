/**
 * The notifier's stop signal reaches every Discord request, and @discordjs/rest adds an
 * `abort` listener to the signal of each request without removing it. Over a long life
 * (3,000 sends) that was 3,000 listeners on one signal and a MaxListenersExceededWarning.
 * Every signal, the long-lived one included, must hold only the listeners of the sends in
 * flight, however many messages went out.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startNotifier, readDeliveryState } from '../../src/notifier/index.js';
import { DiscordEmulator } from '../helpers/discord-emulator.js';
import { waitFor } from '../helpers/wait-for.js';
import { TOKEN, alert, appendAlerts, config, fixture } from './helpers.js';

test('sending 60 Discord messages leaves no abort listener behind on any signal', async () => {
  // Count the live abort listeners of every signal that is handed one (added minus removed).
  const live = new Map<EventTarget, number>();
  const add = EventTarget.prototype.addEventListener;
  const remove = EventTarget.prototype.removeEventListener;
  EventTarget.prototype.addEventListener = function (this: EventTarget, type: string, ...rest: unknown[]) {
    if (type === 'abort' && this instanceof AbortSignal) live.set(this, (live.get(this) ?? 0) + 1);
    return (add as (...a: unknown[]) => void).call(this, type, ...rest);
  } as typeof add;
  EventTarget.prototype.removeEventListener = function (this: EventTarget, type: string, ...rest: unknown[]) {
    if (type === 'abort' && this instanceof AbortSignal && live.has(this)) live.set(this, Math.max(0, live.get(this)! - 1));
    return (remove as (...a: unknown[]) => void).call(this, type, ...rest);
  } as typeof remove;
  const warnings: string[] = [];
  const onWarning = (w: Error) => { warnings.push(`${w.name}: ${w.message}`); };
  process.on('warning', onWarning);

  const fx = fixture();
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  const n = await startNotifier({ root: fx.root, stateDir: fx.stateDir, config: config(fx, emu.api), log: () => {}, timing: { pollMs: 20 } });
  try {
    const N = 60;
    for (let i = 0; i < N; i++) {
      const a = alert();
      appendAlerts(fx.root, [a]);
      await waitFor(() => readDeliveryState(fx.root, fx.stateDir).alerts[a.id]?.discord?.state === 'delivered', 20_000, `message ${i} delivered`);
    }
    assert.equal(emu.messages.length, N);
    const most = Math.max(0, ...live.values());
    assert.ok(most <= 2, `a signal holds ${most} abort listeners after ${N} sends (flat means at most the sends in flight)`);
    assert.deepEqual(warnings.filter((w) => /MaxListeners|memory leak/i.test(w)), []);
  } finally {
    await n.stop(); await emu.stop(); fx.cleanup();
    EventTarget.prototype.addEventListener = add;
    EventTarget.prototype.removeEventListener = remove;
    process.off('warning', onWarning);
  }
});
