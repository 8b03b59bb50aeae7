/**
 * Late writes and what quarantine keeps, against the real daemon: 100 truncate-then-write edits
 * (some in pieces) all end in quarantine; every folder 0700, every kept file 0600 sharing no
 * inode with a path the attacker holds, a directory kept as it was.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, closeSync, linkSync, lstatSync, mkdirSync, openSync, readFileSync, readdirSync, renameSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { protectedPicture, readAlertsOf, waitFor } from '../helpers/root.js';
import { daemon, fresh } from '../helpers/fresh-guard.js';

const ORG = 'orgs/bookclub.toml';
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

describe('nothing lost', () => {
  it('100 truncate-then-write edits, some in pieces: every marker is in quarantine', async () => {
    const t = fresh();
    await daemon(t);
    const approved = protectedPicture(t);
    const markers: string[] = [];
    for (let i = 0; i < 100; i++) {
      const marker = `marker-${i}-${Math.random().toString(36).slice(2)}`;
      markers.push(marker);
      const fd = openSync(t.p(ORG), 'w'); // O_TRUNC: the file is empty from here
      sleep(i % 2 ? 15 : 3); // long enough for the revert of the emptied file to win the race
      const text = `members = ["${marker}"]\n`;
      const pieces = i % 3 === 0 ? [text] : i % 3 === 1 ? [text.slice(0, 9), text.slice(9)] : [text.slice(0, 5), text.slice(5, 14), text.slice(14)];
      for (const [k, piece] of pieces.entries()) { if (k) sleep(4); writeSync(fd, piece); }
      closeSync(fd);
      await waitFor(() => same(protectedPicture(t), approved), 10_000, `edit ${i} reverted`);
    }
    // The late bytes went into the rejected inode, which quarantine holds.
    const kept = readdirSync(t.p('snapshots/quarantine')).flatMap((id) => readdirSync(t.p(`snapshots/quarantine/${id}`)).map((n) => readFileSync(t.p(`snapshots/quarantine/${id}/${n}`), 'utf8'))).join('\n');
    const lost = markers.filter((m) => !kept.includes(m));
    assert.deepEqual(lost, [], `${lost.length} of 100 markers lost`);
  });

  it('every quarantine folder is 0700; every file kept is 0600 and shares no inode with a path the attacker holds; a directory is kept as it was', async () => {
    const t = fresh();
    await daemon(t);
    const approved = protectedPicture(t);
    // An unexpected file, a directory with a file in it, a FIFO; all world-readable.
    writeFileSync(t.p('orgs/extra.toml'), 'members = []\n', { mode: 0o644 });
    mkdirSync(t.p('orgs/dir.toml'), { mode: 0o755 });
    writeFileSync(t.p('orgs/dir.toml/inner'), 'x', { mode: 0o644 });
    // A too-large credential file, 0644, with a hard link the attacker keeps.
    const big = t.p('config/credentials.toml.partial');
    writeFileSync(big, Buffer.alloc(2 * 1024 * 1024, 0x41), { mode: 0o644 });
    chmodSync(big, 0o644);
    const alias = join(t.base, 'held-link');
    linkSync(big, alias);
    renameSync(big, t.p('config/credentials.toml'));
    await waitFor(() => same(protectedPicture(t), approved) && readAlertsOf(t).some((a) => a.path === 'config/credentials.toml' && a.quarantine)
      && ['orgs/extra.toml', 'orgs/dir.toml'].every((p) => readAlertsOf(t).some((a) => a.path === p && a.quarantine)), 10_000, 'reverts');
    const heldIno = statSync(alias).ino;
    // A directory is not warden's to change (docs/ARCHITECTURE.md, invariant 19): moved whole,
    // its mode and its file's as they were; the 0700 folder around it keeps everyone else out.
    const dirKept = readAlertsOf(t).find((a) => a.path === 'orgs/dir.toml' && a.quarantine)!.quarantine!;
    assert.equal(lstatSync(t.p(dirKept)).mode & 0o777, 0o755, 'the directory keeps its mode');
    assert.equal(lstatSync(t.p(`${dirKept}/inner`)).mode & 0o777, 0o644, 'and so does the file in it');
    assert.equal(readFileSync(t.p(`${dirKept}/inner`), 'utf8'), 'x');
    const walk = (rel: string): void => {
      const st = lstatSync(t.p(rel));
      if (st.isSymbolicLink() || rel === dirKept) return;
      if (st.isDirectory()) {
        assert.equal(st.mode & 0o777, 0o700, `${rel} is 0700`);
        for (const n of readdirSync(t.p(rel))) walk(`${rel}/${n}`);
        return;
      }
      assert.equal(st.mode & 0o777, 0o600, `${rel} is 0600`);
      assert.notEqual(st.ino, heldIno, `${rel} is not the inode the attacker holds`);
      assert.equal(st.nlink, 1, `${rel} has no other name`);
    };
    walk('snapshots/quarantine');
    const cred = readAlertsOf(t).find((a) => a.path === 'config/credentials.toml' && a.quarantine)!;
    assert.ok(statSync(t.p(cred.quarantine!)).size > 0, 'a bounded copy of the too-large file is kept');
  });
});
