/**
 * `warden init` at scale: blobs are made durable together, not one fsync each,
 * and the index is renamed only after every blob is durable; the history's first commit is
 * one pack, not a loose object per file. Checked by the syscalls the real CLI makes (strace).
 */
import { it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, TEST_WARDEN_TOML, cli, makeRoot, sha, type TestRoot } from '../helpers/root.js';

const N = 300;
const roots: TestRoot[] = [];
after(() => { for (const t of roots) t.cleanup(); });
const hasStrace = spawnSync('sh', ['-c', 'command -v strace']).status === 0;

function bigRoot(): TestRoot {
  const t = makeRoot({ wardenToml: `${TEST_WARDEN_TOML}\n[[protect]]\npath = "data/*.txt"\nkind = "text"\n` });
  roots.push(t);
  mkdirSync(t.p('data'));
  for (let i = 0; i < N; i++) writeFileSync(t.p(`data/f${i}.txt`), `file ${i}\n`.repeat(20));
  return t;
}

/** Every file below dir named `name` (the store's place is not this test's business). */
function findNamed(dir: string, name: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...findNamed(p, name));
    else if (e.name === name) out.push(p);
  }
  return out;
}

it(`init of ${N} files: blobs durable together before the index rename, history in one pack`, { skip: !hasStrace && 'strace is not installed' }, () => {
  const t = bigRoot();
  const log = join(t.base, 'strace.log');
  const r = spawnSync('strace', ['-f', '-qq', '-o', log, '-e', 'trace=fsync,fdatasync,syncfs,rename,renameat,renameat2', process.execPath, CLI, 'init', '--root', t.root],
    { env: t.env, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, r.stderr);
  const lines = readFileSync(log, 'utf8').split('\n');
  const fsyncs = lines.filter((l) => /\b(fsync|fdatasync)\(/.test(l)).length;
  // One fsync per blob (plus its directory) was ~2 × N; now a handful for index, seal, manifest.
  assert.ok(fsyncs < 40, `${fsyncs} fsync calls for ${N} files`);
  const indexRename = lines.findIndex((l) => /rename\w*\(.*\/index"/.test(l) && !l.includes('/.git/'));
  assert.ok(indexRename > 0, 'the index was renamed into place');
  const durable = lines.findIndex((l) => /\bsyncfs\(/.test(l));
  assert.ok(durable >= 0 && durable < indexRename, 'the blobs were synced before the index rename');
  // The history's first commit: one pack, not a loose object per file.
  const objects = findNamed(t.base, 'HEAD').map((h) => join(h, '..', 'objects')).find((d) => { try { return statSync(d).isDirectory(); } catch { return false; } });
  assert.ok(objects, 'the history repository exists');
  const loose = readdirSync(objects).filter((d) => /^[0-9a-f]{2}$/.test(d)).reduce((n, d) => n + readdirSync(join(objects, d)).length, 0);
  assert.ok(loose < 20, `${loose} loose objects in the history`);
  assert.ok(readdirSync(join(objects, 'pack')).some((f) => f.endsWith('.pack')), 'the blobs are in a pack');
  assert.equal(cli(t, ['verify']).code, 0, 'verify agrees with the new baseline');
});

it('a blob torn by a crash before the sync (no index, no seal yet) is rewritten by the next init', () => {
  const t = bigRoot();
  assert.equal(cli(t, ['init']).code, 0);
  const content = readFileSync(t.p('data/f7.txt'));
  const [blob] = findNamed(t.base, sha(content));
  assert.ok(blob, 'the blob of data/f7.txt is in the store');
  // The state a crash between the blob writes and the index rename leaves: blobs (one torn),
  // no index, no seal (the seal follows the index).
  truncateSync(blob, 3);
  const index = findNamed(t.base, 'index').filter((p) => !p.includes('/.git/'));
  const seals = findSuffix(t.base, '.seal');
  assert.equal(index.length, 1, 'one baseline index');
  assert.equal(seals.length, 1, 'one seal');
  for (const p of [...index, ...seals]) rmSync(p);
  const r = cli(t, ['init']);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.deepEqual(readFileSync(blob), content, 'the torn blob holds the approved bytes again');
  assert.equal(cli(t, ['verify']).code, 0);
});

function findSuffix(dir: string, suffix: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...findSuffix(p, suffix));
    else if (e.name.endsWith(suffix)) out.push(p);
  }
  return out;
}
