/**
 * `warden alerts --json` reports each alert's own delivery time per channel, not the time
 * the delivery state's watermark last moved; and the notifier writes its state one way,
 * through its directory's descriptor, inside the root or outside it: a state file that is
 * a link is replaced, never followed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startNotifier, readDeliveryState } from '../../src/notifier/index.js';
import { saveStateFile } from '../../src/notifier/delivery-state.js';
import { DiscordEmulator } from '../helpers/discord-emulator.js';
import { waitFor } from '../helpers/wait-for.js';
import { TOKEN, alert, appendAlerts, config, fixture } from './helpers.js';

test('each alert keeps the time it reached Discord, after the watermark has passed it', async () => {
  const fx = fixture();
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  const n = await startNotifier({ root: fx.root, stateDir: fx.stateDir, config: config(fx, emu.api), log: () => {}, timing: { pollMs: 20 } });
  try {
    const ids: string[] = [];
    const sentAt: number[] = [];
    for (let i = 0; i < 3; i++) {
      const a = alert();
      ids.push(a.id);
      appendAlerts(fx.root, [a]);
      await waitFor(() => emu.messages.length === i + 1, 20_000, `message ${i}`);
      sentAt.push(emu.messages[i]!.time);
      await waitFor(() => readDeliveryState(fx.root, fx.stateDir).alerts[a.id]?.discord?.state === 'delivered', 20_000, `alert ${i} recorded`);
      // Far enough apart that the times cannot coincide.
      const until = Date.now() + 150;
      await waitFor(() => Date.now() >= until, 1000, 'the clock to move on', 20);
    }
    const r = readDeliveryState(fx.root, fx.stateDir);
    const at = ids.map((id) => { const d = r.alerts[id]?.discord; assert.equal(d?.state, 'delivered'); return Date.parse((d as { at: string }).at); });
    assert.equal(new Set(at).size, 3, `three alerts, three delivery times: ${at.map((t) => new Date(t).toISOString()).join(', ')}`);
    for (let i = 0; i < 3; i++) {
      // Recorded just after Discord's answer, well before the next alert was even written.
      assert.ok(at[i]! >= sentAt[i]! - 5 && at[i]! < sentAt[i]! + 140, `alert ${i}: delivered at ${at[i]}, Discord saw it at ${sentAt[i]}`);
    }
  } finally { await n.stop(); await emu.stop(); fx.cleanup(); }
});

test('a state directory outside the root: a delivery-state.json that is a link is replaced, its target untouched', async () => {
  const fx = fixture();
  try {
    const victim = join(fx.dir, 'victim.txt');
    writeFileSync(victim, 'precious\n');
    mkdirSync(fx.stateDir, { mode: 0o700 });
    symlinkSync(victim, join(fx.stateDir, 'delivery-state.json'));
    await saveStateFile(fx.stateDir, { version: 1, root: fx.root, updated: 'x', notifier: { pid: 1, started: 'x' }, channels: {}, expired: {}, last_liveness: null }, fx.root);
    assert.equal(readFileSync(victim, 'utf8'), 'precious\n', 'the link target is untouched');
    const st = lstatSync(join(fx.stateDir, 'delivery-state.json'));
    assert.ok(st.isFile(), 'the link was replaced by a regular file');
    assert.equal(st.mode & 0o777, 0o600);
  } finally { fx.cleanup(); }
});
