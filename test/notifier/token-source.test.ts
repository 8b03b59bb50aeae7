/**
 * The bot token under systemd: systemd's LoadCredential= copy is used, a file the
 * account cannot read is reported as a permission problem (not "cannot reach Discord"), a
 * fixed token file is picked up without waiting out the long backoff, and the notifier
 * neither re-watches a missing directory in a loop nor claims health once stopped.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync, type watch as fsWatch } from 'node:fs';
import { join } from 'node:path';
import { startNotifier } from '../../src/notifier/index.js';
import { readDiscordToken, readTokenFile } from '../../src/notifier/token-file.js';
import { DiscordEmulator } from '../helpers/discord-emulator.js';
import { waitFor } from '../helpers/wait-for.js';
import { readableDistSrc } from '../helpers/readable-copy.js';
import { TOKEN, alert, appendAlerts, config, fixture } from './helpers.js';

// Run as uid 65534: from a readable copy (the checkout may be private, mode 0700).
const DIST_SRC = (): string => readableDistSrc();

test('the systemd credential ($CREDENTIALS_DIRECTORY/discord-token) is used when present', () => {
  const fx = fixture();
  try {
    const creds = join(fx.dir, 'creds');
    mkdirSync(creds);
    writeFileSync(join(creds, 'discord-token'), 'from-the-credential\n', { mode: 0o400 });
    chmodSync(fx.tokenFile, 0o640); // the file itself would be refused: the credential does not need it
    assert.equal(readDiscordToken(fx.tokenFile, fx.root, { CREDENTIALS_DIRECTORY: creds }), 'from-the-credential');
    assert.throws(() => readDiscordToken(fx.tokenFile, fx.root, {}), /accessible by group or others/);
    chmodSync(fx.tokenFile, 0o600);
    assert.equal(readDiscordToken(fx.tokenFile, fx.root, {}), TOKEN);
    assert.equal(readDiscordToken(fx.tokenFile, fx.root, { CREDENTIALS_DIRECTORY: join(fx.dir, 'none') }), TOKEN, 'no credential there: the file');
  } finally { fx.cleanup(); }
});

test('a token file the account cannot read: the error says permission and LoadCredential, not the network', { skip: process.getuid?.() !== 0 && 'needs root to run a child as nobody' }, () => {
  const fx = fixture();
  try {
    chmodSync(fx.dir, 0o755);
    // root-owned 0600, read by uid 65534 (as the documented `chmod 600` left it for the warden account)
    const script = `
      const { readTokenFile } = await import(${JSON.stringify(join(DIST_SRC(), 'notifier/token-file.js'))});
      const { DiscordChannel } = await import(${JSON.stringify(join(DIST_SRC(), 'notifier/discord.js'))});
      const out = {};
      try { readTokenFile(${JSON.stringify(fx.tokenFile)}); } catch (e) { out.read = e.message; }
      const ch = new DiscordChannel({ recipientId: '1', tokenFile: ${JSON.stringify(fx.tokenFile)}, api: 'http://127.0.0.1:9/api' });
      try { await ch.send({ text: 'x' }); } catch (e) { out.send = e.message; out.kind = e.kind; }
      console.log(JSON.stringify(out));`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { uid: 65534, gid: 65534, encoding: 'utf8', cwd: '/' });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { read: string; send: string; kind: string };
    for (const m of [out.read, out.send]) {
      assert.match(m, /permission denied for uid 65534 \(EACCES\)/);
      assert.match(m, /LoadCredential=discord-token:/);
      assert.doesNotMatch(m, /reach Discord/);
      assert.ok(!m.includes(TOKEN));
    }
    assert.equal(out.kind, 'config');
  } finally { fx.cleanup(); }
  assert.throws(() => readTokenFile('relative/path'), /absolute path/);
});

test('a fixed token file is picked up within seconds, not after the 5-minute backoff', async () => {
  const fx = fixture();
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  const logs: string[] = [];
  chmodSync(fx.tokenFile, 0o640); // as docs/DEPLOY.md §2.7 used to install it: refused
  const n = await startNotifier({ root: fx.root, stateDir: fx.stateDir, config: config(fx, emu.api), log: (l) => logs.push(l), timing: { pollMs: 50 } });
  try {
    appendAlerts(fx.root, [alert()]);
    await waitFor(() => n.status().channels.discord?.status === 'config', 20_000, 'refused the 0640 file');
    assert.match(n.status().channels.discord?.last_error?.message ?? '', /accessible by group or others/);
    const retryAt = Date.parse(n.status().channels.discord?.next_attempt ?? '');
    assert.ok(retryAt - Date.now() > 60_000, 'the long backoff is in force');
    chmodSync(fx.tokenFile, 0o600);
    const t0 = Date.now();
    await waitFor(() => emu.messages.length >= 1, 5000, 'delivered after the fix');
    assert.ok(Date.now() - t0 < 5000);
    assert.ok(logs.some((l) => /token source changed/.test(l)), logs.join('\n'));
  } finally { await n.stop(); await emu.stop(); fx.cleanup(); }
});

test('a missing snapshots/outbox is not re-watched on every poll; healthy() stops with the loop', async () => {
  const fx = fixture(); // snapshots/ exists, snapshots/outbox does not
  let attempts = 0;
  const counting = ((path: string, ...rest: unknown[]) => {
    if (path.endsWith('outbox')) attempts++;
    return (fsWatchReal as (...a: unknown[]) => ReturnType<typeof fsWatch>)(path, ...rest);
  }) as unknown as typeof fsWatch;
  const { watch: fsWatchReal } = await import('node:fs');
  const n = await startNotifier({ root: fx.root, stateDir: fx.stateDir, config: config(fx, null), timing: { pollMs: 20 }, watch: counting });
  try {
    await new Promise((r) => setTimeout(r, 1000)); // ~50 polls
    assert.ok(attempts >= 1 && attempts <= 2, `watch attempts on the missing outbox in 1 s: ${attempts}`);
    assert.equal(n.healthy(1000), true);
    // outbox/ appears: the snapshots/ watch notices and the outbox gets its watch at once
    mkdirSync(join(fx.root, 'snapshots', 'outbox'));
    await waitFor(() => attempts >= 2, 3000, 'outbox watched after it appeared');
  } finally { await n.stop(); fx.cleanup(); }
  assert.equal(n.healthy(60_000), false, 'a stopped notifier is not healthy');
});
