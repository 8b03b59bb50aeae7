/**
 * A protected file's approved ACL and extended attributes in the baseline index
 * (docs/ARCHITECTURE.md, "What a protected file's approved state is"): they round-trip in
 * the compact form and in the JSON form of before; an index written before they were
 * recorded (no `xattrs` key) reads as "none approved" and is written again byte for byte;
 * a malformed set is refused. And the pure comparison: acl for the access ACL, xattr for
 * any other kept attribute, nothing claimed when they could not be read.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { parseIndex, serializeIndex, serializeIndexV1, type BaselineIndex, type FileEntry } from '../../src/store/baseline.js';
import { hmacHex } from '../../src/store/keys.js';
import { attrReasons } from '../../src/guard/attrs.js';
import { classify, type Observation } from '../../src/guard/classify.js';
import { kept } from '../../src/fsx/xattrs.js';

const KEY = Buffer.alloc(32, 9);
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const ACL = Buffer.from('0200000001000600ffffffff', 'hex').toString('base64');

function index(withAttrs: boolean): BaselineIndex {
  const files: Record<string, FileEntry> = Object.create(null) as Record<string, FileEntry>;
  files['orgs/a.toml'] = { kind: 'org', sha256: sha('a'), size: 1, mode: 0o644, uid: 1, gid: 1, ...(withAttrs ? { xattrs: { 'system.posix_acl_access': ACL, 'user.origin': 'b3duZXI=' } } : {}) };
  files['orgs/b.toml'] = { kind: 'org', sha256: sha('b'), size: 1, mode: 0o644, uid: 1, gid: 1 };
  return { version: 1, generation: 3, updated: '2026-12-06T00:00:00.000Z', files, dirs: { '': { mode: 0o755, uid: 0, gid: 0 } } };
}
const plain = (i: BaselineIndex) => Object.fromEntries(Object.entries(i.files).map(([k, v]) => [k, { ...v }]));

describe('approved attributes in the index', () => {
  it('round-trip in the compact form and in the JSON form; a file without any carries no field', () => {
    for (const ser of [serializeIndex, serializeIndexV1]) {
      const raw = ser(index(true), KEY);
      const r = parseIndex(raw, KEY);
      assert.ok(r.ok, JSON.stringify(r));
      assert.deepStrictEqual(plain(r.index), plain(index(true)));
      assert.equal(r.index.files['orgs/b.toml']!.xattrs, undefined);
      if (ser === serializeIndex) assert.ok(serializeIndex(r.index, KEY).equals(raw), 'written again byte for byte');
    }
  });

  it('an index written before attributes were recorded reads as none approved, and is the same bytes when written again', () => {
    const raw = serializeIndex(index(false), KEY);
    assert.ok(!raw.includes(Buffer.from('xattrs')), 'no key when no file has any');
    const r = parseIndex(raw, KEY);
    assert.ok(r.ok);
    for (const e of Object.values(r.index.files)) assert.equal(e.xattrs, undefined);
    assert.ok(serializeIndex(r.index, KEY).equals(raw));
  });

  it('a set naming a path that is no entry, or a value that is not base64, is refused as malformed', () => {
    const raw = serializeIndex(index(true), KEY);
    const nl = raw.indexOf(0x0a);
    const body = raw.subarray(nl + 1);
    const metaLen = body.readUInt32LE(0);
    const meta = JSON.parse(body.toString('utf8', 4, 4 + metaLen)) as Record<string, unknown>;
    for (const bad of [{ 'orgs/zz.toml': { 'user.x': 'eA==' } }, { 'orgs/a.toml': { 'user.x': 'not base64!' } }, { 'orgs/a.toml': ['user.x'] }]) {
      const m = Buffer.from(JSON.stringify({ ...meta, xattrs: bad }));
      const len = Buffer.alloc(4); len.writeUInt32LE(m.length);
      const nb = Buffer.concat([len, m, body.subarray(4 + metaLen)]);
      const forged = Buffer.concat([Buffer.from(`warden-baseline 2 hmac-sha256=${hmacHex(KEY, nb)}\n`), nb]);
      const r = parseIndex(forged, KEY);
      assert.ok(!r.ok && r.problem === 'malformed', JSON.stringify(bad));
    }
  });
});

describe('comparing attributes', () => {
  const obs = (xattrs: Observation['xattrs']): Observation => ({ type: 'file', size: 1, mode: 0o644, uid: 1, gid: 1, ino: 5, sha256: sha('a'), bytes: null, xattrs });
  const approved = { sha256: sha('a'), size: 1, mode: 0o644, uid: 1, gid: 1 };

  it('an added ACL is acl, an added user attribute is xattr, both are both; the same set is clean', () => {
    assert.deepEqual(attrReasons(undefined, {}), []);
    assert.deepEqual(attrReasons(undefined, { 'system.posix_acl_access': ACL }), ['acl']);
    assert.deepEqual(attrReasons(undefined, { 'user.x': 'eQ==' }), ['xattr']);
    assert.deepEqual(attrReasons({}, { 'user.x': 'eQ==', 'system.posix_acl_access': ACL }), ['acl', 'xattr']);
    assert.deepEqual(attrReasons({ 'user.x': 'eQ==' }, { 'user.x': 'eg==' }), ['xattr'], 'a changed value');
    assert.deepEqual(attrReasons({ 'user.x': 'eQ==' }, {}), ['xattr'], 'a removed one');
    assert.deepEqual(attrReasons({ 'user.x': 'eQ==', 'system.posix_acl_access': ACL }, { 'system.posix_acl_access': ACL, 'user.x': 'eQ==' }), [], 'order does not matter');
  });

  it('attributes not read (null or absent) claim nothing: never "none"', () => {
    assert.deepEqual(attrReasons({ 'user.x': 'eQ==' }, null), []);
    assert.deepEqual(attrReasons({ 'user.x': 'eQ==' }, undefined), []);
    assert.equal(classify({ ...approved, xattrs: { 'user.x': 'eQ==' } }, obs(null)), null);
  });

  it('classify: an ACL alone is the reason acl; with new content it comes after content', () => {
    assert.deepEqual(classify(approved, obs({ 'system.posix_acl_access': ACL })), { reason: 'acl', also: [], action: 'reverted' });
    assert.deepEqual(classify(approved, { ...obs({ 'user.x': 'eQ==' }), sha256: sha('z') }), { reason: 'content', also: ['xattr'], action: 'reverted' });
  });

  it('kept: user.* and the access ACL; never trusted.*, security.* (capabilities, labels) or the default ACL of a file', () => {
    assert.ok(kept('user.x') && kept('system.posix_acl_access'));
    assert.ok(!kept('trusted.x') && !kept('security.capability') && !kept('security.selinux') && !kept('system.posix_acl_default'));
  });
});
