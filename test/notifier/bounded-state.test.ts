/**
 * The notifier's state stays as small as what is in flight: once every channel delivered a
 * prefix of alerts.jsonl, the watermark moves past it and its entries are pruned; reports
 * still say "delivered", and a restart resumes at the watermark without sending again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startNotifier, readDeliveryState } from '../../src/notifier/index.js';
import { DiscordEmulator } from '../helpers/discord-emulator.js';
import { waitFor } from '../helpers/wait-for.js';
import { TOKEN, alert, appendAlerts, config, fixture, idsIn } from './helpers.js';

const FAST = { pollMs: 50, backoffBaseMs: 100, backoffCapMs: 400 };

test('delivered entries are pruned behind a watermark; reports and restarts still know them', { timeout: 90_000 }, async () => {
  const fx = fixture();
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  let n: Awaited<ReturnType<typeof startNotifier>> | null = null;
  try {
    n = await startNotifier({ root: fx.root, stateDir: fx.stateDir, config: config(fx, emu.api), log: () => {}, timing: FAST });
    const all = Array.from({ length: 300 }, () => alert());
    for (let i = 0; i < all.length; i += 50) appendAlerts(fx.root, all.slice(i, i + 50));
    await waitFor(() => { const r = readDeliveryState(fx.root, fx.stateDir); return all.every((a) => r.alerts[a.id]?.discord?.state === 'delivered'); }, 30_000, 'all 300 reported delivered');
    await n.stop();
    const file = JSON.parse(readFileSync(join(fx.stateDir, 'delivery-state.json'), 'utf8')) as { channels: { discord: { delivered: Record<string, string> } }; watermarks?: { alerts?: { offset: number } } };
    assert.equal(Object.keys(file.channels.discord.delivered).length, 0, 'nothing in flight: no delivered entries kept');
    assert.equal(file.watermarks?.alerts?.offset, readFileSync(join(fx.root, 'snapshots', 'alerts.jsonl')).length, 'the watermark is at the end of alerts.jsonl');
    const sent = emu.messages.length;
    const sentIds = new Set(emu.messages.flatMap((m) => idsIn(m.content)));
    // Restart: nothing is sent again; a new alert is.
    n = await startNotifier({ root: fx.root, stateDir: fx.stateDir, config: config(fx, emu.api), log: () => {}, timing: FAST });
    const late = alert();
    appendAlerts(fx.root, [late]);
    await waitFor(() => readDeliveryState(fx.root, fx.stateDir).alerts[late.id]?.discord?.state === 'delivered', 20_000, 'the new alert delivered');
    assert.equal(emu.messages.length, sent + 1, 'one new message, none repeated');
    assert.deepEqual(idsIn(emu.messages.at(-1)!.content).filter((id) => sentIds.has(id)), [], 'the new message repeats no old alert');
    assert.equal(n.status().outboxDepth, 0);
  } finally { await n?.stop(); await emu.stop(); fx.cleanup(); }
});
