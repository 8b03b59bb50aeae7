import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readDeliveryState } from '../../src/notifier/delivery-state.js';
import { nameText } from '../../src/common/escape.js';
import { waitFor } from '../helpers/wait-for.js';
import { startChild } from './child.js';
import { alert, appendAlerts, config, fixture } from './helpers.js';

const TIMING = { pollMs: 50, backoffBaseMs: 100, backoffCapMs: 400, longBackoffMs: 60_000 };

/** A fake notify-send: records its argv (JSON per line), or fails like a missing D-Bus session. */
function fakeNotifySend(dir: string, log: string, fail = false): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const body = fail
    ? `process.stderr.write('Failed to connect to the D-Bus session bus\\n'); process.exit(1);`
    : `require('fs').appendFileSync(${JSON.stringify(log)}, JSON.stringify(process.argv.slice(2)) + '\\n');`;
  writeFileSync(join(bin, 'notify-send'), `#!${process.execPath}\n${body}\n`);
  chmodSync(join(bin, 'notify-send'), 0o755);
  return bin;
}

test('desktop: notify-send is called at critical urgency with path, reason and advice', async () => {
  const fx = fixture();
  const log = join(fx.dir, 'notify-send.log');
  const bin = fakeNotifySend(fx.dir, log);
  // A session bus to find (the fake notify-send needs none): the start-up check passes.
  const child = await startChild({ root: fx.root, stateDir: fx.stateDir, config: config(fx, null, { desktop: { enabled: true } }), timing: TIMING }, { ...process.env, PATH: bin, DBUS_SESSION_BUS_ADDRESS: 'unix:path=/nonexistent' });
  try {
    const name = 'orgs/$(touch pwned)`x`<a href="x">&.toml';
    const a = alert({ path: name, detail: `written through ${name}` });
    appendAlerts(fx.root, [a]);
    await waitFor(() => existsSync(log) && readFileSync(log, 'utf8').trim(), 20_000, 'notify-send called');
    const calls = readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as string[]);
    assert.equal(calls.length, 1);
    const argv = calls[0]!;
    assert.ok(argv.includes('--urgency') || argv.some((x) => x.startsWith('--urgency')), argv.join(' '));
    assert.ok(argv.join(' ').includes('critical'));
    // In quotes: the name holds characters other than ordinary ones (docs/NOTIFY.md).
    assert.ok(argv[0]!.includes(nameText(name)) && nameText(name).startsWith('"orgs/$(touch pwned)`x`<a href='), `title names the path, verbatim (no shell expansion; a title is never markup): ${argv[0]}`);
    // The body is markup to the notification server: the name in it is entities, never a tag.
    assert.ok(argv[1]!.includes('orgs/$(touch pwned)`x`&lt;a href="x"&gt;&amp;.toml'), argv[1]);
    assert.ok(!/<a /.test(argv[1]!), argv[1]);
    assert.match(argv[1]!, /reason: content/);
    assert.match(argv[1]!, /warden edit/);
    assert.ok(!existsSync(join(fx.root, 'pwned')) && !existsSync('pwned'));
    await waitFor(() => readDeliveryState(fx.root, fx.stateDir).alerts[a.id]?.desktop?.state === 'delivered', 20_000, 'state delivered');
  } finally { child.proc.kill('SIGTERM'); await child.exited; fx.cleanup(); }
});

for (const [what, make] of [
  ['no notify-send on PATH', (dir: string) => { mkdirSync(join(dir, 'empty')); return join(dir, 'empty'); }],
  ['notify-send without a D-Bus session', (dir: string) => fakeNotifySend(dir, join(dir, 'x.log'), true)],
] as const) {
  test(`desktop: ${what} is reported once in status, not once per alert`, async () => {
    const fx = fixture();
    const child = await startChild({ root: fx.root, stateDir: fx.stateDir, config: config(fx, null, { desktop: { enabled: true } }), timing: TIMING }, { ...process.env, PATH: make(fx.dir) });
    try {
      for (let i = 0; i < 20; i++) appendAlerts(fx.root, [alert()]);
      const st = await waitFor(() => {
        const s = readDeliveryState(fx.root, fx.stateDir);
        return s.channels.desktop?.status === 'unavailable' && Object.keys(s.alerts).length === 20 ? s : null;
      }, 20_000, 'desktop unavailable');
      assert.match(st.lastDeliveryError!.message, what === 'no notify-send on PATH' ? /not installed/ : /D-Bus/);
      assert.ok(Date.parse(st.channels.desktop!.next_attempt!) - Date.now() > 50_000, 'long backoff');
      assert.equal(st.outboxDepth, 20, 'alerts stay pending for the desktop');
      // The child writes state before its log line reaches our pipe: wait for the line.
      const lines = await waitFor(() => { const l = child.stderr.filter((x) => x.includes('desktop')); return l.length ? l : null; }, 20_000, 'the desktop log line');
      assert.equal(lines.length, 1, lines.join('\n'));
    } finally { child.proc.kill('SIGTERM'); await child.exited; fx.cleanup(); }
  });
}

for (const [what, env] of [
  ['no notify-send on PATH', (dir: string) => { mkdirSync(join(dir, 'empty'), { recursive: true }); return { PATH: join(dir, 'empty') }; }],
  ['no desktop session (no D-Bus address, no bus socket, no display)', (dir: string) => ({ PATH: fakeNotifySend(dir, join(dir, 'x.log')), DBUS_SESSION_BUS_ADDRESS: '', DISPLAY: '', WAYLAND_DISPLAY: '', XDG_RUNTIME_DIR: join(dir, 'no-runtime') })],
] as const) {
  test(`desktop: ${what} is said when the notifier starts, before any alert`, async () => {
    const fx = fixture();
    const child = await startChild({ root: fx.root, stateDir: fx.stateDir, config: config(fx, null, { desktop: { enabled: true } }), timing: TIMING }, { ...process.env, ...env(fx.dir) });
    try {
      const line = await waitFor(() => child.stderr.find((x) => x.includes('desktop')), 20_000, 'the desktop-is-off line at start');
      assert.match(line, /desktop: unavailable — .*(not installed|no desktop session)/);
      const st = await waitFor(() => { const s = readDeliveryState(fx.root, fx.stateDir); return s.channels.desktop?.status === 'unavailable' ? s : null; }, 20_000, 'state says unavailable');
      assert.equal(Object.keys(st.alerts).length, 0, 'no alert was needed to find out');
      // An alert then waits for the desktop (kept, not lost) and is not reported again.
      appendAlerts(fx.root, [alert()]);
      await waitFor(() => readDeliveryState(fx.root, fx.stateDir).outboxDepth === 1, 20_000, 'alert pending');
      assert.equal(child.stderr.filter((x) => x.includes('desktop')).length, 1, child.stderr.join('\n'));
    } finally { child.proc.kill('SIGTERM'); await child.exited; fx.cleanup(); }
  });
}
