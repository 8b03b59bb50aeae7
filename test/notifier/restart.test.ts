import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readDeliveryState } from '../../src/notifier/delivery-state.js';
import { DiscordEmulator } from '../helpers/discord-emulator.js';
import { waitFor } from '../helpers/wait-for.js';
import { startChild } from './child.js';
import { TOKEN, alert, appendAlerts, config, fixture, idsIn } from './helpers.js';

const TIMING = { pollMs: 50, backoffBaseMs: 100, backoffCapMs: 400 };

test('notifier killed (-9) mid-delivery and restarted: nothing is lost', async () => {
  const fx = fixture();
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  const opts = { root: fx.root, stateDir: fx.stateDir, config: config(fx, emu.api), timing: TIMING };
  try {
    // 1. A normal delivery, so there is state on disk to survive.
    let child = await startChild(opts);
    const first = Array.from({ length: 5 }, () => alert());
    appendAlerts(fx.root, first);
    await waitFor(() => first.every((a) => readDeliveryState(fx.root, fx.stateDir).alerts[a.id]?.discord?.state === 'delivered'), 20_000, 'first batch delivered');

    // 2. Hold the next message request open and kill the notifier while it waits.
    emu.hold = true;
    const second = Array.from({ length: 20 }, () => alert());
    appendAlerts(fx.root, second);
    await waitFor(() => emu.requests.some((r) => r.path.endsWith('/messages') && !r.completed && !r.aborted), 20_000, 'a message request in flight');
    child.proc.kill('SIGKILL');
    await child.exited;
    await waitFor(() => emu.requests.some((r) => r.aborted), 20_000, 'server saw the client vanish');
    emu.hold = false;
    emu.release();

    // 3. More alerts while it is down; then restart.
    const third = Array.from({ length: 10 }, () => alert());
    appendAlerts(fx.root, third);
    child = await startChild(opts);
    const everything = [...first, ...second, ...third].map((a) => a.id);
    await waitFor(() => {
      const got = new Set(emu.messages.flatMap((m) => idsIn(m.content)));
      return everything.every((id) => got.has(id));
    }, 20_000, 'every alert id in a delivered message');
    await waitFor(() => readDeliveryState(fx.root, fx.stateDir).outboxDepth === 0, 20_000, 'outbox empty');
    const delivered = emu.messages.flatMap((m) => idsIn(m.content));
    // Before the kill, the first batch was acknowledged: it must not come again.
    for (const a of first) assert.equal(delivered.filter((id) => id === a.id).length, 1, `${a.id} sent once`);
    child.proc.kill('SIGTERM');
    assert.equal(await child.exited, 0, 'clean stop on SIGTERM');
  } finally { await emu.stop(); fx.cleanup(); }
});
