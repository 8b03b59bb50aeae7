/**
 * The baseline held in memory (src/store/baseline-state.ts) over a real store made by init's
 * own code, in process: load refuses what does not authenticate (each reason in its words),
 * the seal names the newest index (and both while a commit is under way), commits and
 * rewrites keep index and seal in step, and approved bytes come from blobs that hash right.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { BaselineState, RECOVER } from '../../src/store/baseline-state.js';
import { parseIndex, readIndex, serializeIndexV1, type BaselineIndex } from '../../src/store/baseline.js';
import { readSeal } from '../../src/store/keys.js';
import { WardenError } from '../../src/common/errors.js';
import { ioInitRoot, ioSuite, loadState, type IoStore, withIoStore } from '../helpers/io-store.js';

const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');
const ORG = 'orgs/bookclub.toml';
const indexOf = (t: IoStore) => readFileSync(t.s('baseline/index'));
const pair = (t: IoStore, gen: number) => `${gen} ${sha(indexOf(t))}`;
const refuses = (fn: () => unknown, message: string) =>
  assert.throws(fn, (e: unknown) => { assert.ok(e instanceof WardenError, String(e)); assert.equal(e.message, message); return true; });
const change = (path: string, text: string | null, mode = 0o100644) => ({ path, kind: 'org' as const, bytes: text === null ? null : Buffer.from(text), mode, uid: 1234, gid: 5678 });

ioSuite('store I/O: the baseline held in memory (baseline-state.ts)', () => {
  describe('BaselineState.load', () => {
    it('an initialised store loads; its seal names the index (generation and sha256); nothing is rewritten when it is current', async () => {
      const t = await ioInitRoot();
      assert.equal(readSeal(t.seal), pair(t, 1));
      const sealIno = statSync(t.seal).ino;
      const idxIno = statSync(t.s('baseline/index')).ino;
      await withIoStore(t, (s) => {
        const st = loadState(t, s);
        assert.equal(st.index.generation, 1);
        assert.deepEqual(st.paths(), ['blocks/conditional/nsfw.md', 'config/conditions.toml', 'config/credentials.toml', 'config/guests.toml', 'config/warden.toml', ORG]);
        assert.deepEqual(st.entries().map(([p]) => p), st.paths());
        assert.equal(st.entry(ORG)?.sha256, sha(readFileSync(t.p(ORG))));
        assert.equal(st.entry('orgs/none.toml'), undefined);
        assert.equal(Object.getPrototypeOf(st.index.files), null, 'a table without a prototype');
        assert.equal(st.entry('constructor'), undefined, 'no inherited names');
        assert.ok(st.sameIndex(indexOf(t)));
        assert.equal(st.sameIndex(Buffer.from('other')), false);
      });
      assert.equal(statSync(t.seal).ino, sealIno, 'a current seal is not rewritten');
      assert.equal(statSync(t.s('baseline/index')).ino, idxIno);
    });

    it('no index: "no baseline yet" without a seal; with a seal, refused as a removed baseline', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, (s) => {
        rmSync(t.s('baseline/index'));
        refuses(() => loadState(t, s), `baseline-tampered: baseline/index was removed (a baseline was sealed for this root); warden will not start from nothing. ${RECOVER}`);
        rmSync(t.seal);
        refuses(() => loadState(t, s), "no baseline yet: run 'warden init' first");
        refuses(() => BaselineState.load(s.fd, t.key), "no baseline yet: run 'warden init' first");
      });
    });

    it('an index that does not authenticate is refused with its detail', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, (s) => {
        const raw = indexOf(t);
        const forged = Buffer.from(raw); forged[forged.length - 1] = forged[forged.length - 1]! ^ 1;
        writeFileSync(t.s('baseline/index'), forged);
        refuses(() => loadState(t, s), `baseline-tampered: baseline/index cannot be trusted (index HMAC does not match); warden will not adopt it. ${RECOVER}`);
        refuses(() => BaselineState.load(s.fd, t.key, { blobs: false }), `baseline-tampered: baseline/index cannot be trusted (index HMAC does not match); warden will not adopt it. ${RECOVER}`);
        rmSync(t.s('baseline/index'));
        mkdirSync(t.s('baseline/index'));
        refuses(() => loadState(t, s), `baseline-tampered: baseline/index cannot be trusted (index is not a regular file); warden will not adopt it. ${RECOVER}`);
      });
    });

    it('with blobs: a missing or altered approved blob is refused, naming the file; without, the index alone loads', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, (s) => {
        const h = loadState(t, s).entry(ORG)!.sha256;
        const blob = t.s(`blobs/${h}`);
        const bytes = readFileSync(blob);
        renameSync(blob, `${blob}.aside`);
        refuses(() => loadState(t, s), `baseline-tampered: the approved content of ${ORG} is missing from the store or altered; warden will not adopt it. ${RECOVER}`);
        assert.equal(loadState(t, s, false).entry(ORG)?.sha256, h);
        writeFileSync(blob, 'altered');
        refuses(() => loadState(t, s), `baseline-tampered: the approved content of ${ORG} is missing from the store or altered; warden will not adopt it. ${RECOVER}`);
        const cred = loadState(t, s, false).entry('config/credentials.toml')!.sha256;
        writeFileSync(blob, bytes);
        rmSync(t.s(`secrets/${cred}`));
        refuses(() => loadState(t, s), `baseline-tampered: the approved content of config/credentials.toml is missing from the store or altered; warden will not adopt it. ${RECOVER}`);
      });
    });

    it('an authentic older index (rolled back) is refused; a commit cut between seal and index rename is accepted and the seal settled', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, (s) => {
        const old = indexOf(t);
        const oldPair = pair(t, 1);
        const st = loadState(t, s);
        st.commit(s.fd, [change(ORG, 'a = 1\n')]);
        const newPair = pair(t, 2);
        assert.equal(readSeal(t.seal), newPair, 'after the commit: the new index alone');
        writeFileSync(t.s('baseline/index'), old);
        refuses(() => loadState(t, s), `baseline-tampered: baseline/index is authentic but not the latest approved one (generation 1, the seal names 2; rolled back, or written by a second writer?); warden will not adopt it. ${RECOVER}`);
        // The seal as a commit leaves it before its index rename: new pair, then the old.
        writeFileSync(t.seal, `${newPair} ${oldPair}\n`);
        const back = loadState(t, s);
        assert.equal(back.index.generation, 1);
        assert.equal(readSeal(t.seal), oldPair, 'settled on the index that stands');
        // A reader (no settle) changes nothing.
        writeFileSync(t.seal, `${newPair} ${oldPair}\n`);
        BaselineState.load(s.fd, t.key, { blobs: false }, t.seal);
        assert.equal(readSeal(t.seal), `${newPair} ${oldPair}`);
        // The index renamed, the seal not yet settled: the current pair is accepted and settled.
        st.commit(s.fd, [change(ORG, 'a = 2\n')]);
        const third = pair(t, 3);
        writeFileSync(t.seal, `${third} ${newPair}\n`);
        assert.equal(loadState(t, s).index.generation, 3);
        assert.equal(readSeal(t.seal), third);
      });
    });

    it('no seal yet: a writer writes it, a reader does not', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, (s) => {
        rmSync(t.seal);
        BaselineState.load(s.fd, t.key, { blobs: true }, t.seal);
        assert.equal(existsSync(t.seal), false);
        BaselineState.load(s.fd, t.key, { blobs: true, settle: true }, t.seal);
        assert.equal(readSeal(t.seal), pair(t, 1));
      });
    });

    it('an index in the JSON form of before: read as it is by a reader, rewritten compact by the writer, the seal following', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, (s) => {
        const r = readIndex(s.fd, t.key);
        assert.ok(r.ok);
        const v1 = serializeIndexV1(r.index, t.key);
        writeFileSync(t.s('baseline/index'), v1);
        writeFileSync(t.seal, `1 ${sha(v1)}\n`);
        const reader = BaselineState.load(s.fd, t.key, { blobs: true }, t.seal);
        assert.deepEqual(reader.paths(), Object.keys(r.index.files));
        assert.ok(indexOf(t).equals(v1), 'a reader changes nothing');
        const w = loadState(t, s);
        const now = indexOf(t);
        assert.ok(now.toString('latin1').startsWith('warden-baseline 2 hmac-sha256='));
        assert.ok(now.equals(r.raw), 'the compact form, byte for byte what init wrote');
        assert.equal(readSeal(t.seal), `1 ${sha(now)}`);
        assert.ok(w.sameIndex(now));
      });
    });
  });

  describe('BaselineState writes', () => {
    it('commit: blobs, then the next generation authenticated, the seal on it alone; a null change drops the path; modes keep the permission bits', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, (s) => {
        const st = loadState(t, s);
        const before = st.index.updated;
        // No root to publish for (publishFor not called): the commit publishes nothing, says nothing.
        const said: string[] = [];
        const write = process.stderr.write.bind(process.stderr);
        process.stderr.write = ((chunk: string | Uint8Array) => { said.push(String(chunk)); return true; }) as typeof process.stderr.write;
        try { st.commit(s.fd, [change(ORG, 'x = 1\n', 0o100640), change('config/guests.toml', null)]); }
        finally { process.stderr.write = write; }
        assert.deepEqual(said, []);
        assert.equal(st.index.generation, 2);
        assert.notEqual(st.index.updated, before);
        assert.deepEqual(st.entry(ORG), { kind: 'org', sha256: sha('x = 1\n'), size: 6, mode: 0o640, uid: 1234, gid: 5678 });
        assert.equal(st.entry('config/guests.toml'), undefined);
        assert.equal(readFileSync(t.s(`blobs/${sha('x = 1\n')}`), 'utf8'), 'x = 1\n');
        const r = parseIndex(indexOf(t), t.key);
        assert.ok(r.ok);
        assert.equal(r.index.generation, 2);
        assert.deepEqual(r.index.files[ORG], st.entry(ORG));
        assert.equal(r.index.files['config/guests.toml'], undefined);
        assert.equal(readSeal(t.seal), pair(t, 2));
        assert.ok(st.sameIndex(indexOf(t)));
        const again = loadState(t, s);
        assert.deepEqual(again.entry(ORG), st.entry(ORG));
        assert.ok(again.bytesOf(s.fd, ORG)?.equals(Buffer.from('x = 1\n')));
      });
    });

    it('rewriteIndex puts the held index back byte for byte after a tamper; the seal names it alone', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, (s) => {
        const raw = indexOf(t);
        const st = loadState(t, s);
        writeFileSync(t.s('baseline/index'), 'second writer');
        assert.equal(st.sameIndex(indexOf(t)), false);
        writeFileSync(t.seal, `7 ${'e'.repeat(64)}\n`);
        st.rewriteIndex(s.fd);
        assert.ok(indexOf(t).equals(raw));
        assert.equal(readSeal(t.seal), pair(t, 1));
        assert.equal(statSync(t.s('baseline/index')).mode & 0o777, 0o600);
        rmSync(t.seal);
        st.rewriteIndex(s.fd);
        assert.equal(readSeal(t.seal), pair(t, 1));
      });
    });

    it('rewriteIndex cut by a failing index write leaves a seal that names both (or the one, when they are the same)', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, (s) => {
        const st = loadState(t, s);
        const mine = pair(t, 1);
        const other = `7 ${'e'.repeat(64)}`;
        const baseline = t.s('baseline');
        renameSync(baseline, `${baseline}.aside`);
        writeFileSync(baseline, 'not a directory');
        writeFileSync(t.seal, `${other}\n`);
        assert.throws(() => st.rewriteIndex(s.fd));
        assert.equal(readSeal(t.seal), `${mine} ${other}`, 'both pairs while the index is put back');
        writeFileSync(t.seal, `${mine}\n`);
        assert.throws(() => st.rewriteIndex(s.fd));
        assert.equal(readSeal(t.seal), mine, 'the same pair is not named twice');
      });
    });

    it('checkSeal: null while current; a removed or moved seal is put back, and said so', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, (s) => {
        const st = loadState(t, s);
        const good = pair(t, 1);
        assert.equal(st.checkSeal(), null);
        rmSync(t.seal);
        assert.equal(st.checkSeal(), 'the baseline seal was removed');
        assert.equal(readSeal(t.seal), good);
        writeFileSync(t.seal, `9 ${'f'.repeat(64)}\n`);
        assert.equal(st.checkSeal(), 'the baseline seal names another index');
        assert.equal(readSeal(t.seal), good);
        assert.equal(st.checkSeal(), null);
        // A state that keeps no seal (tests of pure parts) has none to check.
        const noSeal = BaselineState.load(s.fd, t.key, { blobs: false, settle: true }, null);
        rmSync(t.seal);
        assert.equal(noSeal.checkSeal(), null);
        assert.equal(existsSync(t.seal), false);
        noSeal.commit(s.fd, [change(ORG, 'y = 2\n')]);
        assert.equal(existsSync(t.seal), false, 'no seal written by a state without one');
      });
    });

    it('fresh writes the seal of the index it is given; setDirs replaces the directory table', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, (s) => {
        const r = readIndex(s.fd, t.key);
        assert.ok(r.ok);
        rmSync(t.seal);
        const st = BaselineState.fresh(r.index, r.raw, null, t.key, t.seal);
        assert.equal(readSeal(t.seal), pair(t, 1));
        const dirs: BaselineIndex['dirs'] = { orgs: { mode: 0o700, uid: 1, gid: 2 } };
        st.setDirs(dirs);
        assert.deepEqual(st.index.dirs, dirs);
        assert.deepEqual(st.paths(), Object.keys(r.index.files), 'the files unchanged');
      });
    });
  });

  describe('BaselineState reads of approved bytes', () => {
    it('bytesOf: the blob when it hashes to the entry; null when unknown, missing or altered; rewriteBlob puts back only the right bytes', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, (s) => {
        const st = loadState(t, s);
        const bytes = readFileSync(t.p(ORG));
        assert.ok(st.bytesOf(s.fd, ORG)?.equals(bytes));
        assert.ok(st.bytesOf(s.fd, 'config/credentials.toml')?.equals(readFileSync(t.p('config/credentials.toml'))));
        assert.equal(st.bytesOf(s.fd, 'orgs/none.toml'), null);
        const blob = t.s(`blobs/${st.entry(ORG)!.sha256}`);
        writeFileSync(blob, 'altered');
        assert.equal(st.bytesOf(s.fd, ORG), null);
        assert.equal(st.rewriteBlob(s.fd, ORG, Buffer.from('not it')), false);
        assert.equal(readFileSync(blob, 'utf8'), 'altered');
        assert.equal(st.rewriteBlob(s.fd, ORG, null), false);
        assert.equal(st.rewriteBlob(s.fd, 'orgs/none.toml', bytes), false);
        assert.equal(st.rewriteBlob(s.fd, ORG, bytes), true);
        assert.ok(readFileSync(blob).equals(bytes));
        assert.ok(st.bytesOf(s.fd, ORG)?.equals(bytes));
        // A FIFO planted as a blob is no blob, and never blocks the read.
        rmSync(blob);
        execFileSync('mkfifo', [blob]);
        assert.equal(st.bytesOf(s.fd, ORG), null);
      });
    });

    it('held blob directories: a directory replaced since (and repaired) is walked to again when the blob is not in the held one', async () => {
      const t = await ioInitRoot();
      await withIoStore(t, (s) => {
        const st = loadState(t, s).holdBlobDirs(s.fd);
        const bytes = readFileSync(t.p(ORG));
        const h = st.entry(ORG)!.sha256;
        assert.ok(st.bytesOf(s.fd, ORG)?.equals(bytes), 'read through the held directory');
        // blobs/ replaced: the old one (still held) loses the blob, the new one has it.
        renameSync(t.s('blobs'), t.s('blobs.old'));
        rmSync(t.s(`blobs.old/${h}`));
        mkdirSync(t.s('blobs'), { mode: 0o700 });
        writeFileSync(t.s(`blobs/${h}`), bytes, { mode: 0o600 });
        assert.ok(st.bytesOf(s.fd, ORG)?.equals(bytes), 'found in the new blobs/');
        // Gone from both (held and current): null, and found again once put back.
        rmSync(t.s(`blobs/${h}`));
        assert.equal(st.bytesOf(s.fd, ORG), null);
        writeFileSync(t.s(`blobs/${h}`), bytes, { mode: 0o600 });
        assert.ok(st.holdBlobDirs(s.fd).bytesOf(s.fd, ORG)?.equals(bytes), 'held again');
        st.releaseBlobDirs();
        assert.ok(st.bytesOf(s.fd, ORG)?.equals(bytes), 'released: read with a walk each time');
        st.releaseBlobDirs();
        // Descriptors: held ones are opened once (not per read) and closed on release.
        const fds = () => readdirSync('/proc/self/fd').length;
        const before = fds();
        st.holdBlobDirs(s.fd);
        for (let i = 0; i < 5; i++) assert.ok(st.bytesOf(s.fd, ORG));
        assert.ok(st.bytesOf(s.fd, 'config/credentials.toml'));
        assert.equal(fds(), before + 2, 'blobs/ and secrets/ held, one descriptor each');
        st.releaseBlobDirs();
        assert.equal(fds(), before, 'all closed on release');

      });
    });
  });
});
