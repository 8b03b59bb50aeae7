/**
 * Pending records in a real store (fast tier): written 0600 with warden's HMAC header, read
 * back only when authentic and for the id asked, listed by id, removed by id only.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { codeHmac, listPendingIds, newPendingId, proposalSha, readPending, removePending, writePending, ID_RE, type PendingRecord } from '../../src/changes/pending.js';
import { hmacHex } from '../../src/store/keys.js';
import type { TestRoot } from '../helpers/root.js';
import { modeOf, roots, writer } from './in-process-root.js';

const R = roots();
after(() => R.cleanup());

const rec = (id: string): PendingRecord => ({
  version: 1, id, created: '2026-12-01T12:00:00.000Z', expires_at: 1, approval: 'tty', command: 'apply', user: 'u',
  base: { 'orgs/bookclub.toml': null }, changes: [{ path: 'orgs/bookclub.toml', content_b64: 'eA==' }], proposal_sha: 'p', attempts: 0,
});

function withStore<T>(t: TestRoot, fn: (fd: never, key: Buffer) => T): T {
  const w = writer(t, { prepare: false });
  try { return fn(w.loaded.store.fd as never, w.env.key); } finally { w.close(); }
}
const file = (t: TestRoot, id: string) => t.p(`snapshots/pending/${id}.json`);

describe('pending records', () => {
  let t: TestRoot;
  it('setup', async () => { t = await R.init(); rmSync(t.p('snapshots/pending'), { recursive: true, force: true }); });

  it('no pending directory: nothing listed, a read says missing', () => {
    withStore(t, (fd, key) => {
      assert.deepEqual(listPendingIds(fd), []);
      assert.deepEqual(readPending(fd, key, 'abcd1234'), { ok: false, problem: 'missing', detail: 'no pending approval abcd1234' });
      removePending(fd, 'abcd1234');
    });
  });

  it('written 0600 (directory 0700) with the HMAC header, read back whole', () => {
    withStore(t, (fd, key) => {
      writePending(fd, key, rec('abcd1234'));
      const raw = readFileSync(file(t, 'abcd1234'));
      const nl = raw.indexOf(0x0a);
      assert.equal(raw.subarray(0, nl).toString(), `warden-pending 1 hmac-sha256=${hmacHex(key, raw.subarray(nl + 1))}`);
      assert.equal(modeOf(file(t, 'abcd1234')), 0o600);
      assert.equal(modeOf(t.p('snapshots/pending')), 0o700);
      assert.deepEqual(readPending(fd, key, 'abcd1234'), { ok: true, rec: rec('abcd1234') });
    });
  });

  it('an id that is not one is refused before any file is touched', () => {
    withStore(t, (fd, key) => {
      for (const id of ['../x', 'ABCD', 'abc', 'a'.repeat(41), 'abcd1234.json']) {
        assert.deepEqual(readPending(fd, key, id), { ok: false, problem: 'missing', detail: `"${id}" is not a pending approval id` }, id);
      }
      writeFileSync(t.p('snapshots/pending/ABCD.json'), 'x');
      removePending(fd, 'ABCD');
      assert.ok(readdirSync(t.p('snapshots/pending')).includes('ABCD.json'), 'removePending ignores a bad id');
      rmSync(t.p('snapshots/pending/ABCD.json'));
      assert.ok(ID_RE.test('a'.repeat(40)) && ID_RE.test('abcd'));
    });
  });

  it('missing, forged, for another id, malformed, not a regular file', () => {
    withStore(t, (fd, key) => {
      assert.deepEqual(readPending(fd, key, 'zzzz0000'), { ok: false, problem: 'missing', detail: 'no pending approval zzzz0000 (already answered, cancelled or expired?)' });
      writePending(fd, key, rec('bbbb0000'));
      writeFileSync(file(t, 'bbbb0000'), readFileSync(file(t, 'bbbb0000'), 'utf8').replace('"attempts":0', '"attempts":1'));
      assert.deepEqual(readPending(fd, key, 'bbbb0000'), { ok: false, problem: 'tampered', detail: 'snapshots/pending/bbbb0000.json was not written by warden (HMAC mismatch)' });
      writeFileSync(file(t, 'bbbb0000'), JSON.stringify(rec('bbbb0000')));
      assert.equal(readPending(fd, key, 'bbbb0000').ok, false, 'no header line');
      const body = Buffer.from(JSON.stringify(rec('bbbb0000')));
      writeFileSync(file(t, 'bbbb0000'), Buffer.concat([Buffer.from(`warden-pending 1 hmac-sha256=${hmacHex(key, body).toUpperCase()}\n`), body]));
      assert.equal((readPending(fd, key, 'bbbb0000') as { problem: string }).problem, 'tampered', 'the header is exact');
      writeFileSync(file(t, 'bbbb0000'), Buffer.concat([Buffer.from(`xwarden-pending 1 hmac-sha256=${hmacHex(key, body)}\n`), body]));
      assert.equal((readPending(fd, key, 'bbbb0000') as { problem: string }).problem, 'tampered', 'anchored at the start');
      writeFileSync(file(t, 'bbbb0000'), Buffer.concat([Buffer.from(`warden-pending 1 hmac-sha256=${hmacHex(key, body)}x\n`), body]));
      assert.equal((readPending(fd, key, 'bbbb0000') as { problem: string }).problem, 'tampered', 'anchored at the end');
      // An authentic record of another request, planted under this name.
      writePending(fd, key, rec('cccc0000'));
      writeFileSync(file(t, 'bbbb0000'), readFileSync(file(t, 'cccc0000')));
      assert.deepEqual(readPending(fd, key, 'bbbb0000'), { ok: false, problem: 'tampered', detail: 'snapshots/pending/bbbb0000.json holds another request' });
      const junk = Buffer.from('{nope');
      writeFileSync(file(t, 'bbbb0000'), Buffer.concat([Buffer.from(`warden-pending 1 hmac-sha256=${hmacHex(key, junk)}\n`), junk]));
      const m = readPending(fd, key, 'bbbb0000');
      assert.equal(m.ok, false);
      assert.match((m as { detail: string }).detail, /^snapshots\/pending\/bbbb0000\.json is malformed \(.+\)$/);
      rmSync(file(t, 'bbbb0000'));
      mkdirSync(file(t, 'bbbb0000'));
      assert.deepEqual(readPending(fd, key, 'bbbb0000'), { ok: false, problem: 'tampered', detail: 'snapshots/pending/bbbb0000.json is not a regular file' });
      rmSync(file(t, 'bbbb0000'), { recursive: true });
    });
  });

  it('listed by id, sorted, only valid ids of .json files; removed by id', () => {
    withStore(t, (fd, key) => {
      writePending(fd, key, rec('dddd0000'));
      writeFileSync(t.p('snapshots/pending/notes.txt'), 'x');
      writeFileSync(t.p('snapshots/pending/UPPER.json'), 'x');
      assert.deepEqual(listPendingIds(fd), ['abcd1234', 'cccc0000', 'dddd0000']);
      removePending(fd, 'cccc0000');
      removePending(fd, 'eeee0000');
      assert.deepEqual(listPendingIds(fd), ['abcd1234', 'dddd0000']);
    });
  });

  it('ids, proposal hashes and code HMACs', () => {
    const a = newPendingId();
    assert.match(a, ID_RE);
    assert.notEqual(newPendingId(), a);
    const c1 = [{ path: 'b', content_b64: 'eA==' }, { path: 'a', content_b64: null, keep: true, mode: 0o600 }];
    assert.equal(proposalSha(c1), proposalSha([...c1].reverse()), 'order does not matter');
    assert.notEqual(proposalSha(c1), proposalSha([c1[0]!, { ...c1[1]!, keep: false }]));
    assert.notEqual(proposalSha(c1), proposalSha([c1[0]!, { ...c1[1]!, mode: 0o644 }]));
    assert.match(proposalSha(c1), /^[0-9a-f]{64}$/);
    const key = Buffer.alloc(32, 1);
    assert.equal(codeHmac(key, 'abcd', '12345678'), hmacHex(key, Buffer.from('owner-code:abcd:12345678')));
  });
});
