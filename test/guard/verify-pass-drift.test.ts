/**
 * `warden verify`'s pass (src/guard/verify-pass.ts) in this process, on real roots made by
 * init's own code (test/helpers/io-store.ts), through a recording file-system binding: a clean
 * root is read with one open per file and nothing else; each kind of drift is found with its
 * reason; an entry the listing does not call a regular file (a FIFO, a directory, a link, a
 * device) is never opened; a file grown past max_bytes is never taken for clean; the pass
 * keeps no file's bytes. Part of the guard's fast mutation tier (no CLI, no daemon).
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import fs, { chmodSync, chownSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { execFileSync } from 'node:child_process';
import { ioInitRoot, ioSuite, type IoStore } from '../helpers/io-store.js';
import { loadBaseline } from '../../src/store/load-baseline.js';
import { verifyAll } from '../../src/guard/verify-pass.js';
import { rawFs, type RawFs } from '../../src/fsx/raw-fs.js';
import { sha } from '../helpers/root.js';

const PROTECTED = ['blocks/conditional/nsfw.md', 'config/conditions.toml', 'config/credentials.toml', 'config/guests.toml', 'config/warden.toml', 'orgs/bookclub.toml'];
const base = (p: string): string => p.slice(p.lastIndexOf('/') + 1);

/**
 * verifyAll over the root, through a binding that records every path it opens, with
 * node:fs's openSync watched too (the careful readers' way in): what each opened.
 */
function pass(t: IoStore, maxBytes?: number) {
  const l = loadBaseline(t.root);
  const real = rawFs();
  const viaBinding: string[] = [];
  const viaNodeFs: string[] = [];
  let inBinding = false;
  const rec: RawFs = {
    kind: real.kind,
    open: (p, flags) => { viaBinding.push(base(String(p))); inBinding = true; try { return real.open(p, flags); } finally { inBinding = false; } },
    fstatInto: (fd, out) => real.fstatInto(fd, out),
    read: (fd, b, o, n, pos) => real.read(fd, b, o, n, pos),
    close: (fd) => real.close(fd),
    listTyped: (p) => real.listTyped(p),
  };
  const openSync = fs.openSync;
  fs.openSync = ((p: fs.PathLike, ...rest: unknown[]) => { if (!inBinding) viaNodeFs.push(base(String(p))); return (openSync as (...a: unknown[]) => number)(p, ...rest); }) as typeof fs.openSync;
  syncBuiltinESMExports();
  try {
    const findings = verifyAll(l.rootFd, l.state, l.pset, maxBytes ?? l.config.max_bytes, rec);
    return { findings, viaBinding, viaNodeFs, rows: findings.map((f) => [f.path, f.verdict.reason, f.obs.type]) };
  } finally {
    fs.openSync = openSync;
    syncBuiltinESMExports();
    l.close();
  }
}

ioSuite('the verify pass', () => {
  it('a clean root: nothing found, each file opened once through the binding and by no other way', async () => {
    const t = await ioInitRoot();
    const r = pass(t);
    assert.deepEqual(r.rows, []);
    assert.deepEqual([...r.viaBinding].sort(), PROTECTED.map(base).sort(), 'one open per approved file');
    assert.deepEqual(r.viaNodeFs.filter((n) => PROTECTED.map(base).includes(n)), [], 'no second read of a clean file');
  });

  it('content, mode, owner, emptied and deleted: each found with its reason; the pass keeps no bytes', async () => {
    const t = await ioInitRoot();
    writeFileSync(t.p('orgs/bookclub.toml'), 'name = "evil"\n');
    chmodSync(t.p('config/guests.toml'), 0o666);
    chownSync(t.p('config/conditions.toml'), 65534, 65534);
    writeFileSync(t.p('blocks/conditional/nsfw.md'), '');
    rmSync(t.p('config/credentials.toml'));
    const r = pass(t);
    assert.deepEqual(r.rows, [
      ['blocks/conditional/nsfw.md', 'emptied', 'file'],
      ['config/conditions.toml', 'owner', 'file'],
      ['config/credentials.toml', 'deleted', 'absent'],
      ['config/guests.toml', 'mode', 'file'],
      ['orgs/bookclub.toml', 'content', 'file'],
    ]);
    const org = r.findings.find((f) => f.path === 'orgs/bookclub.toml')!;
    assert.equal(org.obs.sha256, sha('name = "evil"\n'));
    assert.equal(org.obs.size, 'name = "evil"\n'.length);
    for (const f of r.findings) assert.equal(f.obs.bytes, null, `${f.path}: verify holds no file's bytes`);
  });

  it('a file grown past max_bytes is too large, never clean', async () => {
    const t = await ioInitRoot();
    // max_bytes just large enough for every approved file; the edit grows one past it.
    const max = Math.max(...PROTECTED.map((p) => readFileSync(t.p(p)).length));
    const approved = readFileSync(t.p('orgs/bookclub.toml'));
    writeFileSync(t.p('orgs/bookclub.toml'), Buffer.concat([approved, Buffer.alloc(max + 1 - approved.length, 0x23)]));
    const r = pass(t, max);
    assert.deepEqual(r.rows, [['orgs/bookclub.toml', 'too-large', 'file']]);
  });

  it('a FIFO, a directory, a symlink and a device in place of protected files: found, and never opened', async () => {
    const t = await ioInitRoot();
    rmSync(t.p('config/guests.toml'));
    execFileSync('mkfifo', [t.p('config/guests.toml')]);
    rmSync(t.p('orgs/bookclub.toml'));
    mkdirSync(t.p('orgs/bookclub.toml'));
    rmSync(t.p('config/conditions.toml'));
    symlinkSync('/etc/hostname', t.p('config/conditions.toml'));
    rmSync(t.p('blocks/conditional/nsfw.md'));
    execFileSync('mknod', [t.p('blocks/conditional/nsfw.md'), 'c', '1', '3']);
    const r = pass(t);
    assert.deepEqual(r.rows, [
      ['blocks/conditional/nsfw.md', 'not-regular', 'device'],
      ['config/conditions.toml', 'symlink', 'symlink'],
      ['config/guests.toml', 'not-regular', 'fifo'],
      ['orgs/bookclub.toml', 'not-regular', 'dir'],
    ]);
    const never = ['guests.toml', 'bookclub.toml', 'conditions.toml', 'nsfw.md'];
    assert.deepEqual([...r.viaBinding, ...r.viaNodeFs].filter((n) => never.includes(n)), [], 'none of them opened');
    assert.deepEqual([...r.viaBinding].sort(), ['credentials.toml', 'warden.toml'], 'the regular files still are');
  });
});
