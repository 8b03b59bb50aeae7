/**
 * The guard's detection layers, each alone. The guard finds an edit in layers (docs/CONTRACT.md §Detection,
 * docs/ARCHITECTURE.md invariant 10): the directory watch's events, the stamp poll (an lstat
 * of each approved file, fast for files that are open or unwatched, slow for the rest), the
 * poll's inode watches (an event for every open, write, chmod and rename of the inode, by any
 * name), the backstop rescan (which skips what the inode watches vouch for, except every
 * FULL_SWEEP_EVERY-th one), the root path check and the startup pass. Any one of them reverts
 * an edit another missed, so a test that runs them all together cannot tell that one is
 * broken. Here the guard is built in this process from its parts (as src/daemon/run.ts
 * builds it) with only the layer under test connected: no watcher at all, no timers; each
 * layer is driven by hand (a poll tick, a rescan, an event) and must find the edit alone.
 *
 * In the fast tier of the guard's mutation sample (scripts/mutate.mjs IO_FOLDERS.guard.fast).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  chmodSync, closeSync, existsSync, fstatSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, renameSync, statSync, truncateSync, unlinkSync,
  utimesSync, writeFileSync, writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { chownSync, readdirSync, symlinkSync } from 'node:fs';
import { ioInitRoot, ioRoot, ioSuite, loadState, type IoStore } from '../helpers/io-store.js';
import { TEST_WARDEN_TOML, sha, waitFor } from '../helpers/root.js';
import { initRoot } from '../../src/changes/init.js';
import { loadKey, sealPath } from '../../src/store/keys.js';
import { Store } from '../../src/store/store.js';
import { Guard, type WriterSource } from '../../src/guard/guard.js';
import { StampPoll, COLD_CYCLE_MS, HOT_CYCLE_MS, TICK_MS } from '../../src/guard/stamp-poll.js';
import { FULL_SWEEP_EVERY, OpenWatch } from '../../src/guard/open-watch.js';
import { inspectAll } from '../../src/guard/inspect.js';
import { completeDirs } from '../../src/guard/dirs-on-the-way.js';
import { openRoot, safeClose } from '../../src/fsx/beneath.js';
import { loadInotify } from '../../src/fsx/inotify.js';
import { WARDEN_TOML, settingsFromBytes } from '../../src/config/quick-config.js';
import type { Alert, Writer } from '../../src/store/alert-types.js';
import { watchSeams } from '../../src/guard/test-seams.js';
import type { Detectors, Door } from '../../src/guard/door.js';

const FAST = HOT_CYCLE_MS / TICK_MS;
const SLOW = COLD_CYCLE_MS / TICK_MS;
const CRED = 'config/credentials.toml';

interface Layered {
  g: Guard;
  poll: StampPoll | null;
  alerts: Alert[];
  logs: string[];
  /** What the poll handed to the check, in order. */
  hints: string[];
  /** n poll ticks; the hints they raised. */
  tick(n?: number): number;
  close(): void;
}

/**
 * The guard on an initialised root, with the startup pass and the store's index check run
 * (as runDaemon does). `poll`: a stamp poll whose hints go straight to the guard, and whose
 * inode watches the rescan may trust (the guard's `inodes` detector, as in detectors.ts);
 * `blind`: that file's inode watch drops every event (test-seams.ts `inodeWatchBlind`, read when
 * the watch is made); `noInotify`: the poll runs as without an inotify binding.
 */
async function guardOn(t: IoStore, opts: { poll?: boolean; blind?: string; noInotify?: boolean; writers?: WriterSource } = {}): Promise<Layered> {
  const store: Store = t.open();
  const rootFd = openRoot(t.root);
  const state = loadState(t, store, false).publishFor(rootFd).holdBlobDirs(store.fd);
  const config = await settingsFromBytes(state.bytesOf(store.fd, WARDEN_TOML));
  const alerts: Alert[] = [];
  const logs: string[] = [];
  const hints: string[] = [];
  let poll: StampPoll | null = null;
  // The stamp poll is the guard's inode-watch detector, built on its door at construction
  // (as detectors.ts builds it); its hints go straight to the guard's entry point here.
  const detectors = (door: Door): Detectors => {
    if (!opts.poll) return {};
    const saved = watchSeams.inodeWatchBlind;
    watchSeams.inodeWatchBlind = opts.blind ?? null;
    try {
      poll = new StampPoll({
        rootFd: door.rootFd,
        // The same array while the baseline is unchanged (as the door passes it).
        paths: door.approvedPaths,
        cleanStamp: door.cleanStamp,
        hint: (rel) => { hints.push(rel); g.onPathEvent(rel, false); },
      }, opts.noInotify ? new OpenWatch(null) : undefined);
    } finally {
      watchSeams.inodeWatchBlind = saved;
    }
    return { inodes: poll };
  };
  const g = new Guard({ root: t.root, rootFd, store, config, state, log: (l) => logs.push(l), onAlert: (a) => alerts.push(a), ...(opts.writers ? { writers: opts.writers } : {}), detectors });
  g.startupVerify();
  g.verifyStore(false, '-');
  return {
    g, poll, alerts, logs, hints,
    tick: (n = 1) => { let h = 0; for (let i = 0; i < n; i++) h += poll!.tick(); return h; },
    close: () => { g.stop(); poll?.close(); state.releaseBlobDirs(); safeClose(g.rootFd); store.close(); },
  };
}

/** The approved bytes and mode of every protected file of a root, read before any edit. */
function approvedOf(t: IoStore, paths: readonly string[]): Map<string, { bytes: Buffer; mode: number }> {
  return new Map(paths.map((p) => [p, { bytes: readFileSync(t.p(p)), mode: statSync(t.p(p)).mode & 0o7777 }]));
}

function isApproved(t: IoStore, approved: Map<string, { bytes: Buffer; mode: number }>, rel: string): boolean {
  const a = approved.get(rel)!;
  const st = lstatSync(t.p(rel));
  return st.isFile() && (st.mode & 0o7777) === a.mode && readFileSync(t.p(rel)).equals(a.bytes);
}

/** Same size, other bytes: the last but one byte flipped. */
function sameSize(b: Buffer): Buffer {
  const c = Buffer.from(b);
  c[c.length - 2] = c[c.length - 2] === 0x41 ? 0x42 : 0x41;
  return c;
}

/** Write `bytes` into the file at `path` in place (same inode), then put its mtime back. */
function writeInPlaceKeepMtime(path: string, bytes: Buffer): void {
  const st = statSync(path);
  const fd = openSync(path, 'r+');
  try { writeSync(fd, bytes, 0, bytes.length, 0); } finally { closeSync(fd); }
  utimesSync(path, st.atime, st.mtime);
}

const inotify = loadInotify() !== null;

ioSuite('guard detection layers, each alone', () => {
  // Made first, used last (the rescan's trust of the inode watches): see that describe.
  let sweepRoot: IoStore;
  let swapRoot: IoStore;
  before(async () => {
    sweepRoot = await ioInitRoot();
    // The target's second name outside the root, made before its guard starts.
    linkSync(sweepRoot.p('orgs/bookclub.toml'), join(sweepRoot.scratch, 'hl'));
    swapRoot = await ioInitRoot();
  });

  describe('the stamp poll and its inode watches alone (no directory watch, no rescan)', () => {
    let t: IoStore;
    let L: Layered;
    let approved: Map<string, { bytes: Buffer; mode: number }>;
    let link = '';
    const target = 'orgs/bookclub.toml';
    before(async () => {
      t = await ioInitRoot();
      L = await guardOn(t, { poll: true });
      approved = approvedOf(t, L.g.state.paths());
    });
    after(() => L?.close());

    it('idle: one fast cycle watches every approved file, hints nothing, and leaves every file quiet', (ctx) => {
      if (!inotify) { ctx.skip('no inotify binding'); return; }
      const n = L.g.state.paths().length;
      assert.equal(L.tick(FAST + 1), 0, `no hint on an idle root: ${JSON.stringify(L.hints)}`);
      const c = L.poll!.counts();
      assert.deepEqual({ watched: c.watched, hot: c.hot, quiet: c.quiet }, { watched: n, hot: 0, quiet: n }, JSON.stringify(c));
      assert.equal(c.whyNot, '');
      // Idle and quiet: a whole slow cycle looks at nothing, hints nothing, checks nothing.
      const checks = L.g.counters.checks;
      assert.equal(L.tick(SLOW), 0);
      assert.equal(L.g.counters.checks, checks, 'no check of a quiet file');
      assert.equal(L.alerts.length, 0);
    });

    it('a read-only open and close of an approved file: no hint, no check by hash after the close, quiet again', (ctx) => {
      if (!inotify) { ctx.skip('no inotify binding'); return; }
      const fd = openSync(t.p(target), 'r');
      readFileSync(fd);
      closeSync(fd);
      L.hints.length = 0;
      L.tick(FAST + 1);
      assert.deepEqual(L.hints, [], 'a read is not a change');
      assert.equal(L.poll!.counts().hot, 0, 'closed: off the fast cycle');
    });

    it('a file held open for writing is checked by hash on every fast look while it is open (a shared mapping may write unseen)', (ctx) => {
      if (!inotify) { ctx.skip('no inotify binding'); return; }
      const fd = openSync(t.p('config/guests.toml'), 'r+');
      try {
        L.hints.length = 0;
        const checks = L.g.counters.checks;
        L.tick(2 * FAST);
        assert.ok(L.hints.filter((h) => h === 'config/guests.toml').length >= 2, `checked on each fast look: ${JSON.stringify(L.hints)}`);
        assert.ok(L.g.counters.checks >= checks + 2, 'by hash');
        assert.equal(L.poll!.vouches('config/guests.toml'), false, 'an open file is never vouched for');
        assert.equal(L.alerts.length, 0, 'nothing written: no alert');
      } finally { closeSync(fd); }
      L.tick(FAST + 1);
      assert.equal(L.poll!.counts().hot, 0, 'closed (written or not, the check found it clean): slow again');
      assert.equal(L.poll!.vouches('config/guests.toml'), true, 'and vouched for again');
    });

    it('a write through a hard link outside the root (no directory sees it): the inode watch hints it at the next tick, reverted', (ctx) => {
      if (!inotify) { ctx.skip('no inotify binding'); return; }
      link = join(t.scratch, 'hl');
      linkSync(t.p(target), link);
      // The link count moved ctime (IN_ATTRIB): checked, clean, watched again on the slow cycle.
      L.tick(FAST + 1);
      assert.equal(L.alerts.length, 0, 'a second name is not a change of content');
      assert.equal(L.poll!.counts().hot, 0);
      L.hints.length = 0;
      writeFileSync(link, 'name = "evil"\n');
      L.tick(1);
      assert.deepEqual(L.hints.slice(0, 1), [target], 'hinted at the first tick after the write');
      const [a] = L.alerts.splice(0);
      assert.equal(a?.path, target);
      assert.equal(a?.reason, 'content');
      assert.equal(a?.after?.sha256, sha('name = "evil"\n'));
      assert.ok(isApproved(t, approved, target), 'put back');
      assert.notEqual(statSync(link).ino, statSync(t.p(target)).ino, 'the link no longer reaches the protected file');
    });

    it('a chmod through a hard link outside the root: hinted by the inode watch, the mode put back', (ctx) => {
      if (!inotify) { ctx.skip('no inotify binding'); return; }
      const rel = 'config/conditions.toml';
      const hl = join(t.scratch, 'hl2');
      linkSync(t.p(rel), hl);
      L.tick(FAST + 1);
      L.alerts.length = 0;
      chmodSync(hl, 0o666);
      L.tick(1);
      const [a] = L.alerts.splice(0);
      assert.equal(a?.path, rel);
      assert.equal(a?.reason, 'mode');
      assert.equal(a?.after?.mode, 0o666);
      assert.ok(isApproved(t, approved, rel));
    });

    it('renamed away and another file put at its name (no directory watch): the watch makes it hot, the fast look finds the other inode', (ctx) => {
      if (!inotify) { ctx.skip('no inotify binding'); return; }
      const rel = 'config/guests.toml';
      L.tick(FAST + 1);
      L.alerts.length = 0;
      renameSync(t.p(rel), join(t.scratch, 'moved.toml'));
      writeFileSync(join(t.root, 'other.tmp'), 'guest = "evil"\n', { mode: 0o600 });
      renameSync(join(t.root, 'other.tmp'), t.p(rel));
      L.tick(FAST + 1);
      const mine = L.alerts.splice(0).filter((a) => a.path === rel);
      assert.equal(mine.length, 1, JSON.stringify(mine));
      assert.equal(mine[0]!.reason, 'content');
      assert.ok(isApproved(t, approved, rel));
      assert.equal(readFileSync(join(t.scratch, 'moved.toml')).equals(approved.get(rel)!.bytes), true, 'what was moved out is not touched');
    });

    it('the directory of a file held open moved away (no event reaches the file\'s inode): the poll cannot enter it, hints the file, and the check puts both back', (ctx) => {
      if (!inotify) { ctx.skip('no inotify binding'); return; }
      const rel = 'blocks/conditional/nsfw.md';
      L.tick(FAST + 1);
      L.alerts.length = 0;
      // Open (a possible mapping): on the fast cycle. A quiet file is not looked at by the poll
      // at all; its directory's move is the directory watch's and the rescan's to find.
      const fd = openSync(t.p(rel), 'r+');
      try {
        L.tick(FAST);
        assert.equal(L.alerts.length, 0);
        renameSync(t.p('blocks/conditional'), join(t.scratch, 'cond'));
        // The only hot file: looked at on every tick. One tick: the directory and the file both put back.
        L.tick(1);
      } finally { closeSync(fd); }
      const got = L.alerts.splice(0).map((a) => [a.path, a.reason]);
      assert.deepEqual(got.sort(), [['blocks/conditional', 'deleted'], [rel, 'deleted']], JSON.stringify(got));
      assert.ok(isApproved(t, approved, rel));
      assert.ok(readFileSync(join(t.scratch, 'cond', 'nsfw.md')).equals(approved.get(rel)!.bytes), 'the moved directory is not touched');
    });

    it('a file not verified clean yet is never counted quiet nor vouched for: it stays on the fast cycle', (ctx) => {
      if (!inotify) { ctx.skip('no inotify binding'); return; }
      const missing = 'config/guests.toml';
      const paths = L.g.state.paths();
      const seen: string[] = [];
      // A second poll over the same root whose source has no clean stamp for one file (as after a reload, before its first check).
      const p = new StampPoll({ rootFd: () => L.g.rootFd, paths: () => paths, cleanStamp: (r) => (r === missing ? undefined : L.g.cleanStamp(r)), hint: (r) => seen.push(r) });
      try {
        for (let i = 0; i < FAST + 1; i++) p.tick();
        const c = p.counts();
        assert.deepEqual({ watched: c.watched, hot: c.hot, quiet: c.quiet }, { watched: paths.length - 1, hot: 1, quiet: paths.length - 1 }, JSON.stringify(c));
        assert.equal(p.vouches(missing), false);
        assert.equal(p.vouches('orgs/bookclub.toml'), true);
        assert.deepEqual(seen, [], 'nothing to compare with is no hint (the check that runs records the stamp)');
      } finally { p.close(); }
    });

    it('the inode watches\' event queue overflows: every watched file counts as possibly open (never vouched for) until its inode is replaced', (ctx) => {
      if (!inotify) { ctx.skip('no inotify binding'); return; }
      const flood = 'config/conditions.toml';
      const other = 'orgs/bookclub.toml';
      L.tick(FAST + 1);
      assert.equal(L.poll!.vouches(other), true, 'quiet before');
      // Each open and close of a watched inode is two queued events; more than the queue holds
      // (fs.inotify.max_queued_events, 16384 by default) and the kernel drops the rest for one overflow event.
      const max = Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'));
      for (let i = 0; i < max / 2 + 100; i++) closeSync(openSync(t.p(flood), 'r'));
      L.tick(1);
      assert.equal(L.poll!.vouches(other), false, 'a file nobody touched is not vouched for after the overflow');
      assert.equal(L.poll!.counts().quiet, 0, JSON.stringify(L.poll!.counts()));
      L.tick(2 * FAST);
      assert.equal(L.poll!.vouches(other), false, 'still not: its counts are unknown');
      assert.equal(L.alerts.length, 0, 'an overflow is no change');
    });

    it('emptied through a hard link: every credential key it dropped is listed (fingerprints only)', (ctx) => {
      if (!inotify) { ctx.skip('no inotify binding'); return; }
      const hl = join(t.scratch, 'cred');
      linkSync(t.p(CRED), hl);
      L.tick(FAST + 1);
      L.alerts.length = 0;
      truncateSync(hl, 0);
      L.tick(1);
      const [a] = L.alerts.splice(0);
      assert.equal(a?.path, CRED);
      assert.ok(a?.reason === 'emptied' || a?.reason === 'half-applied', JSON.stringify(a));
      assert.ok((a?.credential_changes?.length ?? 0) > 0, `the dropped keys are listed: ${JSON.stringify(a)}`);
      assert.ok(a!.credential_changes!.some((c) => c.group === 'discord' && c.key === 'token'), JSON.stringify(a!.credential_changes));
      assert.ok(isApproved(t, approved, CRED));
      // A chmod of the credential file (the restored inode, watched again) changes no key: none listed.
      L.tick(FAST + 1);
      chmodSync(t.p(CRED), 0o640);
      L.tick(1);
      const [m] = L.alerts.splice(0);
      assert.equal(m?.reason, 'mode');
      assert.equal(m?.credential_changes, undefined, JSON.stringify(m));
    });
  });

  describe('the stamp poll without an inotify binding: every file on the fast cycle', () => {
    let t: IoStore;
    let L: Layered;
    before(async () => { t = await ioInitRoot(); L = await guardOn(t, { poll: true, noInotify: true }); });
    after(() => L?.close());

    it('says why, watches nothing, keeps every file hot, and still finds a write through a hard link within one fast cycle', () => {
      const n = L.g.state.paths().length;
      assert.equal(L.tick(FAST + 1), 0);
      const c = L.poll!.counts();
      assert.deepEqual({ watched: c.watched, hot: c.hot, quiet: c.quiet }, { watched: 0, hot: n, quiet: 0 }, JSON.stringify(c));
      assert.match(c.whyNot, /no inotify binding/);
      assert.equal(L.poll!.vouches('orgs/bookclub.toml'), false, 'nothing is vouched for without a watch');
      const rel = 'orgs/bookclub.toml';
      const hl = join(t.scratch, 'hl');
      linkSync(t.p(rel), hl);
      L.tick(FAST);
      L.alerts.length = 0;
      writeFileSync(hl, 'name = "evil!"\n');
      L.tick(FAST);
      const [a] = L.alerts.splice(0);
      assert.equal(a?.path, rel);
      assert.equal(a?.reason, 'content');
      // Same inode, same size, mtime put back: only ctime moved, and the lstat alone sees it.
      const g = 'config/guests.toml';
      const before = readFileSync(t.p(g));
      writeInPlaceKeepMtime(t.p(g), sameSize(before));
      L.tick(FAST);
      const [b] = L.alerts.splice(0);
      assert.equal(b?.path, g);
      assert.equal(b?.reason, 'content');
      assert.ok(readFileSync(t.p(g)).equals(before));
    });
  });

  describe('the backstop rescan alone (no watch, no poll)', () => {
    let t: IoStore;
    let L: Layered;
    let approved: Map<string, { bytes: Buffer; mode: number }>;
    before(async () => { t = await ioInitRoot(); L = await guardOn(t); approved = approvedOf(t, L.g.state.paths()); });
    after(() => L?.close());

    it('an idle rescan hashes nothing: each file\'s stat stamp is the one it had when verified clean', () => {
      L.g.rescan();
      const checks = L.g.counters.checks;
      assert.equal(L.g.rescan(), 0);
      assert.equal(L.g.counters.checks, checks, 'no file was read');
      assert.equal(L.alerts.length, 0);
    });

    it('an edit that keeps inode and size and puts mtime back: found by the rescan (ctime moved), reverted', () => {
      const rel = 'config/guests.toml';
      writeInPlaceKeepMtime(t.p(rel), sameSize(approved.get(rel)!.bytes));
      assert.equal(L.g.rescan(), 1);
      const [a] = L.alerts.splice(0);
      assert.equal(a?.path, rel);
      assert.equal(a?.reason, 'content');
      assert.equal(a?.after?.size, approved.get(rel)!.bytes.length);
      assert.ok(isApproved(t, approved, rel));
    });

    it('touch alone is no change: hashed once, no alert, and the next rescan skips it again', () => {
      const rel = 'orgs/bookclub.toml';
      const now = new Date();
      utimesSync(t.p(rel), now, now);
      const checks = L.g.counters.checks;
      assert.equal(L.g.rescan(), 0);
      assert.equal(L.g.counters.checks, checks + 1, 'the touched file was hashed');
      assert.equal(L.alerts.length, 0);
      assert.equal(L.g.rescan(), 0);
      assert.equal(L.g.counters.checks, checks + 1, 'its new stamp was recorded as clean');
    });

    it('a protected directory chmod 0777 and a new file in it: both put right by the rescan', () => {
      chmodSync(t.p('orgs'), 0o777);
      writeFileSync(t.p('orgs/evil.toml'), 'name = "evil"\n');
      L.g.rescan();
      const got = L.alerts.splice(0).map((a) => [a.path, a.reason, a.action]);
      assert.deepEqual(got.sort(), [['orgs', 'mode', 'reverted'], ['orgs/evil.toml', 'unexpected-file', 'removed']], JSON.stringify(got));
      assert.notEqual(statSync(t.p('orgs')).mode & 0o777, 0o777);
      assert.throws(() => lstatSync(t.p('orgs/evil.toml')), /ENOENT/);
    });

    it('a protected directory chown\'ed: put back to its approved owner by the rescan', () => {
      const want = statSync(t.p('orgs'));
      chownSync(t.p('orgs'), 12345, 12345);
      L.g.rescan();
      const got = L.alerts.splice(0).map((a) => [a.path, a.reason]);
      assert.deepEqual(got, [['orgs', 'owner']]);
      const now = statSync(t.p('orgs'));
      assert.deepEqual([now.uid, now.gid], [want.uid, want.gid]);
    });

    it('verify\'s one pass: a directory replaced by a symlink is reported, and its file as missing (never read through the link)', () => {
      const away = join(t.scratch, 'cond');
      renameSync(t.p('blocks/conditional'), away);
      symlinkSync(away, t.p('blocks/conditional'));
      try {
        const found = inspectAll(L.g.rootFd, L.g.state, L.g.pset, L.g.maxBytes).map((f) => [f.path, f.verdict.reason, f.obs.type]);
        assert.deepEqual(found, [['blocks/conditional', 'symlink', 'symlink'], ['blocks/conditional/nsfw.md', 'deleted', 'absent']], JSON.stringify(found));
      } finally {
        L.g.rescan();
        L.alerts.length = 0;
      }
      assert.ok(isApproved(t, approved, 'blocks/conditional/nsfw.md'));
      assert.ok(lstatSync(t.p('blocks/conditional')).isDirectory());
    });

    it('verify\'s one pass reports a directory and its subdirectory both chmod\'ed (a mode change does not hide what is below)', () => {
      const dirs = Object.keys(L.g.state.index.dirs);
      assert.ok(dirs.includes('blocks') && dirs.includes('blocks/conditional'), JSON.stringify(dirs));
      const modes = { blocks: statSync(t.p('blocks')).mode & 0o7777, sub: statSync(t.p('blocks/conditional')).mode & 0o7777 };
      chmodSync(t.p('blocks'), 0o751);
      chmodSync(t.p('blocks/conditional'), 0o751);
      try {
        const all = inspectAll(L.g.rootFd, L.g.state, L.g.pset, L.g.maxBytes);
        const found = all.map((f) => [f.path, f.verdict.reason]);
        assert.deepEqual(found, [['blocks', 'mode'], ['blocks/conditional', 'mode']], JSON.stringify(found));
        // What verify prints of each: the directory as found.
        const st = statSync(t.p('blocks'));
        const o = all[0]!.obs;
        assert.deepEqual({ type: o.type, mode: o.mode, uid: o.uid, gid: o.gid, size: o.size, ino: o.ino }, { type: 'dir', mode: 0o751, uid: st.uid, gid: st.gid, size: st.size, ino: st.ino });
      } finally {
        L.g.rescan();
        L.alerts.length = 0;
      }
      assert.equal(statSync(t.p('blocks')).mode & 0o7777, modes.blocks);
      assert.equal(statSync(t.p('blocks/conditional')).mode & 0o7777, modes.sub);
    });
  });

  describe('the rescan alone, below a recursive glob', () => {
    let t: IoStore;
    let L: Layered;
    before(async () => {
      const r = ioRoot(`${TEST_WARDEN_TOML}
[[protect]]
path = "deep/**/*.txt"
kind = "text"

[[protect]]
path = "conf/*.txt"
kind = "text"
`);
      mkdirSync(join(r.root, 'deep', 'a'), { recursive: true });
      mkdirSync(join(r.root, 'conf'));
      writeFileSync(join(r.root, 'conf', 'two.txt'), 'two\n');
      writeFileSync(join(r.root, 'deep', 'a', 'one.txt'), 'one\n');
      await initRoot(r.root, { force: false });
      t = { ...r, key: loadKey(r.root, false), seal: sealPath(r.root), open: () => Store.open(r.root) };
      L = await guardOn(t);
    });
    after(() => L?.close());

    it('a new file two directories below the glob\'s base (no event): found by the rescan, removed', () => {
      assert.ok(L.g.state.entry('deep/a/one.txt'), 'the approved file below the base');
      mkdirSync(t.p('deep/a/b'));
      writeFileSync(t.p('deep/a/b/new.txt'), 'planted\n');
      writeFileSync(t.p('deep/a/b/not-matched.md'), 'no glob names me\n');
      L.g.rescan();
      const got = L.alerts.splice(0).map((a) => [a.path, a.reason, a.action]);
      assert.deepEqual(got, [['deep/a/b/new.txt', 'unexpected-file', 'removed']]);
      assert.throws(() => lstatSync(t.p('deep/a/b/new.txt')), /ENOENT/);
      assert.ok(lstatSync(t.p('deep/a/b/not-matched.md')).isFile(), 'what no glob names is left alone');
    });

    it('verify\'s one pass: a directory moved away hides only what is below it, not a sibling whose name it begins', () => {
      const dirs = Object.keys(L.g.state.index.dirs);
      assert.ok(dirs.includes('conf') && dirs.includes('config'), JSON.stringify(dirs));
      const mode = statSync(t.p('config')).mode & 0o7777;
      renameSync(t.p('conf'), join(t.scratch, 'conf'));
      chmodSync(t.p('config'), 0o700);
      try {
        const found = inspectAll(L.g.rootFd, L.g.state, L.g.pset, L.g.maxBytes).map((f) => [f.path, f.verdict.reason]);
        assert.deepEqual(found, [['conf', 'deleted'], ['config', 'mode'], ['conf/two.txt', 'deleted']], JSON.stringify(found));
      } finally {
        L.g.rescan();
        L.alerts.length = 0;
      }
      assert.equal(statSync(t.p('config')).mode & 0o7777, mode);
      assert.equal(readFileSync(t.p('conf/two.txt'), 'utf8'), 'two\n', 'put back');
    });
  });

  describe('the directories on the way to a file below a recursive glob', () => {
    // docs/CONTRACT.md §Threat model ("swapping a parent directory for a symlink") and §Detection ("the promise is about
    // paths"): deep/a is no protected directory of the settings, but the approved
    // deep/a/one.txt is reached through it, so the baseline records it and the guard puts it
    // back like any protected directory.
    let t: IoStore;
    let L: Layered;
    before(async () => {
      const r = ioRoot(`${TEST_WARDEN_TOML}
[[protect]]
path = "deep/**/*.txt"
kind = "text"
`);
      mkdirSync(join(r.root, 'deep', 'a', 'b'), { recursive: true });
      mkdirSync(join(r.root, 'deep', 'empty'));
      chmodSync(join(r.root, 'deep', 'a'), 0o750);
      writeFileSync(join(r.root, 'deep', 'a', 'one.txt'), 'one\n');
      writeFileSync(join(r.root, 'deep', 'a', 'b', 'two.txt'), 'two\n');
      await initRoot(r.root, { force: false });
      t = { ...r, key: loadKey(r.root, false), seal: sealPath(r.root), open: () => Store.open(r.root) };
      L = await guardOn(t);
    });
    after(() => L?.close());

    it('init records them with their mode and owner; a directory with no approved file below it is not one', () => {
      const d = L.g.state.index.dirs;
      assert.deepEqual(Object.keys(d).filter((k) => k.startsWith('deep')).sort(), ['deep', 'deep/a', 'deep/a/b']);
      const st = statSync(t.p('deep/a'));
      // Its ACLs and user.* attributes too (none here): docs/ARCHITECTURE.md, "What a protected file's approved state is".
      assert.deepEqual(d['deep/a'], { mode: 0o750, uid: st.uid, gid: st.gid, xattrs: {} });
    });

    it('the glob\'s base moved away: every file below it is put back, each with its own alert', () => {
      renameSync(t.p('deep'), join(t.scratch, 'deep-away'));
      L.g.rescan();
      const got = L.alerts.splice(0).map((a) => [a.path, a.reason]).sort();
      assert.deepEqual(got, [['deep', 'deleted'], ['deep/a', 'deleted'], ['deep/a/b', 'deleted'], ['deep/a/b/two.txt', 'deleted'], ['deep/a/one.txt', 'deleted']]);
      assert.equal(readFileSync(t.p('deep/a/one.txt'), 'utf8'), 'one\n');
      assert.equal(readFileSync(t.p('deep/a/b/two.txt'), 'utf8'), 'two\n');
      assert.equal(statSync(t.p('deep/a')).mode & 0o7777, 0o750, 'the approved mode');
    });

    it('a directory on the way swapped for a symlink: the link is moved aside, the directory and its file put back', () => {
      mkdirSync(join(t.scratch, 'elsewhere'), { recursive: true });
      writeFileSync(join(t.scratch, 'elsewhere', 'one.txt'), 'the agent\'s\n');
      renameSync(t.p('deep/a'), join(t.scratch, 'a-away'));
      symlinkSync(join(t.scratch, 'elsewhere'), t.p('deep/a'));
      L.g.onPathEvent('deep/a', false);
      const got = L.alerts.splice(0).map((a) => [a.path, a.reason]).sort();
      assert.deepEqual(got, [['deep/a', 'symlink'], ['deep/a/b', 'deleted'], ['deep/a/b/two.txt', 'deleted'], ['deep/a/one.txt', 'deleted']]);
      assert.ok(lstatSync(t.p('deep/a')).isDirectory(), 'a real directory again');
      assert.equal(readFileSync(t.p('deep/a/one.txt'), 'utf8'), 'one\n');
      assert.equal(readFileSync(join(t.scratch, 'elsewhere', 'one.txt'), 'utf8'), 'the agent\'s\n', 'nothing written through the link');
    });

    it('a directory on the way chmodded: put back', () => {
      chmodSync(t.p('deep/a/b'), 0o700);
      const want = L.g.state.index.dirs['deep/a/b']!.mode;
      L.g.rescan();
      assert.deepEqual(L.alerts.splice(0).map((a) => [a.path, a.reason]), [['deep/a/b', 'mode']]);
      assert.equal(statSync(t.p('deep/a/b')).mode & 0o7777, want);
    });

    it('a directory renamed in below the base, bringing a matching file: its one event checks what it holds', () => {
      mkdirSync(join(t.scratch, 'carried'));
      writeFileSync(join(t.scratch, 'carried', 'planted.txt'), 'planted\n');
      renameSync(join(t.scratch, 'carried'), t.p('deep/carried'));
      L.g.onPathEvent('deep/carried', false);
      assert.deepEqual(L.alerts.splice(0).map((a) => [a.path, a.reason, a.action]), [['deep/carried/planted.txt', 'unexpected-file', 'removed']]);
      assert.throws(() => lstatSync(t.p('deep/carried/planted.txt')), /ENOENT/);
    });

    it('a baseline recorded without them (before they were): approved as they are at the start, a missing one as its parent', () => {
      const rootFd = openRoot(t.root);
      try {
        const state = loadState(t, t.open(), false);
        const full = state.index.dirs;
        const legacy = Object.fromEntries(Object.entries(full).filter(([d]) => d !== 'deep/a' && d !== 'deep/a/b'));
        state.setDirs(legacy);
        chmodSync(t.p('deep/a'), 0o700);
        renameSync(t.p('deep/a/b'), join(t.scratch, 'legacy-b'));
        completeDirs(rootFd, state, L.g.pset);
        assert.deepEqual(state.index.dirs['deep/a'], { ...full['deep/a'], mode: 0o700 }, 'as found');
        // Its parent's mode and owner, never its parent's ACLs (an ACL is not inherited by a directory warden makes).
        const { xattrs: _parentAcls, ...parentEntry } = full['deep/a']!;
        assert.deepEqual(state.index.dirs['deep/a/b'], { ...parentEntry, mode: 0o700 }, 'missing: its parent\'s entry');
        const before = state.index.dirs;
        completeDirs(rootFd, state, L.g.pset);
        assert.equal(state.index.dirs, before, 'complete: left as it is');
      } finally {
        safeClose(rootFd);
        chmodSync(t.p('deep/a'), 0o750);
        L.g.rescan();
        L.alerts.length = 0;
      }
      assert.equal(readFileSync(t.p('deep/a/b/two.txt'), 'utf8'), 'two\n');
    });

    it('verify names a missing one, not only the files below it', () => {
      renameSync(t.p('deep/a/b'), join(t.scratch, 'b-away'));
      try {
        const found = inspectAll(L.g.rootFd, L.g.state, L.g.pset, L.g.maxBytes).map((f) => [f.path, f.verdict.reason]);
        assert.deepEqual(found, [['deep/a/b', 'deleted'], ['deep/a/b/two.txt', 'deleted']], JSON.stringify(found));
      } finally {
        L.g.rescan();
        L.alerts.length = 0;
      }
      assert.equal(readFileSync(t.p('deep/a/b/two.txt'), 'utf8'), 'two\n');
    });
  });

  describe('a wildcard before the last segment (mid/*/x.txt): listed as deep as a globstar', () => {
    let t: IoStore;
    let L: Layered;
    before(async () => {
      const r = ioRoot(`${TEST_WARDEN_TOML}
[[protect]]
path = "mid/*/x.txt"
kind = "text"
`);
      for (const d of ['a', 'b']) { mkdirSync(join(r.root, 'mid', d), { recursive: true }); writeFileSync(join(r.root, 'mid', d, 'x.txt'), `${d}\n`); }
      writeFileSync(join(r.root, 'mid', 'a', 'y.txt'), 'no glob names me\n');
      await initRoot(r.root, { force: false });
      t = { ...r, key: loadKey(r.root, false), seal: sealPath(r.root), open: () => Store.open(r.root) };
      L = await guardOn(t);
    });
    after(() => L?.close());

    it('init approves what it matches; a planted match is removed; a directory moved away comes back with its file', () => {
      assert.deepEqual(L.g.state.paths().filter((p) => p.startsWith('mid/')).sort(), ['mid/a/x.txt', 'mid/b/x.txt']);
      mkdirSync(t.p('mid/c'));
      writeFileSync(t.p('mid/c/x.txt'), 'planted\n');
      renameSync(t.p('mid/b'), join(t.scratch, 'b-away'));
      L.g.rescan();
      const got = L.alerts.splice(0).map((a) => [a.path, a.reason]).sort();
      assert.deepEqual(got, [['mid/b', 'deleted'], ['mid/b/x.txt', 'deleted'], ['mid/c/x.txt', 'unexpected-file']]);
      assert.equal(readFileSync(t.p('mid/b/x.txt'), 'utf8'), 'b\n');
      assert.throws(() => lstatSync(t.p('mid/c/x.txt')), /ENOENT/);
      assert.equal(readFileSync(t.p('mid/a/y.txt'), 'utf8'), 'no glob names me\n');
    });
  });

  describe('the rescan trusts the inode watches only as far as they see', () => {
    // Two guards, each on a root made when the suite started: a directory whose ctime is less
    // than 2 s old is never trusted, and by now the roots' directories are older than that.
    let S: Layered;
    let W: Layered;
    const target = 'orgs/bookclub.toml';
    before(async () => {
      S = await guardOn(sweepRoot, { poll: true, blind: target });
      W = await guardOn(swapRoot, { poll: true, blind: target });
    });
    after(() => { S?.close(); W?.close(); });

    /** Rescan until one trusts the watches for every approved file, and the next is an ordinary one. */
    async function trusted(L: Layered): Promise<void> {
      L.tick(FAST + 1);
      assert.equal(L.poll!.vouches(target), true, 'the blinded watch is armed and quiet, as any other');
      await waitFor(() => { L.g.rescan(); return L.g.counters.vouched === L.g.state.paths().length; }, 10_000, 'a rescan that trusts the inode watches of every file');
      while ((L.g.counters.rescans + 1) % FULL_SWEEP_EVERY === 0) L.g.rescan();
    }

    it('the first rescan after the startup pass already trusts them: the pass recorded the directories', async (ctx) => {
      if (!inotify) { ctx.skip('no inotify binding: nothing is ever vouched for'); return; }
      // A directory changed within the last 2 s is never recorded (coarse ctime): wait until none is.
      const dirs = ['.', 'config', 'orgs', 'blocks', 'blocks/conditional'].filter((d) => existsSync(swapRoot.p(d)));
      await waitFor(() => dirs.every((d) => statSync(swapRoot.p(d)).ctimeMs < Date.now() - 2100), 10_000, 'the root\'s directories older than 2 s');
      const F = await guardOn(swapRoot, { poll: true });
      try {
        F.tick(FAST + 1);
        F.g.rescan();
        assert.equal(F.g.counters.rescans % FULL_SWEEP_EVERY === 0, false, 'an ordinary rescan');
        assert.equal(F.g.counters.vouched, F.g.state.paths().length, 'every file vouched for at the first rescan');
      } finally {
        F.close();
      }
    });

    it('a name swapped after the startup pass recorded its directory: the first rescan looks at every file there', async (ctx) => {
      if (!inotify) { ctx.skip('no inotify binding'); return; }
      const dirs = ['.', 'config', 'orgs', 'blocks', 'blocks/conditional'].filter((d) => existsSync(swapRoot.p(d)));
      await waitFor(() => dirs.every((d) => statSync(swapRoot.p(d)).ctimeMs < Date.now() - 2100), 10_000, 'the root\'s directories older than 2 s');
      const approved = approvedOf(swapRoot, [target]);
      // Its inode watch blinded: the old inode's link-count event would give the swap away.
      const F = await guardOn(swapRoot, { poll: true, blind: target });
      try {
        F.tick(FAST + 1);
        writeFileSync(join(swapRoot.root, 'orgs', '.swap'), 'name = "swapped"\n', { mode: 0o644 });
        renameSync(join(swapRoot.root, 'orgs', '.swap'), swapRoot.p(target));
        F.g.rescan();
        assert.deepEqual(F.alerts.splice(0).map((a) => [a.path, a.reason]), [[target, 'content']]);
        assert.ok(isApproved(swapRoot, approved, target));
      } finally {
        F.close();
      }
    });

    it(`a write the blinded inode watch never reports: the poll and the ordinary rescans skip it, rescan ${FULL_SWEEP_EVERY} (the full sweep) reverts it`, async (ctx) => {
      if (!inotify) { ctx.skip('no inotify binding: nothing is ever vouched for'); return; }
      const approved = approvedOf(sweepRoot, [target]);
      await trusted(S);
      while (S.g.counters.rescans % FULL_SWEEP_EVERY !== 0) S.g.rescan();
      // The next FULL_SWEEP_EVERY - 1 rescans are ordinary ones.
      writeFileSync(join(sweepRoot.scratch, 'hl'), 'name = "unseen"\n');
      S.tick(SLOW);
      assert.equal(S.alerts.length, 0, 'the poll does not look at a quiet file');
      for (let i = 1; i < FULL_SWEEP_EVERY; i++) {
        S.g.rescan();
        assert.equal(S.alerts.length, 0, `ordinary rescan ${i} trusted the watch`);
        assert.equal(S.g.counters.vouched, S.g.state.paths().length);
      }
      S.g.rescan();
      assert.equal(S.g.counters.vouched, 0, 'the full sweep trusts nothing');
      const [a] = S.alerts.splice(0);
      assert.equal(a?.path, target);
      assert.equal(a?.reason, 'content');
      assert.ok(isApproved(sweepRoot, approved, target));
    });

    it('a name swapped in a directory (its ctime moved): the next ordinary rescan looks at every file there, whatever the watches say', async (ctx) => {
      if (!inotify) { ctx.skip('no inotify binding'); return; }
      const approved = approvedOf(swapRoot, [target]);
      await trusted(W);
      // Another inode at the target's name: the rename is seen by its directory only (the
      // blinded watch drops what the old inode says), and no directory watch runs here.
      writeFileSync(join(swapRoot.root, 'orgs', '.swap'), 'name = "swapped"\n', { mode: 0o644 });
      renameSync(join(swapRoot.root, 'orgs', '.swap'), swapRoot.p(target));
      W.g.rescan();
      assert.notEqual(W.g.counters.rescans % FULL_SWEEP_EVERY, 0, 'an ordinary rescan');
      assert.equal(W.g.counters.vouched, W.g.state.paths().length - 1, 'the other directories\' files are still vouched for');
      const mine = W.alerts.splice(0).filter((a) => a.path === target);
      assert.equal(mine.length, 1, 'found by the ordinary rescan');
      assert.equal(mine[0]!.reason, 'content');
      assert.ok(isApproved(swapRoot, approved, target));
    });
  });

  describe('events alone (what the directory watch delivers), no poll, no rescan', () => {
    let t: IoStore;
    let L: Layered;
    let approved: Map<string, { bytes: Buffer; mode: number }>;
    before(async () => { t = await ioInitRoot(); L = await guardOn(t); approved = approvedOf(t, L.g.state.paths()); });
    after(() => L?.close());

    it('which hints go first: approved files, directories, the root and the store; a new file waits', () => {
      const g = L.g;
      assert.equal(g.isUrgent('orgs/bookclub.toml', false), true, 'an approved file');
      assert.equal(g.isUrgent('orgs', false), true, 'a protected directory');
      assert.equal(g.isUrgent('', false), true, 'the root');
      assert.equal(g.isUrgent('snapshots', false), true, 'the store');
      assert.equal(g.isUrgent('snapshots/baseline/index', false), true, 'a store file');
      assert.equal(g.isUrgent('anything', true), true, 'a directory event');
      assert.equal(g.isUrgent('orgs/new.toml', false), false, 'a new file in a protected directory waits');
      assert.equal(g.isUrgent('snapshotsx', false), false, 'a name that only begins like the store\'s');
      assert.equal(g.isUrgent('elsewhere.txt', false), false);
    });

    it('an edit and its event: reverted at once', () => {
      const rel = 'config/conditions.toml';
      writeFileSync(t.p(rel), 'evil = 1\n');
      L.g.onPathEvent(rel, false);
      const [a] = L.alerts.splice(0);
      assert.equal(a?.reason, 'content');
      assert.ok(isApproved(t, approved, rel));
    });

    it('a new file in a protected directory and its event: removed at once, kept in quarantine', () => {
      writeFileSync(t.p('orgs/evil.toml'), 'name = "evil"\n');
      L.g.onPathEvent('orgs/evil.toml', false);
      const [a] = L.alerts.splice(0);
      assert.deepEqual([a?.path, a?.reason, a?.action], ['orgs/evil.toml', 'unexpected-file', 'removed']);
      assert.throws(() => lstatSync(t.p('orgs/evil.toml')), /ENOENT/);
      assert.equal(readFileSync(t.p(a!.quarantine!), 'utf8'), 'name = "evil"\n');
    });

    it('a directory event: the directory\'s mode and every file in it put right', () => {
      chmodSync(t.p('config'), 0o700);
      unlinkSync(t.p('config/guests.toml'));
      L.g.onPathEvent('config', true);
      const got = L.alerts.splice(0).map((a) => [a.path, a.reason, a.action]);
      assert.deepEqual(got.sort(), [['config', 'mode', 'reverted'], ['config/guests.toml', 'deleted', 'reverted']], JSON.stringify(got));
      assert.ok(isApproved(t, approved, 'config/guests.toml'));
    });

    it('the root renamed away and a file put at its path: the root\'s own event puts the approved tree back there', () => {
      const away = join(t.scratch, 'old-root');
      renameSync(t.root, away);
      writeFileSync(t.root, 'not a directory\n');
      L.g.onPathEvent('', true);
      const root = L.alerts.filter((a) => a.path === '.');
      assert.equal(root.length, 1, JSON.stringify(L.alerts.map((a) => [a.path, a.reason])));
      assert.equal(root[0]!.reason, 'root-replaced');
      // Not warden's (docs/ARCHITECTURE.md, invariant 19): moved aside whole, a new directory made.
      assert.match(root[0]!.detail ?? '', /^a file \(owned by uid \d+, gid \d+, mode \d{4}\) was put at .*; warden changed nothing in it and moved it whole to /);
      assert.equal(readFileSync(t.p(root[0]!.quarantine!), 'utf8'), 'not a directory\n');
      assert.ok(statSync(t.root).isDirectory());
      for (const rel of approved.keys()) assert.ok(isApproved(t, approved, rel), `${rel} is back at the path`);
      assert.equal(L.g.rootPathHolds(), true);
      L.alerts.length = 0;
    });
  });

  describe('the startup pass and the root path check alone', () => {
    it('edits made while no guard ran: put back by the startup pass as changed-while-stopped, with what changed', async () => {
      const t = await ioInitRoot();
      const approved = approvedOf(t, ['orgs/bookclub.toml', 'config/guests.toml']);
      const orgsMode = statSync(t.p('orgs')).mode & 0o7777;
      writeFileSync(t.p('orgs/bookclub.toml'), 'name = "while stopped"\n');
      chmodSync(t.p('config/guests.toml'), 0o666);
      chmodSync(t.p('orgs'), 0o777);
      const L = await guardOn(t);
      try {
        const got = L.alerts.map((a) => [a.path, a.reason, a.also?.[0]]);
        assert.deepEqual(got.sort(), [['config/guests.toml', 'changed-while-stopped', 'mode'], ['orgs', 'changed-while-stopped', 'mode'], ['orgs/bookclub.toml', 'changed-while-stopped', 'content']], JSON.stringify(got));
        assert.equal(statSync(t.p('orgs')).mode & 0o7777, orgsMode);
        for (const rel of approved.keys()) assert.ok(isApproved(t, approved, rel));
      } finally { L.close(); }
    });

    it('the root directory replaced while no guard ran (its entries moved into a new one): not warden\'s, so moved aside whole at start; the approved tree is put back in a directory warden makes, recorded', async () => {
      const t = await ioInitRoot();
      const mode = statSync(t.root).mode & 0o7777;
      const old = join(t.scratch, 'old-root');
      renameSync(t.root, old);
      mkdirSync(t.root, { mode });
      chmodSync(t.root, mode);
      for (const e of readdirSync(old)) renameSync(join(old, e), join(t.root, e));
      const L = await guardOn(t);
      try {
        const root = L.alerts.filter((a) => a.path === '.');
        assert.equal(root.length, 1, JSON.stringify(L.alerts.map((a) => [a.path, a.reason])));
        assert.equal(root[0]!.reason, 'changed-while-stopped');
        assert.deepEqual(root[0]!.also, ['root-replaced']);
        assert.match(root[0]!.detail ?? '', /^a directory warden did not make \(owned by uid \d+.*\) was put at .*; warden changed nothing in it and moved it whole to /);
        assert.equal(L.g.storeHandle.rootReplaced(L.g.rootFd), null, 'the directory now guarded is recorded');
        assert.ok(L.g.holdsOwnRoot());
      } finally { L.close(); }
    });

    it('the root path made to name another directory: the 100 ms check moves it aside whole and puts every protected file in a directory warden makes', async () => {
      const t = await ioInitRoot();
      const L = await guardOn(t);
      try {
        const approved = approvedOf(t, L.g.state.paths());
        renameSync(t.root, join(t.scratch, 'old-root'));
        mkdirSync(t.root);
        assert.equal(L.g.checkRootPath(), true);
        assert.equal(L.g.checkRootPath(), false, 'put right: the next check finds the path holding');
        const [a] = L.alerts.filter((x) => x.path === '.');
        assert.equal(a?.reason, 'root-replaced');
        assert.match(a?.detail ?? '', /^a directory warden did not make \(owned by uid \d+.*\) was put at /);
        assert.ok(a?.quarantine && lstatSync(t.p(a.quarantine)).isDirectory(), 'the empty directory put there is kept');
        for (const rel of approved.keys()) assert.ok(isApproved(t, approved, rel), `${rel} is back`);
        const fd = openSync(t.root, 'r');
        try { assert.equal(fstatSync(fd).ino, lstatSync(t.root).ino); } finally { closeSync(fd); }
      } finally { L.close(); }
    });
  });

  describe('who made the edit: joined from the witness\'s record, or why that is not known', () => {
    const writer: Writer = { pid: 4242, comm: 'agent', exe: '/usr/bin/agent', uid: 1000, user: 'agent', loginuid: null, login_user: null } as Writer;
    const looked: string[] = [];
    const asked: string[] = [];
    let written = -1;
    const writers: WriterSource = {
      // Asked which name operations explain the reason; no record of any here.
      lookupName: (path, ops) => { asked.push(`${path} ${ops.join(',')}`); return null; },
      // The record knows one inode's writer; only the reasons that are opens may be joined on an inode.
      lookup: (dev, ino) => { looked.push(`${dev}:${ino}`); return ino === written ? { writer, others: 0 } : null; },
      unavailable: () => null,
      namesUnavailable: () => 'names not watched here',
    };
    let t: IoStore;
    let L: Layered;
    before(async () => { t = await ioInitRoot(); L = await guardOn(t, { writers }); });
    after(() => L?.close());

    it('new content in place: the writer of that inode', () => {
      const rel = 'orgs/bookclub.toml';
      const ino = statSync(t.p(rel)).ino;
      written = ino;
      writeInPlaceKeepMtime(t.p(rel), Buffer.from('name = "by agent"\n'));
      L.g.onPathEvent(rel, false);
      const [a] = L.alerts.splice(0);
      assert.equal(a?.reason, 'content');
      assert.equal((a?.by as Writer).pid, 4242, JSON.stringify(a?.by));
      assert.ok(looked.some((k) => k.endsWith(`:${ino}`)), 'joined on the rejected inode');
    });

    it('a chmod (not an open): never joined on an open of the inode; the alert says why the writer is not known', () => {
      looked.length = 0;
      chmodSync(t.p('config/guests.toml'), 0o666);
      L.g.onPathEvent('config/guests.toml', false);
      const [a] = L.alerts.splice(0);
      assert.equal(a?.reason, 'mode');
      assert.deepEqual(a?.by, { unknown: 'the witness sees opens for writing, and a chmod is not one (names not watched here)' });
      assert.deepEqual(looked, []);
      assert.deepEqual(asked.splice(0), ['config/guests.toml attrib'], 'explained by an attribute change of the name only');
    });

    it('deleted, and replaced by a rename over it: the name operations that explain each are the ones asked for', () => {
      asked.length = 0;
      unlinkSync(t.p('config/guests.toml'));
      L.g.onPathEvent('config/guests.toml', false);
      writeFileSync(join(t.root, 'x.tmp'), 'name = "over"\n');
      renameSync(join(t.root, 'x.tmp'), t.p('orgs/bookclub.toml'));
      L.g.onPathEvent('orgs/bookclub.toml', false);
      const got = L.alerts.splice(0).map((a) => [a.path, a.reason]);
      assert.deepEqual(got, [['config/guests.toml', 'deleted'], ['orgs/bookclub.toml', 'content']]);
      assert.deepEqual(asked.splice(0), ['config/guests.toml delete,rename-away', 'orgs/bookclub.toml rename-in,create,modify']);
    });

    it('a directory chmod: reverted (not a failed revert), with the same reason why the writer is not known', () => {
      chmodSync(t.p('orgs'), 0o777);
      L.g.onPathEvent('orgs', true);
      const [a] = L.alerts.splice(0);
      assert.equal(a?.path, 'orgs');
      assert.equal(a?.action, 'reverted', JSON.stringify(a));
      assert.equal(a?.reason, 'mode');
      assert.deepEqual(a?.by, { unknown: 'the witness sees opens for writing, and a chmod is not one (names not watched here)' });
    });
  });
});
