/**
 * The authenticated baseline (src/store/baseline.ts), in process: the compact index's bytes
 * (layout, encodings, every refusal with its exact detail), and a real store made by init's
 * own code, read and written through its descriptor (index 0600, blobs by hash, credentials
 * in secrets/, links and wrong types refused, torn blobs rewritten).
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  columnsOf, parseBody, parseIndex, readBlob, readIndex, serializeBody, serializeIndex, serializeIndexV1, sha256Hex,
  unauthenticatedFiles, writeBlob, writeBlobs, writeBlobsInTurns, writeIndex, blobDir, type BaselineIndex, type FileEntry,
} from '../../src/store/baseline.js';
import { hmacHex } from '../../src/store/keys.js';
import { ioInitRoot, ioSuite, type IoStore, withIoStore } from '../helpers/io-store.js';

const KEY = Buffer.alloc(32, 9);
const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const H2 = 'warden-baseline 2 hmac-sha256=';
/** A body signed with KEY: what a writer with the key would produce (tests of the parser behind the HMAC). */
const signed = (body: Buffer, key = KEY) => Buffer.concat([Buffer.from(`${H2}${hmacHex(key, body)}\n`), body]);
const entry = (kind: FileEntry['kind'], s: string, size: number, mode: number, uid: number, gid: number): FileEntry => ({ kind, sha256: sha(s), size, mode, uid, gid });

function three(): BaselineIndex {
  return {
    version: 1, generation: 5, updated: '2026-12-03T12:00:00.000Z',
    files: {
      'config/warden.toml': entry('warden', 'w', 10, 0o640, 1001, 2002),
      'orgs/a.toml': entry('org', 'a', 0, 0o600, 70000, 3),
      'config/credentials.toml': entry('credentials', 'c', 4096, 0o400, 0, 65536),
    },
    dirs: { orgs: { mode: 0o750, uid: 5, gid: 6 } },
  };
}
/** The three parts of a body: meta JSON, count, encoding byte, and where the columns start. */
function layout(body: Buffer): { meta: string; n: number; enc: number; cols: number } {
  const metaLen = body.readUInt32LE(0);
  return { meta: body.toString('utf8', 4, 4 + metaLen), n: body.readUInt32LE(4 + metaLen), enc: body[8 + metaLen]!, cols: 9 + metaLen };
}
const plain = (i: BaselineIndex) => ({ ...i, files: { ...i.files }, dirs: { ...i.dirs } });
const bad = (raw: Buffer, detail: string, problem = 'malformed') => {
  const r = parseIndex(raw, KEY);
  assert.deepEqual(r.ok ? { ok: true } : r, { ok: false, problem, detail });
};

ioSuite('store I/O: the authenticated baseline (baseline.ts)', () => {
  describe('the compact body', () => {
    it('lays out meta, count, encoding and the columns exactly (53 bytes a file), and parses back in order', () => {
      const index = three();
      const body = serializeBody(index);
      const l = layout(body);
      assert.equal(l.meta, JSON.stringify({ version: 2, generation: 5, updated: index.updated, dirs: index.dirs }));
      assert.equal(l.n, 3);
      assert.equal(l.enc, 0, 'ASCII paths: Latin-1');
      const paths = Object.keys(index.files).join('\0');
      assert.equal(body.length, l.cols + 3 * 53 + paths.length);
      // Columns: sha256 ×3, size ×3 (f64), mode, uid, gid (u32), kind (u8), paths.
      assert.equal(body.toString('hex', l.cols, l.cols + 32), sha('w'));
      assert.equal(body.toString('hex', l.cols + 64, l.cols + 96), sha('c'));
      assert.equal(body.readDoubleLE(l.cols + 96 + 16), 4096);
      assert.equal(body.readUInt32LE(l.cols + 120 + 4), 0o600);
      assert.equal(body.readUInt32LE(l.cols + 132 + 4), 70000);
      assert.equal(body.readUInt32LE(l.cols + 144 + 8), 65536);
      assert.deepEqual([...body.subarray(l.cols + 156, l.cols + 159)], [0, 4, 3], 'kind codes: warden, org, credentials');
      assert.equal(body.toString('latin1', l.cols + 159), paths);
      const back = parseBody(body);
      assert.deepEqual(Object.keys(back.files), Object.keys(index.files));
      assert.deepEqual(plain(back), plain(index));
      assert.ok(serializeBody(back).equals(body), 'byte for byte again');
    });

    it('Latin-1 paths stay one byte each; any other path makes the column UTF-16 (lone surrogates kept)', () => {
      const latin: BaselineIndex = { ...three(), files: { 'orgs/caf\u00e9.toml': entry('org', 'x', 1, 0o644, 1, 1), 'orgs/b.toml': entry('org', 'y', 2, 0o644, 1, 1) } };
      const lb = serializeBody(latin);
      assert.equal(layout(lb).enc, 0);
      assert.equal(lb.length, layout(lb).cols + 2 * 53 + 'orgs/caf\u00e9.toml\0orgs/b.toml'.length);
      assert.deepEqual(Object.keys(parseBody(lb).files), ['orgs/caf\u00e9.toml', 'orgs/b.toml']);
      const wide: BaselineIndex = { ...three(), files: { 'blocks/\u65e5\u672c.md': entry('block', 'j', 1, 0o644, 1, 1), 'orgs/\udcfe.toml': entry('org', 'r', 2, 0o644, 1, 1), 'orgs/z.toml': entry('org', 'z', 3, 0o644, 1, 1) } };
      const wb = serializeBody(wide);
      assert.equal(layout(wb).enc, 1);
      const names = Object.keys(wide.files).join('\0');
      assert.equal(wb.length, layout(wb).cols + 3 * 53 + 2 * names.length);
      const back = parseBody(wb);
      assert.deepEqual(Object.keys(back.files), Object.keys(wide.files));
      assert.deepEqual(plain(back), plain(wide));
      const empty: BaselineIndex = { ...three(), files: {} };
      assert.deepEqual(plain(parseBody(serializeBody(empty))), plain(empty));
    });

    it('refuses to write what it could not read back', () => {
      const w = (files: Record<string, FileEntry>) => () => serializeBody({ ...three(), files });
      const ok = entry('org', 'a', 1, 0o644, 1, 1);
      assert.throws(w({ '': ok }), { message: 'index path "" cannot be written' });
      assert.throws(w({ 'a\0b': ok }), { message: 'index path "a\\u0000b" cannot be written' });
      assert.throws(w({ a: { ...ok, kind: 'nope' as FileEntry['kind'] } }), { message: 'index entry for "a" cannot be written (kind "nope")' });
      assert.throws(w({ a: { ...ok, sha256: 'ab' } }), { message: 'index entry for "a" cannot be written (kind "org")' });
      assert.throws(w({ a: { ...ok, uid: -1 } }), { message: 'index entry for "a" cannot be written (kind "org")' });
      assert.throws(w({ a: { ...ok, gid: 2 ** 32 } }), { message: 'index entry for "a" cannot be written (kind "org")' });
      assert.throws(w({ a: { ...ok, mode: 1.5 } }), { message: 'index entry for "a" cannot be written (kind "org")' });
      assert.throws(w({ a: { ...ok, size: 1.5 } }), { message: 'index entry for "a" cannot be written (kind "org")' });
      assert.throws(w({ a: { ...ok, size: -1 } }), { message: 'index entry for "a" cannot be written (kind "org")' });
    });
  });

  describe('columnsOf', () => {
    it('of a parsed index: each file in order, sha256 as raw bytes, mode/uid/gid as numbers; the same as of the built index', () => {
      const index = three();
      const parsed = parseBody(serializeBody(index));
      const c = columnsOf(parsed);
      assert.deepEqual(c.paths, Object.keys(index.files));
      assert.equal(c.digests, Buffer.from(sha('w') + sha('a') + sha('c'), 'hex').toString('latin1'));
      assert.deepEqual([...c.mode], [0o640, 0o600, 0o400]);
      assert.deepEqual([...c.uid], [1001, 70000, 0]);
      assert.deepEqual([...c.gid], [2002, 3, 65536]);
      assert.equal(columnsOf(parsed), c, 'kept per index');
      const built = columnsOf(three());
      assert.deepEqual({ ...built, paths: [...built.paths] }, { ...c, paths: [...c.paths] });
    });
    it('of a built index whose digest is not hex: 32 NUL characters for it (never a match), the others raw', () => {
      const index = three();
      index.files['orgs/a.toml'] = { ...index.files['orgs/a.toml']!, sha256: 'not-hex' };
      const c = columnsOf(index);
      assert.equal(c.digests, Buffer.from(sha('w'), 'hex').toString('latin1') + '\0'.repeat(32) + Buffer.from(sha('c'), 'hex').toString('latin1'));
      assert.equal(c.digests.length, 96);
    });
  });

  describe('parseIndex', () => {
    it('authenticates before parsing: an altered header, body or key is refused with its reason', () => {
      const raw = serializeIndex(three(), KEY);
      const r = parseIndex(raw, KEY);
      assert.ok(r.ok && !r.legacy && r.raw === raw);
      assert.deepEqual(plain(r.index), plain(three()));
      bad(raw.subarray(0, raw.indexOf(0x0a)), 'index header is missing or altered', 'tampered');
      bad(Buffer.concat([Buffer.from('warden-baseline 3 hmac-sha256=x\n'), raw.subarray(raw.indexOf(0x0a) + 1)]), 'index header is missing or altered', 'tampered');
      // A change a parser would read happily (the generation in the meta JSON): refused for its HMAC.
      const forged = Buffer.from(raw.toString('latin1').replace('"generation":5', '"generation":6'), 'latin1');
      assert.equal(forged.length, raw.length);
      assert.deepEqual(parseBody(forged.subarray(forged.indexOf(0x0a) + 1)).generation, 6, 'the forged body itself parses');
      bad(forged, 'index HMAC does not match', 'tampered');
      const other = parseIndex(raw, Buffer.alloc(32, 1));
      assert.deepEqual(other.ok ? null : other.detail, 'index HMAC does not match');
    });

    it('an authenticated body that is not an index is malformed, each with its reason', () => {
      const body = serializeBody(three());
      const { cols } = layout(body);
      const metaLen = body.readUInt32LE(0);
      bad(signed(Buffer.alloc(8)), 'index body: truncated');
      const huge = Buffer.from(body); huge.writeUInt32LE(body.length, 0);
      bad(signed(huge), 'index body: truncated');
      const meta = (m: object) => { const j = Buffer.from(JSON.stringify(m)); const b = Buffer.alloc(9 + j.length); b.writeUInt32LE(j.length, 0); j.copy(b, 4); return b; };
      bad(signed(meta({ version: 3, generation: 1, updated: 'x', dirs: {} })), 'index body: unexpected shape');
      bad(signed(meta({ version: 2, generation: '1', updated: 'x', dirs: {} })), 'index body: unexpected shape');
      bad(signed(meta({ version: 2, generation: 1, updated: 1, dirs: {} })), 'index body: unexpected shape');
      bad(signed(meta({ version: 2, generation: 1, updated: 'x', dirs: null })), 'index body: unexpected shape');
      bad(signed(meta({ version: 2, generation: 1, updated: 'x', dirs: [] })), 'index body: unexpected shape');
      const okMeta = parseIndex(signed(meta({ version: 2, generation: 1, updated: 'x', dirs: {} })), KEY);
      assert.ok(okMeta.ok && Object.keys(okMeta.index.files).length === 0, 'an empty index is an index');
      const enc = Buffer.from(body); enc[8 + metaLen] = 2;
      bad(signed(enc), 'index body: truncated or not an index');
      bad(signed(body.subarray(0, cols + 3 * 53 - 1)), 'index body: truncated or not an index');
      const kind = Buffer.from(body); kind[cols + 156] = 99;
      bad(signed(kind), 'index body: record 0 is not an entry');
      const neg = Buffer.from(body); neg.writeDoubleLE(-1, cols + 96 + 8);
      bad(signed(neg), 'index body: record 1 is not an entry');
      const frac = Buffer.from(body); frac.writeDoubleLE(0.5, cols + 96 + 16);
      bad(signed(frac), 'index body: record 2 is not an entry');
      const huger = Buffer.from(body); huger.writeDoubleLE(2 ** 60, cols + 96);
      bad(signed(huger), 'index body: record 0 is not an entry');
      const pathsAt = cols + 159;
      const withPaths = (p: string, enc8 = 0) => { const b = Buffer.concat([body.subarray(0, pathsAt), Buffer.from(p, enc8 ? 'utf16le' : 'latin1')]); if (enc8) b[8 + metaLen] = 1; return b; };
      bad(signed(withPaths('\0orgs/a.toml\0c')), 'index body: record 0 is not an entry');
      bad(signed(withPaths('a\0b\0a')), 'index body: record 2: a path named twice');
      bad(signed(withPaths('a\0b')), 'index body: 2 paths for 3 records');
      bad(signed(withPaths('a\0b\0c\0d')), 'index body: 4 paths for 3 records');
      bad(signed(Buffer.concat([withPaths('a\0b\0c', 1), Buffer.of(0)])), 'index body: paths column is not UTF-16');
      const good = parseIndex(signed(withPaths('a\0b\0c', 1)), KEY);
      assert.ok(good.ok);
      assert.deepEqual(Object.keys(good.index.files), ['a', 'b', 'c']);
    });

    it('the JSON form of before is read (legacy) as it is, and refused when its shape is not an index', () => {
      const index = three();
      const v1 = serializeIndexV1(index, KEY);
      assert.ok(v1.toString('latin1').startsWith('warden-baseline 1 hmac-sha256='));
      const r = parseIndex(v1, KEY);
      assert.ok(r.ok);
      assert.equal(r.legacy, true);
      assert.deepEqual(r.index, JSON.parse(JSON.stringify(index)));
      const v1of = (text: string) => { const b = Buffer.from(text); return Buffer.concat([Buffer.from(`warden-baseline 1 hmac-sha256=${hmacHex(KEY, b)}\n`), b]); };
      bad(v1of(JSON.stringify({ ...index, version: 2 })), 'index body: unexpected shape');
      bad(v1of(JSON.stringify({ ...index, files: 'x' })), 'index body: unexpected shape');
      bad(v1of(JSON.stringify({ ...index, dirs: 1 })), 'index body: unexpected shape');
      const notJson = parseIndex(v1of('{'), KEY);
      assert.ok(!notJson.ok && notJson.problem === 'malformed' && notJson.detail.startsWith('index body: ') && notJson.detail.length > 'index body: '.length);
      bad(Buffer.from(v1.toString('latin1').replace('"size":10', '"size":11'), 'latin1'), 'index HMAC does not match', 'tampered');
    });
  });

  describe('unauthenticatedFiles (readers without the key)', () => {
    it('reads the entries of either form without checking the HMAC; bytes with no header line are refused', () => {
      const index = three();
      const v2 = serializeIndex(index, KEY);
      assert.deepEqual({ ...unauthenticatedFiles(v2) }, index.files);
      const otherKey = serializeIndex(index, Buffer.alloc(32, 3));
      assert.deepEqual({ ...unauthenticatedFiles(otherKey) }, index.files, 'no key: no HMAC check');
      assert.deepEqual(unauthenticatedFiles(serializeIndexV1(index, KEY)), JSON.parse(JSON.stringify(index.files)));
      assert.throws(() => unauthenticatedFiles(Buffer.from('warden-baseline 2 hmac-sha256=00')), { message: 'no header line' });
    });
  });

  describe('a real store (init in process)', () => {
    let t: IoStore;
    before(async () => { t = await ioInitRoot(); });

    it('init wrote a compact, authenticated index (0600) naming every protected file with its hash, size, mode and owner; the blobs by hash, credentials apart', async () => {
      const raw = readFileSync(t.s('baseline/index'));
      assert.ok(raw.toString('latin1').startsWith(H2));
      assert.equal(statSync(t.s('baseline/index')).mode & 0o777, 0o600);
      await withIoStore(t, (s) => {
        const r = readIndex(s.fd, t.key);
        assert.ok(r.ok, JSON.stringify(r));
        assert.ok(r.raw.equals(raw) && !r.legacy);
        assert.deepEqual(Object.keys(r.index.files), ['blocks/conditional/nsfw.md', 'config/conditions.toml', 'config/credentials.toml', 'config/guests.toml', 'config/warden.toml', 'orgs/bookclub.toml']);
        for (const [p, e] of Object.entries(r.index.files)) {
          const bytes = readFileSync(t.p(p));
          const st = statSync(t.p(p));
          assert.deepEqual(e, { kind: e.kind, sha256: sha(bytes), size: bytes.length, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid }, p);
          const where = t.s(`${e.kind === 'credentials' ? 'secrets' : 'blobs'}/${e.sha256}`);
          assert.ok(readFileSync(where).equals(bytes), p);
          assert.equal(statSync(where).mode & 0o777, 0o600);
          assert.ok(readBlob(s.fd, e.kind, e.sha256)?.equals(bytes));
        }
        assert.equal(r.index.files['config/credentials.toml']?.kind, 'credentials');
        assert.equal(r.index.files['config/warden.toml']?.kind, 'warden');
        assert.equal(r.index.files['orgs/bookclub.toml']?.kind, 'org');
        const cred = r.index.files['config/credentials.toml']!.sha256;
        assert.equal(existsSync(t.s(`blobs/${cred}`)), false, 'a credential file never enters blobs/');
        assert.equal(blobDir('credentials'), 'secrets');
        assert.equal(blobDir('text'), 'blobs');
      });
    });

    it('readIndex: no index or no baseline/ is "missing"; a link, a directory or a file in their place is tampered', async () => {
      const t2 = await ioInitRoot();
      await withIoStore(t2, (s) => {
        const idx = t2.s('baseline/index');
        const copy = join(t2.scratch, 'index');
        writeFileSync(copy, readFileSync(idx));
        renameSync(idx, `${idx}.aside`);
        assert.deepEqual(readIndex(s.fd, t2.key), { ok: false, problem: 'missing', detail: 'no baseline yet' });
        symlinkSync(copy, idx);
        assert.deepEqual(readIndex(s.fd, t2.key), { ok: false, problem: 'tampered', detail: 'index is not a regular file' });
        rmSync(idx);
        mkdirSync(idx);
        assert.deepEqual(readIndex(s.fd, t2.key), { ok: false, problem: 'tampered', detail: 'index is not a regular file' });
        rmSync(t2.s('baseline'), { recursive: true });
        assert.deepEqual(readIndex(s.fd, t2.key), { ok: false, problem: 'missing', detail: 'no baseline yet' });
        writeFileSync(t2.s('baseline'), 'x');
        assert.deepEqual(readIndex(s.fd, t2.key), { ok: false, problem: 'tampered', detail: 'baseline is not a directory (ENOTDIR)' });
        rmSync(t2.s('baseline'));
        // writeIndex makes baseline/ again and writes the index there, 0600.
        const bytes = writeIndex(s.fd, three(), t2.key);
        assert.ok(readFileSync(idx).equals(bytes));
        assert.ok(bytes.equals(serializeIndex(three(), t2.key)));
        assert.equal(statSync(idx).mode & 0o777, 0o600);
        const r = readIndex(s.fd, t2.key);
        assert.ok(r.ok && r.index.generation === 5);
        assert.deepEqual(readIndex(s.fd, KEY).ok ? null : (readIndex(s.fd, KEY) as { detail: string }).detail, 'index HMAC does not match');
      });
    });

    it('writeIndex replaces a link at the index with a file, never writing through it', async () => {
      await withIoStore(t, (s) => {
        const idx = t.s('baseline/index');
        const before = readFileSync(idx);
        const target = join(t.scratch, 'target');
        writeFileSync(target, 'outside\n');
        rmSync(idx);
        symlinkSync(target, idx);
        writeIndex(s.fd, parseIndex(before, t.key).ok ? (parseIndex(before, t.key) as { index: BaselineIndex }).index : three(), t.key);
        assert.equal(readFileSync(target, 'utf8'), 'outside\n');
        assert.ok(lstatSync(idx).isFile());
        assert.ok(readFileSync(idx).equals(before), 'the same index, written again byte for byte');
      });
    });

    it('writeBlob: stored under its hash, 0600, credentials in secrets/; an intact blob is left alone, an altered one rewritten; readBlob checks the hash', async () => {
      await withIoStore(t, (s) => {
        const b = Buffer.from('a new approved text\n');
        const h = writeBlob(s.fd, 'text', b);
        assert.equal(h, sha(b));
        const p = t.s(`blobs/${h}`);
        assert.ok(readFileSync(p).equals(b));
        assert.equal(statSync(p).mode & 0o777, 0o600);
        const ino = statSync(p).ino;
        assert.equal(writeBlob(s.fd, 'org', b), h);
        assert.equal(statSync(p).ino, ino, 'intact: not rewritten');
        writeFileSync(p, 'altered');
        assert.equal(readBlob(s.fd, 'text', h), null, 'altered: not served');
        assert.equal(writeBlob(s.fd, 'text', b), h);
        assert.ok(readFileSync(p).equals(b), 'altered: rewritten');
        assert.ok(readBlob(s.fd, 'block', h)?.equals(b));
        const secret = Buffer.from('token = "x"\n');
        const sh = writeBlob(s.fd, 'credentials', secret);
        assert.ok(readFileSync(t.s(`secrets/${sh}`)).equals(secret));
        assert.equal(existsSync(t.s(`blobs/${sh}`)), false);
        assert.equal(readBlob(s.fd, 'text', sh), null, 'not in blobs/');
        assert.ok(readBlob(s.fd, 'credentials', sh)?.equals(secret));
        assert.equal(readBlob(s.fd, 'text', sha('never stored')), null);
        // A link at a blob's name is never read through.
        const target = join(t.scratch, 'blob-target');
        writeFileSync(target, b);
        rmSync(p);
        symlinkSync(target, p);
        assert.equal(readBlob(s.fd, 'text', h), null);
        writeBlob(s.fd, 'text', b);
        assert.ok(lstatSync(p).isFile(), 'the link replaced by the blob');
        assert.ok(readFileSync(target).equals(b));
      });
    });

    it('writeBlob given the hash stores the bytes under that name (a re-write of an approved blob)', async () => {
      await withIoStore(t, (s) => {
        const b = Buffer.from('named by its caller\n');
        assert.equal(writeBlob(s.fd, 'text', b, sha(b)), sha(b));
        assert.ok(readFileSync(t.s(`blobs/${sha(b)}`)).equals(b));
      });
    });

    it('writeBlobs: new blobs created (0600), a duplicate once, an intact one untouched, a torn one rewritten; both directories', async () => {
      await withIoStore(t, (s) => {
        const mk = (x: string, kind: FileEntry['kind'] = 'text') => { const bytes = Buffer.from(x); return { kind, bytes, sha: sha(bytes) }; };
        const intact = mk('intact\n');
        const torn = mk('torn once\n');
        writeBlob(s.fd, 'text', intact.bytes);
        writeFileSync(t.s(`blobs/${torn.sha}`), 'torn', { mode: 0o600 });
        const inoIntact = statSync(t.s(`blobs/${intact.sha}`)).ino;
        const fresh1 = mk('fresh one\n');
        const cred = mk('k = "v"\n', 'credentials');
        writeBlobs(s.fd, [fresh1, intact, torn, fresh1, cred]);
        for (const it of [fresh1, intact, torn]) assert.ok(readFileSync(t.s(`blobs/${it.sha}`)).equals(it.bytes));
        assert.ok(readFileSync(t.s(`secrets/${cred.sha}`)).equals(cred.bytes));
        assert.equal(statSync(t.s(`blobs/${fresh1.sha}`)).mode & 0o777, 0o600);
        assert.equal(statSync(t.s(`blobs/${intact.sha}`)).ino, inoIntact);
        assert.deepEqual(readdirSync(t.s('blobs')).filter((n) => n.endsWith('.tmp')), []);
      });
    });

    it('writeBlobsInTurns: 600 blobs written, yielding to the event loop on the way', async () => {
      const t3 = await ioInitRoot();
      await withIoStore(t3, async (s) => {
        const items = Array.from({ length: 600 }, (_, i) => { const bytes = Buffer.from(`blob ${i}\n`); return { kind: 'text' as const, bytes, sha: sha(bytes) }; });
        let turns = 0;
        const tick = () => { turns++; if (turns < 1000) setImmediate(tick); };
        setImmediate(tick);
        let timer: NodeJS.Timeout | undefined;
        const deadline = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('writeBlobsInTurns did not finish within 20 s')), 20_000); });
        try { await Promise.race([writeBlobsInTurns(s.fd, items), deadline]); } finally { clearTimeout(timer); }
        assert.ok(turns >= 2, `the event loop turned ${turns} time(s) while 600 blobs were written`);
        for (const it of [items[0]!, items[299]!, items[599]!]) assert.ok(readFileSync(t3.s(`blobs/${it.sha}`)).equals(it.bytes));
        assert.equal(readdirSync(t3.s('blobs')).length, 600 + 5, '600 new blobs beside the 5 text blobs of init');
      });
    });

    it('sha256Hex is the sha256 of the bytes', () => {
      assert.equal(sha256Hex(Buffer.from('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
      assert.equal(sha256Hex(new Uint8Array(0)), sha(''));
    });
  });
});
