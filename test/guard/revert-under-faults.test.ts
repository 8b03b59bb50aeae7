/**
 * The guard in this process (runDaemon, as direct-edits-in-process) when things go wrong, each fault
 * produced for real: the root's file system full (a small tmpfs mounted by the test; the
 * store on it, or outside the root with room), the quarantine quota used up (the guard's
 * quota made small: the real one is 1,000 entries a minute), and alerts.jsonl made a
 * directory just before an alert. Each test asserts what a person sees: the file put back,
 * the alert's words, what quarantine holds. Part of the guard's fast mutation tier.
 * The tmpfs is unmounted in `after`, whatever the tests did.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, closeSync, cpSync, existsSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ioBase, ioInitRoot, ioSuite, type IoStore } from '../helpers/io-store.js';
import { FIXTURE, TEST_WARDEN_TOML, readAlertsFile, waitFor } from '../helpers/root.js';
import { initRoot } from '../../src/changes/init.js';
import { runDaemon, type Daemon } from '../../src/daemon/run.js';
import { QuarantineQuota } from '../../src/guard/quarantine.js';
import type { Alert } from '../../src/store/alert-types.js';

const ORG = 'orgs/bookclub.toml';

interface Running { d: Daemon; logs: string[]; alerts(): Alert[]; store: string; root: string }

async function guard(root: string, store: string): Promise<Running> {
  const logs: string[] = [];
  const d = await runDaemon({ root, guard: true, notifier: false, initIfNeeded: false, witness: false, stdout: () => {}, log: (l) => logs.push(l) });
  return { d, logs, store, root, alerts: () => readAlertsFile(join(store, 'alerts.jsonl')) };
}

/** Fill the file system at `dir` to the last byte (as the agent would, with its own files). */
function fill(dir: string): void {
  const fd = openSync(join(dir, 'fill'), 'w');
  try {
    for (const size of [65536, 4096, 1]) {
      const b = Buffer.alloc(size, 0x61);
      for (;;) { try { writeSync(fd, b); } catch (e) { if ((e as NodeJS.ErrnoException).code === 'ENOSPC') break; throw e; } }
    }
  } finally { closeSync(fd); }
  assert.throws(() => writeFileSync(join(dir, 'probe'), 'x'), /ENOSPC/, 'the file system is full');
}

/** The agent's same-size edit in place: one byte of the approved file overwritten (no new block needed). */
function editInPlace(path: string): { approved: Buffer; rejected: Buffer } {
  const approved = readFileSync(path);
  const i = approved.indexOf('=');
  const rejected = Buffer.from(approved); rejected[i] = 0x23;
  const fd = openSync(path, 'r+');
  try { writeSync(fd, Buffer.from('#'), 0, 1, i); } finally { closeSync(fd); }
  return { approved, rejected };
}

ioSuite('the guard when things go wrong', () => {
  describe('the root\'s file system full', () => {
    let mnt = '';
    let mounted = false;
    const running: Running[] = [];
    const savedState = process.env.WARDEN_GUARD_STATE_DIR;
    before(() => {
      mnt = join(ioBase(), 'mnt');
      mkdirSync(mnt);
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0755', 'tmpfs', mnt]);
      mounted = true;
    });
    after(async () => {
      for (const r of running.splice(0)) { try { await r.d.stop(); } catch { /* reported by its test */ } }
      process.env.WARDEN_GUARD_STATE_DIR = savedState;
      if (mounted) spawnSync('umount', ['-l', mnt]);
    });

    async function rootOnTmpfs(name: string): Promise<string> {
      const root = join(mnt, name);
      mkdirSync(root);
      for (const d of ['config', 'orgs', 'blocks']) cpSync(join(FIXTURE, d), join(root, d), { recursive: true });
      writeFileSync(join(root, 'config', 'warden.toml'), TEST_WARDEN_TOML);
      await initRoot(root, { force: false });
      return root;
    }

    it('the store on the full file system too: reverted in place; the rejected bytes held in memory reach quarantine once there is room', async () => {
      const root = await rootOnTmpfs('a');
      const g = await guard(root, join(root, 'snapshots'));
      running.push(g);
      fill(mnt);
      const { approved, rejected } = editInPlace(join(root, ORG));
      await waitFor(() => readFileSync(join(root, ORG)).equals(approved), 5_000, 'reverted on the full disk');
      rmSync(join(mnt, 'fill'));
      const a = await waitFor(() => g.alerts().find((x) => x.path === ORG && x.action === 'reverted'), 5_000, 'the alert, written once there is room');
      assert.equal(a.reason, 'content');
      assert.match(a.detail ?? '', /^the file system is full \(ENOSPC\): no temp file could be written, so the approved bytes were written over the rejected file in place; the rejected bytes are held in memory and written to quarantine as soon as there is room$/);
      assert.equal(a.quarantine, `snapshots/quarantine/${a.id}/bookclub.toml`);
      const q = join(root, a.quarantine!);
      await waitFor(() => existsSync(q), 5_000, 'the rejected bytes in quarantine');
      assert.deepEqual(readFileSync(q), rejected, 'quarantine holds what was rejected, not the approved bytes written over it');
      assert.ok(readFileSync(join(root, ORG)).equals(approved));
      await waitFor(() => g.logs.includes(`<5>warden: there is room again: the rejected content of alert ${a.id} is now in quarantine`), 5_000, 'the journal says so');
      await g.d.stop(); running.splice(running.indexOf(g), 1);
    });

    it('the store outside the root, with room: reverted in place; the rejected bytes kept at once', async () => {
      const state = join(ioBase(), 'guard-state');
      mkdirSync(state, { mode: 0o700 });
      process.env.WARDEN_GUARD_STATE_DIR = state;
      const root = await rootOnTmpfs('b');
      const stores = join(state, 'stores');
      const store = join(stores, readdirSync(stores)[0]!);
      const g = await guard(root, store);
      running.push(g);
      try {
        fill(mnt);
        const { approved, rejected } = editInPlace(join(root, ORG));
        const a = await waitFor(() => g.alerts().find((x) => x.path === ORG && x.action === 'reverted'), 5_000, 'the alert');
        assert.ok(readFileSync(join(root, ORG)).equals(approved), 'reverted');
        assert.equal(a.detail, 'the file system is full (ENOSPC): no temp file could be written, so the approved bytes were written over the rejected file in place');
        assert.ok(a.quarantine);
        assert.deepEqual(readFileSync(join(store, 'quarantine', a.id, 'bookclub.toml')), rejected);
      } finally {
        rmSync(join(mnt, 'fill'), { force: true });
        await g.d.stop(); running.splice(running.indexOf(g), 1);
        process.env.WARDEN_GUARD_STATE_DIR = savedState;
      }
    });
  });

  describe('the quarantine quota used up, and alerts.jsonl made a directory', () => {
    let t: IoStore;
    let g: Running;
    before(async () => {
      t = await ioInitRoot();
      g = await guard(t.root, t.s(''));
      // One entry a minute (the product's quota is 1,000): the second rejected file is not kept.
      (g.d.guard as unknown as { quota: QuarantineQuota }).quota = new QuarantineQuota(1, 60_000);
    });
    after(async () => { await g?.d.stop(); });

    const note = 'quarantine quota reached (1 entries per 60 s): this content was not kept';
    let seen = 0;
    async function next(what: string, n = 1): Promise<Alert[]> {
      const all = await waitFor(() => { const a = g.alerts(); return a.length >= seen + n ? a : null; }, 5_000, what);
      const mine = all.slice(seen); seen = all.length; return mine;
    }

    it('within the quota a new file is kept; beyond it the next is removed and not kept, and the alert says so', async () => {
      // Made 0666 outside the root, then moved in (whatever the process's umask).
      writeFileSync(join(t.scratch, 'one.toml'), 'name = "one"\n');
      chmodSync(join(t.scratch, 'one.toml'), 0o666);
      renameSync(join(t.scratch, 'one.toml'), t.p('orgs/one.toml'));
      const [a] = await next('the first new file');
      assert.equal(a!.action, 'removed');
      assert.ok(a!.quarantine);
      assert.equal(a!.detail, undefined);
      assert.equal(statSync(t.p(a!.quarantine!)).mode & 0o777, 0o600, 'kept 0600, readable by nobody else');
      writeFileSync(t.p('orgs/two.toml'), 'name = "two"\n');
      const [b] = await next('the second new file');
      assert.equal(b!.action, 'removed');
      assert.equal(b!.quarantine, null);
      assert.equal(b!.detail, note);
      await waitFor(() => !readdirSync(t.p('orgs')).includes('two.toml'), 5_000, 'removed all the same');
      assert.ok(!existsSync(t.s(`quarantine/${b!.id}`)), 'nothing kept for it');
    });

    it('beyond the quota an edit is still reverted; the alert says its content was not kept', async () => {
      const approved = readFileSync(t.p('config/guests.toml'));
      writeFileSync(t.p('config/guests.toml'), 'evil = true\n');
      const [a] = await next('the edit');
      assert.equal(a!.action, 'reverted');
      assert.equal(a!.quarantine, null);
      assert.equal(a!.detail, note);
      await waitFor(() => readFileSync(t.p('config/guests.toml')).equals(approved), 5_000, 'reverted');
    });

    it('an alert raised while alerts.jsonl is a directory: the directory is set aside, and both alerts are written at once', async () => {
      renameSync(t.s('alerts.jsonl'), t.s('alerts.keep'));
      mkdirSync(t.s('alerts.jsonl'));
      const before = g.logs.length;
      g.d.guard!.flag('watch-degraded', '.', 'raised by the test');
      // At once (synchronously): the guard's own store event for the damage has not run yet.
      const lines = readFileSync(t.s('alerts.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Alert);
      assert.deepEqual(lines.map((l) => l.reason).sort(), ['baseline-tampered', 'watch-degraded']);
      assert.match(lines.find((l) => l.reason === 'baseline-tampered')!.detail ?? '', /^snapshots\/alerts\.jsonl was a directory instead of a regular file; moved to snapshots\/quarantine\/[^/]+\/alerts\.jsonl and recreated; never followed$/);
      assert.deepEqual(g.logs.slice(before).filter((l) => l.includes('cannot append')), [], 'no alert was left waiting');
      // Put the earlier lines back in front, for the fold test below.
      writeFileSync(t.s('alerts.jsonl'), Buffer.concat([readFileSync(t.s('alerts.keep')), readFileSync(t.s('alerts.jsonl'))]));
      rmSync(t.s('alerts.keep'));
      seen = g.alerts().length;
    });

    it('a storm of new files beyond the quota folds; the folded alert lists no folder for what was not kept', async () => {
      const N = 103;
      for (let i = 0; i < N; i++) writeFileSync(t.p(`orgs/storm${i}.toml`), `name = "s${i}"\n`);
      await waitFor(() => readdirSync(t.p('orgs')).filter((n) => n.startsWith('storm')).length === 0, 10_000, 'every storm file removed');
      await g.d.stop();
      const storm = g.alerts().slice(seen).filter((a) => a.reason === 'unexpected-file');
      const folded = storm.filter((a) => (a as Alert & { count?: number }).count !== undefined);
      assert.equal(folded.length, 1, JSON.stringify(storm.map((a) => a.path)));
      const f = folded[0] as Alert & { count: number; folded?: unknown[] };
      assert.equal(storm.length - 1 + f.count, N, 'every removal counted');
      assert.equal(f.folded, undefined, 'nothing kept, so no quarantine folder is listed');
      assert.match(f.detail ?? '', new RegExp(`; ${f.count} of them not kept in quarantine \\(quarantine quota reached\\)$`));
    });
  });
});
