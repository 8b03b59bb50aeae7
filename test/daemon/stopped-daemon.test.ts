/**
 * Two small defects of the daemon found reading the code, each reproduced in this process:
 * - a stopped daemon left its SIGHUP listener behind, so a later SIGHUP reloaded a guard
 *   that no longer ran (and every start in one process added one more);
 * - a revert whose rejected content was not kept (quarantine quota reached) was counted as
 *   kept by a folded alert when its detail also carried the full-disk note: the guard
 *   compared the whole detail string with the quota's note.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, cpSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ioBase, ioInitRoot, ioSuite } from '../helpers/io-store.js';
import { FIXTURE, TEST_WARDEN_TOML, waitFor } from '../helpers/root.js';
import { initRoot } from '../../src/changes/init.js';
import { runDaemon, type Daemon } from '../../src/daemon/run.js';
import { QuarantineQuota } from '../../src/guard/quarantine.js';
import type { Alert } from '../../src/store/alert-types.js';

const ORG = 'orgs/bookclub.toml';
const start = (root: string, logs: string[]): Promise<Daemon> =>
  runDaemon({ root, guard: true, notifier: false, initIfNeeded: false, witness: false, stdout: () => {}, log: (l) => logs.push(l) });

ioSuite('a stopped daemon, and what a revert did not keep', () => {
  describe('SIGHUP', () => {
    it('a stopped guard leaves no SIGHUP listener: a later SIGHUP reloads nothing', async () => {
      const t = await ioInitRoot();
      const base = process.listenerCount('SIGHUP');
      const logs: string[] = [];
      const d = await start(t.root, logs);
      assert.equal(process.listenerCount('SIGHUP'), base + 1, 'the running guard listens');
      await d.stop();
      assert.equal(process.listenerCount('SIGHUP'), base, 'no listener of the stopped guard remains');
      const before = logs.length;
      process.emit('SIGHUP', 'SIGHUP');
      await new Promise((r) => setTimeout(r, 200));
      assert.deepEqual(logs.slice(before).filter((l) => /SIGHUP|reloaded/.test(l)), [], 'nothing reloaded');
    });
  });

  describe('a full disk and the quarantine quota at once', () => {
    let mnt = '';
    let mounted = false;
    let d: Daemon | null = null;
    before(() => {
      mnt = join(ioBase(), 'mnt');
      mkdirSync(mnt);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0755', 'tmpfs', mnt]);
      mounted = true;
    });
    after(async () => {
      try { await d?.stop(); } finally { if (mounted) spawnSync('umount', ['-l', mnt]); }
    });

    it('a revert whose content was not kept counts as not kept, whatever else its detail says', async () => {
      const root = join(mnt, 'r');
      mkdirSync(root);
      for (const dir of ['config', 'orgs', 'blocks']) cpSync(join(FIXTURE, dir), join(root, dir), { recursive: true });
      writeFileSync(join(root, 'config', 'warden.toml'), TEST_WARDEN_TOML);
      await initRoot(root, { force: false });
      const logs: string[] = [];
      d = await start(root, logs);
      const g = d.guard as unknown as { quota: QuarantineQuota; alerts: { record(a: Alert, notKept?: boolean): void } };
      // The quota used up: nothing more is kept this minute.
      g.quota = new QuarantineQuota(0, 60_000);
      const recorded: { alert: Alert; notKept: boolean }[] = [];
      const sink = g.alerts;
      const record = sink.record.bind(sink);
      sink.record = (alert: Alert, notKept = false) => { recorded.push({ alert, notKept }); record(alert, notKept); };
      // The file system full (as the agent can make it), then a same-size edit in place.
      const fd = openSync(join(mnt, 'fill'), 'w');
      try {
        for (const size of [65536, 4096, 1]) {
          const b = Buffer.alloc(size, 0x61);
          for (;;) { try { writeSync(fd, b); } catch (e) { if ((e as NodeJS.ErrnoException).code === 'ENOSPC') break; throw e; } }
        }
      } finally { closeSync(fd); }
      const approved = readFileSync(join(root, ORG));
      const i = approved.indexOf('=');
      const w = openSync(join(root, ORG), 'r+');
      try { writeSync(w, Buffer.from('#'), 0, 1, i); } finally { closeSync(w); }
      try {
        const r = await waitFor(() => recorded.find((x) => x.alert.path === ORG && x.alert.action === 'reverted'), 5_000, 'the revert');
        assert.match(r.alert.detail ?? '', /^the file system is full \(ENOSPC\).*; quarantine quota reached/);
        assert.equal(r.alert.quarantine, null);
        assert.equal(r.notKept, true, 'counted as not kept');
      } finally { rmSync(join(mnt, 'fill'), { force: true }); }
    });
  });
});
