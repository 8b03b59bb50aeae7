/**
 * The stamp poll's two speeds (idle CPU): files nobody has open
 * for writing go on the slow cycle once their inode is watched; an open puts a file on the
 * fast cycle, and an open for writing keeps it there (a mapping outlives the close) until
 * the path names another inode. Driven against real files and the real inotify.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, linkSync, lstatSync, mkdirSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { spawn } from 'node:child_process';
import { killOwned, own } from '../helpers/children.js';
import { join } from 'node:path';
import { statStamp } from '../../src/guard/observe.js';
import { StampPoll, COLD_CYCLE_MS, HOT_CYCLE_MS, TICK_MS } from '../../src/guard/stamp-poll.js';
import { loadInotify } from '../../src/fsx/inotify.js';

const N = 40;
let dir = '';
let rootFd = -1;
const names = Array.from({ length: N }, (_, i) => `orgs/f${String(i).padStart(2, '0')}.toml`);
const clean = new Map<string, string>();
const hinted: string[] = [];
let poll: StampPoll;

const stampOf = (rel: string) => statStamp(lstatSync(join(dir, rel)));
const ticks = (n: number) => { let h = 0; for (let i = 0; i < n; i++) h += poll.tick(); return h; };
const fastTicks = HOT_CYCLE_MS / TICK_MS;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'warden-openwatch-'));
  mkdirSync(join(dir, 'orgs'));
  for (const rel of names) { writeFileSync(join(dir, rel), `name = "${rel}"\n`); clean.set(rel, stampOf(rel)); }
  rootFd = openSync(dir, 'r');
  poll = new StampPoll({ rootFd: () => rootFd, paths: () => names, cleanStamp: (rel) => clean.get(rel), hint: (rel) => hinted.push(rel) });
});
after(async () => { await killOwned(); poll.close(); closeSync(rootFd); rmSync(dir, { recursive: true, force: true }); });

it('has an inotify binding on this machine (else every file stays on the fast cycle, as documented)', (ctx) => {
  if (!loadInotify()) ctx.skip('koffi could not load: the poll falls back to the fast cycle for every file');
  assert.ok(COLD_CYCLE_MS > HOT_CYCLE_MS * 5, 'the slow cycle is much slower than the fast one');
});

it('after one fast cycle every idle file is watched and off the fast cycle, with no hint', (ctx) => {
  if (!loadInotify()) { ctx.skip('no inotify binding'); return; }
  assert.equal(ticks(fastTicks + 1), 0);
  assert.deepEqual(poll.counts().hot, 0, JSON.stringify(poll.counts()));
  assert.equal(poll.counts().watched, N);
  // Nobody had them open for writing when their watches were armed: every open since is an event, the slow cycle skips them.
  assert.equal(poll.counts().quiet, N, JSON.stringify(poll.counts()));
});

it('a path that is not approved (checked once, its stamp forgotten) leaves the fast cycle at its first look', (ctx) => {
  if (!loadInotify()) { ctx.skip('no inotify binding'); return; }
  ticks(fastTicks + 1);
  const before = poll.counts().hot;
  // The guard forgets the stamp of every path it checks and finds unapproved (a file it
  // removed, a directory below a ** base): each became hot for good, and every tick opened
  // its directory again (a 2,000-level tree: ~90 deep opens per tick, each from the root).
  for (let i = 0; i < 50; i++) poll.cleanChanged(`deep/${'d/'.repeat(i)}gone.txt`);
  assert.equal(poll.counts().hot, before + 50);
  ticks(fastTicks + 1);
  assert.equal(poll.counts().hot, before, JSON.stringify(poll.counts()));
});

it('a read-only open puts a file on the fast cycle only while it is open', (ctx) => {
  if (!loadInotify()) { ctx.skip('no inotify binding'); return; }
  hinted.length = 0;
  const fd = openSync(join(dir, names[3]!), 'r');
  ticks(1);
  assert.equal(poll.counts().hot, 1, 'open: fast');
  assert.deepEqual(hinted, [names[3]], 'an open file is handed to the check (by hash) on each fast look');
  closeSync(fd);
  hinted.length = 0;
  ticks(2);
  assert.equal(poll.counts().hot, 0, 'closed without writing: slow again');
  assert.deepEqual(hinted, [], 'closed, read-only: no hint');
});

it('a shared mapping keeps its file on the fast cycle after its descriptor is closed, until it is released (then a hint)', async (ctx) => {
  if (!loadInotify()) { ctx.skip('no inotify binding'); return; }
  const rel = names[7]!;
  hinted.length = 0;
  // The mapper closes its descriptor at once and holds only the mapping, until its stdin ends.
  const py = own(spawn('python3', ['-c', `import mmap, os, sys\nfd = os.open(sys.argv[1], os.O_RDWR)\nm = mmap.mmap(fd, 0, mmap.MAP_SHARED)\nos.close(fd)\nprint('mapped', flush=True)\nsys.stdin.read()\n`, join(dir, rel)], { stdio: ['pipe', 'pipe', 'inherit'] }), 'the mapper');
  await new Promise<void>((resolve, reject) => { py.stdout.once('data', () => resolve()); py.once('exit', (c) => reject(new Error(`python exited ${c}`))); });
  ticks(fastTicks + 1);
  assert.equal(poll.counts().hot, 1, 'descriptor closed, mapping alive: fast');
  // Checked by hash while mapped: on tmpfs a store into the mapping would move no stamp.
  assert.ok(hinted.length >= 1 && hinted.every((h) => h === rel), `handed to the check while mapped: ${JSON.stringify(hinted)}`);
  hinted.length = 0;
  const exited = new Promise((resolve) => py.once('exit', resolve));
  py.stdin.end();
  await exited;
  ticks(2);
  assert.ok(hinted.includes(rel), 'the release of a mapping opened for writing is a hint');
  assert.equal(poll.counts().hot, 0, 'released: slow again');
});

it('an open for writing is hinted at its close, and the file goes back to the slow cycle', (ctx) => {
  if (!loadInotify()) { ctx.skip('no inotify binding'); return; }
  const rel = names[8]!;
  hinted.length = 0;
  const fd = openSync(join(dir, rel), 'r+');
  ticks(1);
  assert.equal(poll.counts().hot, 1, 'open for writing: fast');
  closeSync(fd);
  ticks(2);
  assert.ok(hinted.includes(rel), 'hinted at the close');
  assert.equal(poll.counts().hot, 0, 'closed: slow');
  // A revert replaces the inode: the new one is watched and the file stays on the slow cycle.
  writeFileSync(join(dir, `${rel}.new`), readFileSync(join(dir, rel)));
  renameSync(join(dir, `${rel}.new`), join(dir, rel));
  clean.set(rel, stampOf(rel));
  poll.cleanChanged(rel);
  ticks(1);
  assert.equal(poll.counts().hot, 0, 'a new inode, watched, idle: slow');
  assert.equal(poll.counts().watched, N);
});

it('a write through a hard link elsewhere is hinted at once (the watch is on the inode, not the name)', (ctx) => {
  if (!loadInotify()) { ctx.skip('no inotify binding'); return; }
  const rel = names[11]!;
  const link = join(dir, 'elsewhere');
  linkSync(join(dir, rel), link);
  // The link moved ctime (nlink): verified clean again, as the guard would, and back on the slow cycle.
  clean.set(rel, stampOf(rel)); poll.cleanChanged(rel); ticks(2);
  assert.equal(poll.counts().hot, 0, JSON.stringify(poll.counts()));
  hinted.length = 0;
  const w = openSync(link, 'r+');
  writeSync(w, 'x', 0);
  closeSync(w);
  ticks(1);
  assert.ok(hinted.includes(rel), `hinted at once: ${JSON.stringify(hinted)}`);
  rmSync(link);
});

it('a same-stamp idle file is still looked at on the slow cycle (what the watch cannot see)', (ctx) => {
  if (!loadInotify()) { ctx.skip('no inotify binding'); return; }
  hinted.length = 0;
  // Forge a clean stamp that no longer matches (as if changed while unwatched): only the slow cycle finds it.
  const rel = names[20]!;
  clean.set(rel, clean.get(rel)!.replace(/:[^:]+$/, ':1'));
  ticks(COLD_CYCLE_MS / TICK_MS + 1);
  assert.ok(hinted.includes(rel), 'found by the slow cycle');
});

it('a file mapped for writing before its watch existed (as while the guard was stopped) counts as open: checked on every fast look, never left to the slow cycle', async (ctx) => {
  if (!loadInotify()) { ctx.skip('no inotify binding'); return; }
  const rel = names[30]!;
  const py = own(spawn('python3', ['-c', `import mmap, os, sys\nfd = os.open(sys.argv[1], os.O_RDWR)\nm = mmap.mmap(fd, 0, mmap.MAP_SHARED)\nos.close(fd)\nprint('mapped', flush=True)\nsys.stdin.read()\n`, join(dir, rel)], { stdio: ['pipe', 'pipe', 'inherit'] }), 'the mapper');
  await new Promise<void>((resolve, reject) => { py.stdout.once('data', () => resolve()); py.once('exit', (c) => reject(new Error(`python exited ${c}`))); });
  // A second poll, started after the mapping: its watches come too late to see that open.
  const seen: string[] = [];
  const late = new StampPoll({ rootFd: () => rootFd, paths: () => names, cleanStamp: (r) => clean.get(r), hint: (r) => seen.push(r) });
  try {
    let h = 0;
    for (let i = 0; i < fastTicks + 1; i++) h += late.tick();
    assert.ok(h >= 1, 'hinted');
    // Most files are quiet (not the mapped one, nor those the tests above left with a forged stamp).
    assert.ok(late.counts().quiet >= N - 3 && late.counts().quiet <= N - 1, JSON.stringify(late.counts()));
    seen.length = 0;
    for (let i = 0; i < 2 * fastTicks; i++) late.tick();
    assert.ok(seen.filter((r) => r === rel).length >= 2, `handed to the check (by hash) on each fast look: ${JSON.stringify(seen)}`);
  } finally {
    const exited = new Promise((resolve) => py.once('exit', resolve));
    py.stdin.end();
    await exited;
    late.close();
  }
});

it('vouches for a file (the rescan may skip its lstat) only while it is quiet, unopened and its events are read', (ctx) => {
  if (!loadInotify()) { ctx.skip('no inotify binding'); return; }
  const rel = names[25]!; // a file no test above touched
  ticks(fastTicks + 1);
  assert.equal(poll.vouches(rel), true, 'watched, nobody has it open: vouched');
  hinted.length = 0;
  const fd = openSync(join(dir, rel), 'r+');
  // No tick yet: the rescan reads the watch's events first (drainNow), so the open counts at once.
  poll.drainNow();
  assert.equal(poll.vouches(rel), false, 'open for writing: the rescan looks at it');
  writeSync(fd, 'x', 0);
  closeSync(fd);
  poll.drainNow();
  assert.equal(poll.vouches(rel), false, 'written and closed, not looked at yet: not vouched');
  ticks(1);
  assert.ok(hinted.includes(rel), `a write read by drainNow is hinted at the next tick: ${JSON.stringify(hinted)}`);
  // The check would record a new clean stamp; until the poll has looked at it, no vouching.
  clean.set(rel, stampOf(rel));
  poll.cleanChanged(rel);
  assert.equal(poll.vouches(rel), false, 'a new clean stamp: looked at first');
  ticks(fastTicks + 1);
  assert.equal(poll.vouches(rel), true, 'looked at, idle again: vouched');
  assert.equal(poll.vouches('orgs/not-approved.toml'), false, 'a file with no clean stamp is never vouched for');
});

it('a file renamed away (another put at its name, no write to either) is no longer vouched for and is hinted by its next fast look (IN_MOVE_SELF)', (ctx) => {
  if (!loadInotify()) { ctx.skip('no inotify binding'); return; }
  const rel = names[27]!; // a file no test above touched
  ticks(fastTicks + 1);
  assert.equal(poll.vouches(rel), true, 'quiet: vouched');
  hinted.length = 0;
  // The approved inode moves away (its link count does not change: no IN_ATTRIB), and
  // another file is renamed in at the free name. Only the rename of the inode says so.
  writeFileSync(join(dir, 'orgs', 'other'), 'name = "other"\n');
  renameSync(join(dir, rel), join(dir, 'orgs', 'away'));
  renameSync(join(dir, 'orgs', 'other'), join(dir, rel));
  poll.drainNow();
  assert.equal(poll.vouches(rel), false, 'renamed away: the rescan looks at the name');
  ticks(fastTicks);
  assert.ok(hinted.includes(rel), `hinted within one fast cycle (its name names another inode): ${JSON.stringify(hinted)}`);
  rmSync(join(dir, 'orgs', 'away'));
});
