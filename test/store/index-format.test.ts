/**
 * The compact baseline index: a binary body under the same authenticated header
 * line. Every path comes back exactly (raw-byte names too), any altered byte is refused for
 * its HMAC before anything is parsed, and an existing store whose index is in the JSON form
 * of before still loads: read as it is by readers, put in the compact form by the one writer.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseIndex, serializeIndex, serializeIndexV1, type BaselineIndex, type FileEntry } from '../../src/store/baseline.js';
import { loadKey } from '../../src/store/keys.js';
import { cli, testWorld, type TestRoot } from '../helpers/root.js';

const world = testWorld();
afterEach(() => world.cleanup());
const KEY = Buffer.alloc(32, 7);
const sha = (s: string) => createHash('sha256').update(s).digest('hex');

function sample(n: number, oddNames = true): BaselineIndex {
  const files: Record<string, FileEntry> = Object.create(null) as Record<string, FileEntry>;
  const odd = ['orgs/\udcfe.toml', 'orgs/caf\u00e9.toml', 'blocks/\u65e5\u672c.md', 'orgs/a\udcff\udc80/b.toml', 'config/credentials.toml'];
  for (const p of oddNames ? odd : ['config/credentials.toml']) files[p] = { kind: p.startsWith('config/') ? 'credentials' : 'org', sha256: sha(p), size: 3, mode: 0o600, uid: 1000, gid: 1000 };
  for (let i = 0; i < n; i++) files[`data/f${String(i).padStart(5, '0')}.txt`] = { kind: 'text', sha256: sha(String(i)), size: 1024 + i, mode: 0o644, uid: 0, gid: 4_000_000_000 };
  return { version: 1, generation: 7, updated: '2026-12-02T04:00:00.000Z', files, dirs: { '': { mode: 0o755, uid: 0, gid: 0 }, orgs: { mode: 0o700, uid: 1, gid: 2 } } };
}

describe('the compact index', () => {
  it('round-trips every entry, in order, raw-byte and non-Latin-1 paths included, in half the bytes of the JSON form', () => {
    const index = sample(1000);
    const raw = serializeIndex(index, KEY);
    assert.ok(raw.toString('latin1', 0, 30).startsWith('warden-baseline 2 hmac-sha256='));
    const r = parseIndex(raw, KEY);
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.legacy, false);
    assert.deepStrictEqual(Object.keys(r.index.files), Object.keys(index.files), 'the same paths in the same order');
    assert.deepStrictEqual({ ...r.index, files: { ...r.index.files }, dirs: { ...r.index.dirs } }, { ...index, files: { ...index.files } });
    assert.ok(serializeIndex(r.index, KEY).equals(raw), 'written again byte for byte (a rewrite after a tamper is the same file)');
    // An ASCII root (the common case) takes less than half the bytes of the JSON form.
    const ascii = sample(1000, false);
    const [c, j] = [serializeIndex(ascii, KEY).length, serializeIndexV1(ascii, KEY).length];
    assert.ok(c * 2 < j, `compact ${c} B vs JSON ${j} B`);
  });

  it('any altered, added or removed byte is refused for its HMAC (or header), never half-read', () => {
    const raw = serializeIndex(sample(20), KEY);
    for (let i = 0; i < raw.length; i += 7) {
      const bad = Buffer.from(raw); bad[i] = bad[i]! ^ 0x01;
      const r = parseIndex(bad, KEY);
      assert.ok(!r.ok && r.problem === 'tampered', `byte ${i}`);
    }
    for (const bad of [raw.subarray(0, raw.length - 1), Buffer.concat([raw, Buffer.of(0)]), raw.subarray(0, 40)]) {
      const r = parseIndex(bad, KEY);
      assert.ok(!r.ok && r.problem === 'tampered');
    }
    const other = parseIndex(raw, Buffer.alloc(32, 8));
    assert.ok(!other.ok && other.detail === 'index HMAC does not match');
  });

  it('the JSON form of before still parses (legacy), and is refused for its HMAC when altered', () => {
    const index = sample(3);
    const v1 = serializeIndexV1(index, KEY);
    const r = parseIndex(v1, KEY);
    assert.ok(r.ok && r.legacy);
    assert.deepStrictEqual(Object.keys(r.index.files), Object.keys(index.files));
    const bad = Buffer.from(v1.toString('latin1').replace('"size":3', '"size":4'), 'latin1');
    const b = parseIndex(bad, KEY);
    assert.ok(!b.ok && b.detail === 'index HMAC does not match');
  });
});

describe('an existing store with the JSON index (migration)', () => {
  /** Put the store back as it was before the compact index: the same entries in the JSON form, and the seal naming those bytes. */
  function makeLegacy(t: TestRoot): Buffer {
    const key = loadKey(t.root, false, t.env);
    const now = parseIndex(readFileSync(t.p('snapshots/baseline/index')), key);
    assert.ok(now.ok);
    const v1 = serializeIndexV1(now.index, key);
    writeFileSync(t.p('snapshots/baseline/index'), v1);
    const keys = join(t.base, 'state', 'warden', 'keys');
    const seal = readdirSync(keys).find((n) => n.endsWith('.seal'));
    assert.ok(seal && existsSync(join(keys, seal)));
    writeFileSync(join(keys, seal), `${now.index.generation} ${createHash('sha256').update(v1).digest('hex')}\n`);
    return v1;
  }

  it('loads: verify reads it as it is; the next writer rewrites it in the compact form, the seal following', () => {
    const t = world.root();
    assert.equal(cli(t, ['init']).code, 0);
    const v1 = makeLegacy(t);
    const v = cli(t, ['verify']);
    assert.equal(v.code, 0, v.stdout + v.stderr);
    assert.match(v.stdout, /clean: \d+ file\(s\) match the baseline/);
    assert.ok(readFileSync(t.p('snapshots/baseline/index')).equals(v1), 'a reader changes nothing');
    const ORG = 'orgs/bookclub.toml';
    const next = readFileSync(t.p(ORG), 'utf8').replace('hourly_cap = 20', 'hourly_cap = 21');
    const a = cli(t, ['apply', ORG, '--from', '-'], { input: next });
    assert.equal(a.code, 0, a.stdout + a.stderr);
    const after = readFileSync(t.p('snapshots/baseline/index'));
    assert.ok(after.toString('latin1', 0, 30).startsWith('warden-baseline 2 hmac-sha256='), 'now compact');
    const key = loadKey(t.root, false, t.env);
    const r = parseIndex(after, key);
    assert.ok(r.ok && !r.legacy);
    assert.equal(r.index.files[ORG]?.sha256, sha(next));
    assert.equal(cli(t, ['verify']).code, 0, 'clean, and the seal names the new index');
    const run = cli(t, ['status']);
    assert.doesNotMatch(run.stdout + run.stderr, /baseline-tampered/);
  });

  it('a guard start rewrites it (no change needed), and a forged JSON index is still refused for its HMAC', async () => {
    const t = world.root();
    assert.equal(cli(t, ['init']).code, 0);
    const v1 = makeLegacy(t);
    const forged = Buffer.from(v1.toString('latin1').replace(/"sha256":"[0-9a-f]{64}"/, `"sha256":"${'0'.repeat(64)}"`), 'latin1');
    writeFileSync(t.p('snapshots/baseline/index'), forged);
    const v = cli(t, ['verify']);
    assert.equal(v.code, 2);
    assert.match(v.stdout + v.stderr, /baseline-tampered: baseline\/index cannot be trusted \(index HMAC does not match\)/);
    writeFileSync(t.p('snapshots/baseline/index'), v1);
    // The guard loads with settle: the rewrite is done at load, before ready.
    const d = await world.daemon(t, ['--guard']);
    await d.stop();
    const after = readFileSync(t.p('snapshots/baseline/index'));
    assert.ok(after.toString('latin1', 0, 30).startsWith('warden-baseline 2 hmac-sha256='), 'the guard put it in the compact form');
    assert.equal(cli(t, ['verify']).code, 0);
  });
});
