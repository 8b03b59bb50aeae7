/**
 * `warden init` in-process against real roots (fast tier): what the first baseline records
 * (every protected file and directory, modes, the key, the seal, the history), and every
 * refusal, which leaves no store behind.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, symlinkSync, truncateSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { candidatePathsFor, initRoot, scanDisk } from '../../src/changes/init.js';
import { keyPath, sealPath } from '../../src/store/keys.js';
import { sha256Hex } from '../../src/store/baseline.js';
import { openRoot, safeClose } from '../../src/fsx/beneath.js';
import { protectedSet } from '../../src/config/protected-set.js';
import { wardenConfigSchema } from '../../src/config/warden-config.js';
import { WardenError } from '../../src/common/errors.js';
import type { TestRoot } from '../helpers/root.js';
import { modeOf, roots, writer } from './in-process-root.js';
import { readFileSync } from 'node:fs';

const R = roots();
after(() => R.cleanup());

const FILES = ['blocks/conditional/nsfw.md', 'config/conditions.toml', 'config/credentials.toml', 'config/guests.toml', 'config/warden.toml', 'orgs/bookclub.toml'];

async function refusedInit(t: TestRoot, message: string | RegExp): Promise<void> {
  await assert.rejects(initRoot(t.root, { force: false }), (e: unknown) => {
    assert.ok(e instanceof WardenError, String(e));
    if (typeof message === 'string') assert.equal(e.message, message); else assert.match(e.message, message);
    return true;
  });
}

describe('init', () => {
  it('records every protected file with its hash and mode, the directories, key 0600, seal and history', async () => {
    const t = R.make();
    chmodSync(t.p('config/credentials.toml'), 0o600);
    chmodSync(t.p('orgs/bookclub.toml'), 0o640);
    const r = await initRoot(t.root, { force: false });
    assert.equal(r.files, FILES.length);
    assert.deepEqual(Object.keys(r.state.index.dirs).sort(), ['', 'blocks', 'blocks/conditional', 'config', 'orgs']);
    assert.equal(r.dirs, 5);
    assert.equal(r.storeDir, t.p('snapshots'));
    assert.equal(r.state.index.generation, 1);
    assert.deepEqual(r.state.paths().sort(), FILES);
    for (const f of FILES) {
      const e = r.state.entry(f)!;
      assert.equal(e.sha256, sha256Hex(readFileSync(t.p(f))), f);
      assert.equal(e.mode, modeOf(t.p(f)), f);
      assert.equal(e.size, readFileSync(t.p(f)).length);
    }
    assert.equal(r.state.entry('config/credentials.toml')?.kind, 'credentials');
    assert.equal(r.state.entry('orgs/bookclub.toml')?.mode, 0o640);
    assert.ok(existsSync(join(t.p('snapshots/secrets'), r.state.entry('config/credentials.toml')!.sha256)), 'credentials in secrets/');
    assert.equal(existsSync(join(t.p('snapshots/blobs'), r.state.entry('config/credentials.toml')!.sha256)), false, 'never in blobs/');
    assert.ok(existsSync(join(t.p('snapshots/blobs'), r.state.entry('orgs/bookclub.toml')!.sha256)));
    assert.equal(modeOf(keyPath(t.root)), 0o600);
    assert.match(readFileSync(sealPath(t.root), 'utf8'), /^1 [0-9a-f]{64}/);
    const log = spawnSync('git', ['-C', t.p('snapshots/history'), 'log', '--format=%s'], { encoding: 'utf8' });
    assert.equal(log.status, 0, log.stderr);
    assert.equal(log.stdout.trim().split('\n').length, 1);
    // What a writer loads is what init wrote.
    const w = writer(t, { prepare: false });
    try { assert.deepEqual(w.loaded.state.paths().sort(), FILES); assert.equal(w.loaded.config.approval, 'none'); } finally { w.close(); }
  });

  it('a second init is refused; --force re-baselines', async () => {
    const t = await R.init();
    await refusedInit(t, `a baseline already exists in ${t.p('snapshots')} ('warden init --force' re-baselines it as a sanctioned change: it shows what differs from the last approved state and asks)`);
    const r = await initRoot(t.root, { force: true });
    assert.equal(r.files, FILES.length);
  });

  it('the seal outlives the store: a deleted store, or a store without its index, is named as such', async () => {
    const t = await R.init();
    rmSync(t.p('snapshots/baseline/index'));
    await refusedInit(t, `${t.root} had a baseline (its seal is in ${sealPath(t.root)}), but its store in ${t.p('snapshots')} holds no index (an interrupted init, or deleted): run 'warden init --force' to take what is on disk now as the new baseline`);
    rmSync(t.p('snapshots'), { recursive: true });
    await refusedInit(t, `${t.root} had a baseline (its seal is in ${sealPath(t.root)}), but its store is gone: deleted or moved? Restore the store, or run 'warden init --force' to take what is on disk now as the new baseline`);
    assert.equal(existsSync(t.p('snapshots')), false, 'a refused init creates no store');
  });

  it('a store whose index does not authenticate is not a fresh root either, seal or no seal', async () => {
    const t = await R.init();
    writeFileSync(t.p('snapshots/baseline/index'), 'forged');
    await refusedInit(t, /^a baseline already exists in /);
    rmSync(sealPath(t.root));
    await refusedInit(t, /^a baseline already exists in /);
  });

  it('a baseline whose seal was deleted is still a baseline', async () => {
    const t = await R.init();
    rmSync(sealPath(t.root));
    await refusedInit(t, `a baseline already exists in ${t.p('snapshots')} ('warden init --force' re-baselines it as a sanctioned change: it shows what differs from the last approved state and asks)`);
  });

  describe('refusals leave nothing behind', () => {
    async function refusedFresh(prep: (t: TestRoot) => void, message: string | RegExp) {
      const t = R.make();
      prep(t);
      await refusedInit(t, message);
      assert.equal(existsSync(t.p('snapshots')), false, 'no store');
      assert.equal(existsSync(sealPath(t.root)), false, 'no seal');
    }
    it('a protected file that is a link', () => refusedFresh((t) => { rmSync(t.p('config/guests.toml')); symlinkSync(join(t.outside, 'target.txt'), t.p('config/guests.toml')); },
      'config/guests.toml is a symlink, not a regular file; only regular files can be baselined'));
    it('a protected file that is a directory', () => refusedFresh((t) => { mkdirSync(t.p('orgs/dir.toml')); },
      'orgs/dir.toml is a dir, not a regular file; only regular files can be baselined'));
    it('a protected directory that is a file', () => refusedFresh((t) => { rmSync(t.p('orgs'), { recursive: true }); writeFileSync(t.p('orgs'), 'x'); },
      'orgs must be a directory, found a file; only real directories and regular files can be baselined'));
    it('a file over max_bytes', () => refusedFresh((t) => { truncateSync(t.p('blocks/conditional/nsfw.md'), 1048577); },
      'blocks/conditional/nsfw.md is 1048577 bytes, over max_bytes (1048576)'));
    it('a name that is not UTF-8', () => refusedFresh((t) => { writeFileSync(Buffer.from(`${t.p('orgs')}/bad\xff.toml`, 'latin1'), 'x'); },
      /^orgs\/bad\\xff\.toml: the name is not valid UTF-8 \(shown escaped, \\xNN per byte\); warden never approves such a name\. Rename or remove it, then run init again; nothing was recorded$/));
  });

  it('reports its progress: reading, writing, history', async () => {
    const t = R.make();
    const calls: unknown[] = [];
    await initRoot(t.root, { force: false, progress: (...a) => calls.push(a) });
    assert.deepEqual(calls, [['writing', 0, FILES.length], ['history']]);
  });

  it('a root without blocks/ (a protected directory absent) is initialised without it', async () => {
    const t = R.make();
    rmSync(t.p('blocks'), { recursive: true });
    const r = await initRoot(t.root, { force: false });
    assert.deepEqual(r.state.paths().sort(), FILES.filter((f) => !f.startsWith('blocks/')));
    assert.equal(r.state.index.dirs.blocks, undefined);
  });

  it('more than 20 names that are not UTF-8: 20 named, the rest counted', async () => {
    const t = R.make();
    for (let i = 0; i < 22; i++) writeFileSync(Buffer.from(`${t.p('orgs')}/b${String(i).padStart(2, '0')}\xff.toml`, 'latin1'), 'x');
    await refusedInit(t, /^orgs\/b00\\xff\.toml, .*orgs\/b19\\xff\.toml \(and 2 more\): these names are not valid UTF-8 /);
  });

  it('exactly max_bytes is recorded', async () => {
    const t = R.make();
    truncateSync(t.p('blocks/conditional/nsfw.md'), 1048576);
    const r = await initRoot(t.root, { force: false });
    assert.equal(r.state.entry('blocks/conditional/nsfw.md')?.size, 1048576);
  });
});

describe('what is protected on disk', () => {
  it('candidatePathsFor: exact paths (present or not), glob matches, deep globs, sorted', () => {
    const t = R.make();
    mkdirSync(t.p('notes/a/b'), { recursive: true });
    writeFileSync(t.p('notes/top.md'), 'x');
    writeFileSync(t.p('notes/a/b/deep.md'), 'x');
    writeFileSync(t.p('notes/a/b/other.txt'), 'x');
    writeFileSync(t.p('orgs/readme.txt'), 'x');
    writeFileSync(t.p('orgs/second.toml'), 'x');
    const config = wardenConfigSchema.parse({ credentials: { files: ['config/credentials.toml', 'config/absent.toml'] }, protect: [{ path: 'notes/**/*.md' }] });
    const fd = openRoot(t.root);
    try {
      assert.deepEqual(candidatePathsFor(fd, protectedSet(config)), [
        'blocks/conditional/nsfw.md', 'config/absent.toml', 'config/conditions.toml', 'config/credentials.toml', 'config/guests.toml', 'config/warden.toml',
        'notes/a/b/deep.md', 'notes/top.md', 'orgs/bookclub.toml', 'orgs/second.toml',
      ]);
      const shallow = wardenConfigSchema.parse({ credentials: { files: ['config/credentials.toml'] }, protect: [{ path: 'notes/*.md' }] });
      assert.ok(!candidatePathsFor(fd, protectedSet(shallow)).includes('notes/a/b/deep.md'), 'a single * does not descend');
    } finally { safeClose(fd); }
  });

  it('scanDisk: files in path order with modes; directories with theirs; progress every 500 files', () => {
    const t = R.make();
    for (let i = 0; i < 1001; i++) writeFileSync(t.p(`orgs/o${String(i).padStart(4, '0')}.toml`), `# ${i}\n`);
    // A directory's files and its subdirectory's interleave in path order.
    mkdirSync(t.p('notes/b'), { recursive: true });
    for (const f of ['notes/a.md', 'notes/b/c.md', 'notes/z.md']) writeFileSync(t.p(f), f);
    chmodSync(t.p('orgs'), 0o750);
    const config = wardenConfigSchema.parse({ credentials: { files: ['config/credentials.toml', 'config/absent.toml'] }, protect: [{ path: 'notes/**/*.md' }] });
    const fd = openRoot(t.root);
    try {
      const calls: unknown[] = [];
      const s = scanDisk(fd, protectedSet(config), 1 << 20, (...a) => calls.push(a));
      assert.equal(s.files.length, 1001 + 6 + 3, 'an absent exact path is skipped');
      const paths = s.files.map((f) => f.path);
      assert.deepEqual(paths, [...paths].sort());
      assert.equal(paths[0], 'blocks/conditional/nsfw.md');
      assert.equal(paths.at(-1), 'orgs/o1000.toml');
      assert.deepEqual(calls, [['reading', 500, 1011], ['reading', 1000, 1011]]);
      assert.deepEqual(paths.filter((x) => x.startsWith('notes/')), ['notes/a.md', 'notes/b/c.md', 'notes/z.md']);
      assert.equal(s.dirs.orgs?.mode, 0o750);
      assert.equal(s.dirs['blocks/conditional']?.mode, 0o755);
      const f = s.files.find((x) => x.path === 'orgs/o0007.toml')!;
      assert.deepEqual([f.bytes.toString(), f.mode, f.uid, f.gid], ['# 7\n', 0o644, process.getuid!(), process.getgid!()]);
    } finally { safeClose(fd); }
  });
});
