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
    assert.deepEqual({ ...first, results: first.results.map(({ where: _w, ...r }) => r) }, { ok: true, results: [{ channel: 'discord', ok: true }, { channel: 'journal', ok: true }] });
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
