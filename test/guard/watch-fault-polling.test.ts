/**
 * The guard in this process (runDaemon) when inotify breaks: a flood of 20,000 EMFILE errors
 * from the watcher (test-seams.ts `watchFault`, taken by the guard's next inotify watcher
 * when it arms: set just for this start, then cleared) is one
 * `watch-degraded` alert, the guard polls, and while polling an edit is still reverted and a
 * new file whose name is not UTF-8 is still removed. Part of the guard's fast mutation tier.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ioInitRoot, ioSuite, type IoStore } from '../helpers/io-store.js';
import { readAlertsFile, waitFor } from '../helpers/root.js';
import { runDaemon, type Daemon } from '../../src/daemon/run.js';
import { callDaemon } from '../../src/daemon/control.js';
import { watchSeams } from '../../src/guard/test-seams.js';

ioSuite('the guard when its inotify watcher floods with EMFILE', () => {
  let t: IoStore;
  let d: Daemon | null = null;
  const logs: string[] = [];
  before(async () => {
    t = await ioInitRoot();
    watchSeams.watchFault = 'EMFILE:flood';
    try {
      d = await runDaemon({ root: t.root, guard: true, notifier: false, initIfNeeded: false, witness: false, stdout: () => {}, log: (l) => logs.push(l) });
    } finally {
      watchSeams.watchFault = null;
    }
  });
  after(async () => { await d?.stop(); });
  const alerts = () => readAlertsFile(t.s('alerts.jsonl'));

  it('one watch-degraded alert; the guard says it polls; an edit is reverted and a raw-named new file removed while polling', async () => {
    const a = await waitFor(() => alerts().find((x) => x.reason === 'watch-degraded'), 5_000, 'the degraded alert');
    assert.match(a.detail ?? '', /^inotify limit reached \(EMFILE\); switched to polling/);
    const s = t.open();
    try {
      await waitFor(async () => {
        const c = await callDaemon(s, { op: 'ping' });
        return c.kind === 'ok' && (c as { res: { polling?: boolean } }).res.polling === true;
      }, 5_000, 'the guard polls');
    } finally { s.close(); }
    const approved = readFileSync(t.p('orgs/bookclub.toml'));
    writeFileSync(t.p('orgs/bookclub.toml'), 'name = "polled"\n');
    await waitFor(() => readFileSync(t.p('orgs/bookclub.toml')).equals(approved), 5_000, 'reverted while polling');
    const raw = Buffer.concat([Buffer.from(join(t.root, 'orgs') + '/ev'), Buffer.from([0xff]), Buffer.from('.toml')]);
    writeFileSync(raw, 'name = "raw"\n');
    await waitFor(() => readdirSync(t.p('orgs')).length === 1, 5_000, 'the raw-named file removed while polling (before any rescan)');
    await waitFor(() => logs.length > 0 && alerts().length >= 3, 5_000, 'the alerts');
    assert.equal(alerts().filter((x) => x.reason === 'watch-degraded').length, 1, 'the flood is one alert');
    assert.ok(logs.length < 600, `the journal stays bounded (${logs.length} lines for 20,000 errors)`);
  });
});
