/** The daemon speaks sd_notify: READY=1 after `ready`, WATCHDOG=1 only while healthy. */
import { it, after } from 'node:test';
import assert from 'node:assert/strict';
import { cli, makeRoot, startDaemon, waitFor, type Daemon, type TestRoot } from '../helpers/root.js';
import { startNotifyListener, python3Available } from '../deploy/notify-listener.js';

const roots: TestRoot[] = [];
const daemons: Daemon[] = [];
after(async () => { for (const d of daemons) await d.stop(); for (const t of roots) t.cleanup(); });

it('READY=1 after ready; WATCHDOG=1 keeps coming while healthy and stops when the watcher breaks', async (ctx) => {
  if (!python3Available()) { ctx.skip('python3 is needed for the stand-in datagram listener'); return; }
  const healthyL = await startNotifyListener();
  const brokenL = await startNotifyListener();
  try {
    const healthy = makeRoot();
    const broken = makeRoot();
    roots.push(healthy, broken);
    assert.equal(cli(healthy, ['init']).code, 0);
    assert.equal(cli(broken, ['init']).code, 0);
    const env = { WATCHDOG_USEC: '400000' };
    const d1 = await startDaemon(healthy, ['--guard'], { ...env, NOTIFY_SOCKET: healthyL.socketPath });
    daemons.push(d1);
    // EIO is not an inotify-limit error: no polling fallback, the watcher stays broken.
    const d2 = await startDaemon(broken, ['--guard'], { ...env, NOTIFY_SOCKET: brokenL.socketPath, WARDEN_TEST_WATCH_FAULT: 'EIO' });
    daemons.push(d2);
    await healthyL.waitFor((m) => m.includes('READY=1'), 10_000);
    await brokenL.waitFor((m) => m.includes('READY=1'), 10_000);
    // `ready` was on stdout before READY=1 went out (startDaemon waited for it).
    assert.ok(d1.stdout().includes('ready'));
    await waitFor(() => /watcher error/.test(d2.stderr()), 10_000, 'the broken daemon saw its watcher fail');
    const brokenBefore = brokenL.messages.filter((m) => m.includes('WATCHDOG=1')).length;
    await waitFor(() => healthyL.messages.filter((m) => m.includes('WATCHDOG=1')).length >= 6, 15_000, 'healthy pings');
    const brokenAfter = brokenL.messages.filter((m) => m.includes('WATCHDOG=1')).length;
    assert.equal(brokenAfter, brokenBefore, 'no WATCHDOG=1 while the watcher is broken');
  } finally {
    await healthyL.close();
    await brokenL.close();
  }
});
