import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { notifyTestCommand } from '../../src/cli/commands/notify-test.js';
import type { CommandContext } from '../../src/cli/types.js';
import { WardenError } from '../../src/common/errors.js';
import { DiscordEmulator } from '../helpers/discord-emulator.js';
import { OWNER, TOKEN, fixture } from './helpers.js';

function ctx(root: string, json = true) {
  const out: string[] = [];
  const err: string[] = [];
  const id = (s: string) => s;
  const c: CommandContext = {
    root, json, values: {}, positionals: [],
    out: { line: (t = '') => out.push(t), json: (v) => out.push(JSON.stringify(v)), err: (t) => err.push(t), color: { red: id, green: id, yellow: id, bold: id, dim: id } },
  };
  return { c, out, err };
}

function writeToml(root: string, text: string): void {
  mkdirSync(join(root, 'config'), { recursive: true });
  writeFileSync(join(root, 'config/warden.toml'), text);
}

test('warden notify test: ok on every channel → 0; Discord down → 1; nothing configured → 2', async () => {
  const fx = fixture();
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  try {
    writeToml(fx.root, `[owner]\ndiscord_id = "${OWNER}"\n[notify.discord]\ntoken_file = "${fx.tokenFile}"\napi = "${emu.api}"\n[notify.journal]\nenabled = true\n`);
    let t = ctx(fx.root);
    assert.equal(await notifyTestCommand.run(t.c), 0);
    const first = JSON.parse(t.out[0]!) as { ok: boolean; results: { channel: string; ok: boolean; where?: string }[] };
    assert.match(first.results[1]?.where ?? '', /stderr|journal/);
    assert.deepEqual({ ...first, results: first.results.map(({ where: _w, ...r }) => r) }, { ok: true, results: [{ channel: 'discord', ok: true, state: 'ok' }, { channel: 'journal', ok: true, state: 'ok' }] });
    assert.equal(emu.messages.length, 1);
    assert.match(emu.messages[0]!.content, /warden test message/);
    assert.ok(t.err.some((l) => l.startsWith('<5>warden: warden test message')));

    await emu.stop();
    t = ctx(fx.root, false);
    assert.equal(await notifyTestCommand.run(t.c), 1);
    assert.ok(t.out.some((l) => /^FAIL\s+discord: transient: cannot reach Discord/.test(l)), t.out.join('\n'));

    writeToml(fx.root, '');
    await assert.rejects(notifyTestCommand.run(ctx(fx.root).c), (e: unknown) => e instanceof WardenError && e.exitCode === 2);
  } finally { await emu.stop(); fx.cleanup(); }
});

test('warden notify test: a desktop channel that cannot run here is reported off, not as a failure (exit 0)', async () => {
  const fx = fixture();
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  const saved = { PATH: process.env.PATH, DBUS_SESSION_BUS_ADDRESS: process.env.DBUS_SESSION_BUS_ADDRESS, DISPLAY: process.env.DISPLAY, WAYLAND_DISPLAY: process.env.WAYLAND_DISPLAY, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR };
  // A machine with no desktop session: no notify-send, no session bus.
  mkdirSync(join(fx.dir, 'empty'));
  Object.assign(process.env, { PATH: join(fx.dir, 'empty') });
  for (const k of ['DBUS_SESSION_BUS_ADDRESS', 'DISPLAY', 'WAYLAND_DISPLAY', 'XDG_RUNTIME_DIR'] as const) delete process.env[k];
  try {
    // The example config's channels: Discord, desktop, journal.
    writeToml(fx.root, `[owner]\ndiscord_id = "${OWNER}"\n[notify.discord]\ntoken_file = "${fx.tokenFile}"\napi = "${emu.api}"\n[notify.desktop]\nenabled = true\n[notify.journal]\nenabled = true\n`);
    let t = ctx(fx.root);
    assert.equal(await notifyTestCommand.run(t.c), 0, t.out.join('\n'));
    const r = JSON.parse(t.out[0]!) as { ok: boolean; results: { channel: string; ok: boolean; state: string; error?: string }[] };
    assert.equal(r.ok, true);
    assert.deepEqual(r.results.map((x) => [x.channel, x.state]), [['discord', 'ok'], ['desktop', 'off'], ['journal', 'ok']]);
    assert.match(r.results[1]!.error ?? '', /not installed/);
    t = ctx(fx.root, false);
    assert.equal(await notifyTestCommand.run(t.c), 0);
    assert.ok(t.out.some((l) => /^off\s+desktop: notify-send is not installed/.test(l)), t.out.join('\n'));
    assert.ok(!t.out.some((l) => /FAIL/.test(l)), t.out.join('\n'));
    // Only the desktop configured, and it is off: nothing reaches the owner, so that fails.
    writeToml(fx.root, `[notify.desktop]\nenabled = true\n`);
    t = ctx(fx.root);
    assert.equal(await notifyTestCommand.run(t.c), 1);
  } finally {
    for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
    await emu.stop(); fx.cleanup();
  }
});
