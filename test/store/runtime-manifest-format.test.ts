/**
 * The runtime manifest's format (src/store/manifest-format.ts): a strict parse that names what
 * is wrong, the root's identity, and where the guard publishes it and a runtime looks for it.
 * Pure: in `npm run mutate -- store` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  expectedLocation, manifestFromIndex, publishLocation, parseManifest, rootMismatch, serializeManifest, MANIFEST_FORMAT, MAX_MANIFEST_BYTES, type RuntimeManifest,
} from '../../src/store/manifest-format.js';
import type { BaselineIndex } from '../../src/store/baseline.js';

const SHA = 'ab'.repeat(32);
const ROOT = { path: '/home/a/root', dev: 5, ino: 77 };
const good = (): Record<string, unknown> => ({
  format: MANIFEST_FORMAT, version: 1, root: { ...ROOT }, generation: 3, updated: '2026-01-01T00:00:00Z',
  files: { 'orgs/a.toml': { kind: 'org', sha256: SHA, size: 10, mode: 0o644 } },
});
const parse = (v: unknown) => parseManifest(Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)));
const problem = (v: unknown): string | null => { const r = parse(v); return r.ok ? null : r.problem; };
const withFile = (f: unknown, path = 'orgs/a.toml') => ({ ...good(), files: { [path]: f } });

describe('runtime manifest format', () => {
  it('round trip: the manifest of an index, serialised and parsed back', () => {
    const index = { generation: 4, updated: 'u', files: { 'z.md': { kind: 'text', sha256: SHA, size: 1, mode: 0o100640 }, 'a.toml': { kind: 'org', sha256: SHA, size: 2, mode: 0o644 } } } as unknown as BaselineIndex;
    const m = manifestFromIndex(index, ROOT);
    assert.deepEqual(Object.keys(m.files), ['a.toml', 'z.md'], 'sorted');
    assert.equal(m.files['z.md']?.mode, 0o640, 'permission bits only');
    assert.deepEqual({ ...m, files: { ...m.files } }, { format: MANIFEST_FORMAT, version: 1, root: ROOT, generation: 4, updated: 'u', files: { 'a.toml': { kind: 'org', sha256: SHA, size: 2, mode: 0o644 }, 'z.md': { kind: 'text', sha256: SHA, size: 1, mode: 0o640 } } });
    assert.notEqual(m.root, ROOT, 'a copy of the identity');
    const bytes = serializeManifest(m);
    assert.ok(bytes.toString().endsWith('}\n'));
    assert.match(bytes.toString(), /^\{\n "format"/);
    const back = parseManifest(bytes);
    assert.ok(back.ok);
    if (back.ok) assert.deepEqual(JSON.parse(JSON.stringify(back.manifest)), JSON.parse(JSON.stringify(m)));
    assert.equal(MAX_MANIFEST_BYTES, 4 * 1024 * 1024);
  });
  it('accepts a valid one with every kind', () => {
    for (const kind of ['warden', 'conditions', 'guests', 'credentials', 'org', 'block', 'text']) assert.equal(problem(withFile({ kind, sha256: SHA, size: 0, mode: 0 })), null, kind);
    assert.equal(problem(withFile({ kind: 'org', sha256: SHA, size: 0, mode: 0o7777 })), null);
    assert.equal(problem({ ...good(), generation: 0 }), null);
    assert.equal(problem({ ...good(), files: {} }), null);
    assert.equal(problem(withFile({ kind: 'org', sha256: SHA, size: 1, mode: 1 }, 'a/b/c..d')), null, 'dots inside a name are fine');
  });
  it('refuses what is not JSON, or not an object', () => {
    assert.match(problem('{"format":') ?? '', /^not valid JSON \(truncated or altered\?\): /);
    assert.match(problem(Buffer.from([0x7b, 0xff, 0x7d]).toString('latin1')) ?? '', /^not valid JSON/);
    const bad = parseManifest(Uint8Array.from([0x22, 0xc3, 0x28, 0x22]));
    assert.equal(bad.ok, false, 'invalid UTF-8 is refused, not replaced');
    for (const v of ['[]', 'null', '5', '"x"']) assert.equal(problem(v), 'not a JSON object', v);
    // A whole manifest with one byte that is not UTF-8 in a path: refused as such, never read
    // as a path holding U+FFFD (which would then name no file of the root).
    const text = Buffer.from(JSON.stringify(withFile({ kind: 'org', sha256: SHA, size: 1, mode: 1 }, 'orgs/aX.toml')));
    text[text.indexOf('aX') + 1] = 0xff;
    assert.match(parseManifest(text).ok ? 'parsed' : (parseManifest(text) as { problem: string }).problem, /^not valid JSON \(truncated or altered\?\): /);
  });
  it('the format name is the published one (a runtime of another release reads it)', () => {
    assert.equal(MANIFEST_FORMAT, 'warden-runtime-manifest');
    const literal = `{"format":"warden-runtime-manifest","version":1,"root":{"path":"/r","dev":1,"ino":2},"generation":0,"updated":"","files":{}}`;
    assert.equal(problem(literal), null);
    assert.equal(JSON.parse(serializeManifest(manifestFromIndex({ generation: 0, updated: '', files: {} } as unknown as BaselineIndex, ROOT)).toString()).format, 'warden-runtime-manifest');
  });
  it('refuses each header field that is wrong, naming it', () => {
    assert.equal(problem({ ...good(), format: 'other' }), `format is not "${MANIFEST_FORMAT}"`);
    assert.equal(problem({ ...good(), version: 2 }), 'unsupported version 2');
    assert.equal(problem({ ...good(), version: '1' }), 'unsupported version "1"');
    for (const generation of [-1, 1.5, '3', null, 2 ** 53]) assert.equal(problem({ ...good(), generation }), 'generation is not a non-negative integer', String(generation));
    assert.equal(problem({ ...good(), updated: 5 }), 'updated is not a string');
    for (const root of [null, [], { ...ROOT, path: 'rel' }, { ...ROOT, path: 5 }, { ...ROOT, dev: -1 }, { ...ROOT, ino: 'x' }, { path: '/r', dev: 1 }]) {
      assert.equal(problem({ ...good(), root }), 'root is not {path, dev, ino}', JSON.stringify(root));
    }
    for (const files of [null, [], 'x']) assert.equal(problem({ ...good(), files }), 'files is not an object');
  });
  it('refuses a path that is not plain relative, and an entry that is not complete', () => {
    for (const p of ['', '/etc/passwd', 'a/../b', './a', 'a//b', 'a/', '..', 'a/.', 'a\0b']) {
      assert.equal(problem(withFile({ kind: 'org', sha256: SHA, size: 1, mode: 1 }, p)), `file path ${JSON.stringify(p)} is not a plain relative path`, JSON.stringify(p));
    }
    const e = `entry for "orgs/a.toml" is not {kind, sha256, size, mode}`;
    const f = { kind: 'org', sha256: SHA, size: 1, mode: 0o644 };
    for (const bad of [null, [], 5, { ...f, kind: 'nope' }, { ...f, kind: 3 }, { ...f, sha256: SHA.toUpperCase() }, { ...f, sha256: `${SHA}0` }, { ...f, sha256: SHA.slice(1) }, { ...f, sha256: 7 }, { ...f, sha256: [SHA] },
      { ...f, size: -1 }, { ...f, size: '1' }, { ...f, mode: 0o10000 }, { ...f, mode: -1 }, { ...f, mode: 1.5 }, { kind: 'org', sha256: SHA, size: 1 }]) {
      assert.equal(problem(withFile(bad)), e, JSON.stringify(bad));
    }
  });
  it('the parsed manifest holds only its own fields', () => {
    const r = parse({ ...good(), extra: 1, root: { ...ROOT, extra: 2 }, files: { 'a.md': { kind: 'text', sha256: SHA, size: 1, mode: 2, extra: 3 } } });
    assert.ok(r.ok);
    if (r.ok) {
      assert.deepEqual(JSON.parse(JSON.stringify(r.manifest)), { format: MANIFEST_FORMAT, version: 1, root: ROOT, generation: 3, updated: '2026-01-01T00:00:00Z', files: { 'a.md': { kind: 'text', sha256: SHA, size: 1, mode: 2 } } });
      assert.equal(Object.getPrototypeOf(r.manifest.files), null, 'a path such as __proto__ is data');
    }
    const proto = parse(`{"format":"${MANIFEST_FORMAT}","version":1,"root":{"path":"/r","dev":1,"ino":1},"generation":1,"updated":"","files":{"__proto__":{"kind":"text","sha256":"${SHA}","size":1,"mode":1}}}`);
    assert.ok(proto.ok);
    if (proto.ok) assert.deepEqual(Object.keys(proto.manifest.files), ['__proto__']);
  });
  it('root identity: path first, then the directory itself', () => {
    const m = { root: ROOT } as RuntimeManifest;
    assert.equal(rootMismatch(m, { ...ROOT }), null);
    assert.equal(rootMismatch(m, { ...ROOT, path: '/other' }), 'it is the manifest of another root ("/home/a/root", not "/other")');
    assert.equal(rootMismatch(m, { ...ROOT, ino: 78 }), 'it is the manifest of another directory at "/home/a/root" (the root was replaced since)');
    assert.equal(rootMismatch(m, { ...ROOT, dev: 6 }), 'it is the manifest of another directory at "/home/a/root" (the root was replaced since)');
  });
  it('where a runtime looks: the deployment when either of its directories exists, else beside the store', () => {
    const dirs = { runtimeDir: '/run/wg', stateDir: '/var/lib/wg' };
    const dep = { setup: 'deployment', path: '/run/wg/manifest.json', dir: '/run/wg' };
    assert.deepEqual(expectedLocation('/r', (p) => p === '/run/wg', dirs), dep);
    assert.deepEqual(expectedLocation('/r', (p) => p === '/var/lib/wg', dirs), dep);
    assert.deepEqual(expectedLocation('/r', () => false, dirs), { setup: 'session', path: '/r/snapshots/manifest.json', rel: 'snapshots/manifest.json' });
    assert.deepEqual(expectedLocation('/r', (p) => p === '/run/warden-guard'), { setup: 'deployment', path: '/run/warden-guard/manifest.json', dir: '/run/warden-guard' });
    assert.deepEqual(expectedLocation('/r', (p) => p === '/var/lib/warden-guard'), { setup: 'deployment', path: '/run/warden-guard/manifest.json', dir: '/run/warden-guard' });
  });
});

describe('where the guard publishes the manifest', () => {
  // Directories that do not exist: the system ones are then "not ours", so only the
  // environment decides (no dependence on this machine's /run or /var/lib).
  const none = { WARDEN_GUARD_STATE_DIR: '/nonexistent/s', WARDEN_GUARD_RUNTIME_DIR: '/nonexistent/r', XDG_STATE_HOME: '/nonexistent/x' };
  it('under the unit: its runtime directory', () => {
    assert.deepEqual(publishLocation('/r', { ...none, RUNTIME_DIRECTORY: '/run/warden-notify:/run/wg' }), { setup: 'deployment', path: '/run/wg/manifest.json', dir: '/run/wg' });
  });
  it('a command run with the deployment state directory: the matching /run/warden-guard', () => {
    assert.deepEqual(publishLocation('/r', { ...none, STATE_DIRECTORY: '/var/lib/warden-guard' }), { setup: 'deployment', path: '/run/warden-guard/manifest.json', dir: '/run/warden-guard' });
  });
  it('a session: beside the store', () => {
    assert.deepEqual(publishLocation('/r', { ...none }), { setup: 'session', path: '/r/snapshots/manifest.json', rel: 'snapshots/manifest.json' });
    assert.deepEqual(publishLocation('/r', { ...none, RUNTIME_DIRECTORY: 'relative' }), { setup: 'session', path: '/r/snapshots/manifest.json', rel: 'snapshots/manifest.json' });
  });
});
