import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { createSdNotifier, loadUnixDgram, watchdogIntervalFrom } from '../../src/daemon/sd-notify.js';
import { python3Available, startNotifyListener } from './notify-listener.js';

const noPython = python3Available() ? false : 'python3 is not installed';
const noHelper = spawnSync('systemd-notify', ['--version'], { stdio: 'ignore' }).status === 0 ? false : 'systemd-notify is not installed';

test('no NOTIFY_SOCKET: every call is a no-op, no watchdog interval', () => {
  const sd = createSdNotifier({ WATCHDOG_USEC: '60000000' });
  assert.equal(sd.transport, 'none');
  assert.equal(sd.watchdogIntervalMs, null);
  sd.ready(); sd.watchdog(); sd.status('x'); sd.stopping(); sd.close();
});

test('watchdog interval is half of WATCHDOG_USEC, only for our pid', () => {
  assert.equal(watchdogIntervalFrom({ WATCHDOG_USEC: '60000000' }), 30000);
  assert.equal(watchdogIntervalFrom({ WATCHDOG_USEC: '2000000', WATCHDOG_PID: String(process.pid) }), 1000);
  assert.equal(watchdogIntervalFrom({ WATCHDOG_USEC: '2000000', WATCHDOG_PID: String(process.pid + 1) }), null);
  assert.equal(watchdogIntervalFrom({}), null);
  assert.equal(watchdogIntervalFrom({ WATCHDOG_USEC: 'nonsense' }), null);
  const sd = createSdNotifier({ NOTIFY_SOCKET: '/nonexistent/sock', WATCHDOG_USEC: '10000000' });
  assert.equal(sd.watchdogIntervalMs, 5000);
  sd.close();
});

// Whether npm installed the optional dependency is decided by npm, not by this test: CI
// requires it; elsewhere it may be missing (no compiler). Once it is installed, it must load
// and make a socket; that is what the daemon's NotifyAccess=main relies on.
const dgramInstalled = (() => {
  try { createRequire(import.meta.url).resolve('unix-dgram/package.json'); return true; } catch { return false; }
})();

test('unix-dgram (the optional dependency) loads and makes a socket wherever npm installed it', { skip: process.env.CI || dgramInstalled ? false : 'unix-dgram is not installed here (CI requires it)' }, () => {
  assert.ok(dgramInstalled, 'CI must install unix-dgram (npm ci with a compiler)');
  const mod = loadUnixDgram();
  assert.ok(mod, 'unix-dgram is installed but did not load: its native build failed?');
  const sock = mod.createSocket('unix_dgram');
  sock.close();
});

for (const transport of ['unix-dgram', 'systemd-notify'] as const) {
  const skip = noPython || (transport === 'systemd-notify' ? noHelper : loadUnixDgram() ? false : 'unix-dgram is not installed');
  test(`${transport}: READY=1, WATCHDOG=1, STATUS and STOPPING=1 arrive`, { skip }, async () => {
    const l = await startNotifyListener();
    try {
      const env = { NOTIFY_SOCKET: l.socketPath, WATCHDOG_USEC: '2000000', PATH: process.env.PATH, ...(transport === 'systemd-notify' ? { WARDEN_SD_NOTIFY: 'systemd-notify' } : {}) };
      const sd = createSdNotifier(env);
      assert.equal(sd.transport, transport);
      assert.equal(sd.watchdogIntervalMs, 1000);
      sd.ready();
      await l.waitFor((m) => m.split('\n').includes('READY=1'));
      assert.ok(!l.messages.some((m) => m.includes('WATCHDOG=1')), 'no WATCHDOG before it is called');
      sd.watchdog();
      await l.waitFor((m) => m.split('\n').includes('WATCHDOG=1'));
      sd.watchdog();
      await l.waitFor((_m, all) => all.filter((x) => x.split('\n').includes('WATCHDOG=1')).length >= 2);
      sd.status('guarding 3 files\nsecond line');
      await l.waitFor((m) => m.split('\n').includes('STATUS=guarding 3 files second line'));
      sd.stopping();
      await l.waitFor((m) => m.split('\n').includes('STOPPING=1'));
      sd.close();
      // systemd-notify follows each message with a BARRIER=1 datagram of its own.
      const real = () => l.messages.filter((m) => m !== 'BARRIER=1').length;
      await new Promise((r) => setTimeout(r, 200));
      const n = real();
      sd.watchdog();
      await new Promise((r) => setTimeout(r, 300));
      assert.equal(real(), n, 'nothing is sent after close()');
    } finally {
      await l.close();
    }
  });
}

test('a send to a missing socket does not throw', { skip: loadUnixDgram() ? false : 'unix-dgram is not installed' }, () => {
  const sd = createSdNotifier({ NOTIFY_SOCKET: '/nonexistent/dir/notify.sock' });
  const write = process.stderr.write;
  let said = '';
  process.stderr.write = ((s: string) => { said += s; return true; }) as typeof process.stderr.write;
  try { sd.ready(); sd.watchdog(); } finally { process.stderr.write = write; }
  assert.match(said, /sd_notify via unix-dgram failed/);
  assert.equal(said.split('\n').filter(Boolean).length, 1, 'complains once');
});
