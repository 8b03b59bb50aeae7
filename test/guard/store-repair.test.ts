/**
 * The guard's store check (src/guard/store-check.ts) in this process, on real stores made by
 * init's own code (test/helpers/io-store.ts): a clean store raises nothing; a removed or
 * altered blob is written back from a live file that still has the approved content (also
 * when the first file with that content was edited, from another one); the index made
 * unreadable is reported with its cause and written back from the baseline held in memory.
 * No daemon: the check is driven as the guard's rescan drives it (verify), with its tamper
 * alerts and log lines collected. Part of the guard's fast mutation tier.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { ioInitRoot, ioRoot, ioSuite, loadState, type IoStore } from '../helpers/io-store.js';
import { initRoot } from '../../src/changes/init.js';
import { loadKey, sealPath } from '../../src/store/keys.js';
import { Store } from '../../src/store/store.js';
import { StoreCheck } from '../../src/guard/store-check.js';
import { openRoot, safeClose } from '../../src/fsx/beneath.js';
import { sha } from '../helpers/root.js';

interface Checked { t: IoStore; check: StoreCheck; tampers: { detail: string; path: string }[]; logs: string[]; close(): void }

/** A store check as the guard makes it: the store held open, the baseline loaded, the root held. */
function checker(t: IoStore): Checked {
  const store = t.open();
  const state = loadState(t, store);
  const rootFd = openRoot(t.root);
  const tampers: { detail: string; path: string }[] = [];
  const logs: string[] = [];
  const check = new StoreCheck(store, state, (detail, path) => tampers.push({ detail, path }), (l) => logs.push(l), rootFd);
  return { t, check, tampers, logs, close: () => { safeClose(rootFd); store.close(); } };
}

/** A root whose two conditional blocks have the same bytes (one blob for both). */
async function twinRoot(): Promise<IoStore> {
  const r = ioRoot();
  copyFileSync(r.p('blocks/conditional/nsfw.md'), r.p('blocks/conditional/nsfw2.md'));
  await initRoot(r.root, { force: false });
  return { ...r, key: loadKey(r.root, false), seal: sealPath(r.root), open: () => Store.open(r.root) };
}

ioSuite('the guard\'s store check', () => {
  it('a clean store (text and credential blobs) raises nothing, hashing every blob or only the changed ones', async () => {
    const c = checker(await ioInitRoot());
    try {
      c.check.verify(true);
      c.check.verify(false);
      c.check.verify(false, sha(readFileSync(c.t.p('orgs/bookclub.toml'))));
      assert.deepEqual(c.tampers, []);
      assert.deepEqual(c.logs, []);
    } finally { c.close(); }
  });

  it('a removed text blob and an altered credential blob are written back from the live files, and the alert says so', async () => {
    const c = checker(await ioInitRoot());
    try {
      const org = sha(readFileSync(c.t.p('orgs/bookclub.toml')));
      const cred = sha(readFileSync(c.t.p('config/credentials.toml')));
      rmSync(c.t.s(`blobs/${org}`));
      chmodSync(c.t.s(`secrets/${cred}`), 0o600);
      writeFileSync(c.t.s(`secrets/${cred}`), 'token = "planted"\n');
      c.check.verify(false);
      const details = c.tampers.map((x) => x.detail).sort();
      assert.deepEqual(details, [
        'the stored approved content of config/credentials.toml was altered or removed; written back from config/credentials.toml, which still has the approved content',
        'the stored approved content of orgs/bookclub.toml was altered or removed; written back from orgs/bookclub.toml, which still has the approved content',
      ]);
      assert.deepEqual(c.tampers.map((x) => x.path).sort(), [`snapshots/blobs/${org}`, `snapshots/secrets/${cred}`]);
      assert.equal(sha(readFileSync(c.t.s(`blobs/${org}`))), org);
      assert.equal(sha(readFileSync(c.t.s(`secrets/${cred}`))), cred);
      c.tampers.length = 0;
      c.check.verify(true);
      assert.deepEqual(c.tampers, [], 'repaired: the next full check finds nothing');
    } finally { c.close(); }
  });

  it('a blob shared by two files, removed while the first of them is edited: written back from the second', async () => {
    const c = checker(await twinRoot());
    try {
      const blob = sha(readFileSync(c.t.p('blocks/conditional/nsfw.md')));
      assert.equal(sha(readFileSync(c.t.p('blocks/conditional/nsfw2.md'))), blob);
      rmSync(c.t.s(`blobs/${blob}`));
      writeFileSync(c.t.p('blocks/conditional/nsfw.md'), 'edited by the agent\n');
      c.check.verify(false);
      assert.deepEqual(c.tampers.map((x) => x.detail), [
        'the stored approved content of blocks/conditional/nsfw.md was altered or removed; written back from blocks/conditional/nsfw2.md, which still has the approved content',
      ]);
      assert.equal(sha(readFileSync(c.t.s(`blobs/${blob}`))), blob);
    } finally { c.close(); }
  });

  it('a removed blob whose content no live file has any more: flagged as unrepairable, and logged', async () => {
    const c = checker(await ioInitRoot());
    try {
      const org = sha(readFileSync(c.t.p('orgs/bookclub.toml')));
      rmSync(c.t.s(`blobs/${org}`));
      writeFileSync(c.t.p('orgs/bookclub.toml'), 'name = "edited"\n');
      c.check.verify(false, org);
      assert.equal(c.tampers.length, 1);
      assert.match(c.tampers[0]!.detail, /^the stored approved content of orgs\/bookclub\.toml was altered or removed, and no live file has the approved content to rebuild it from; a revert of orgs\/bookclub\.toml fails closed/);
      assert.ok(c.logs.includes('<2>warden: approved content of orgs/bookclub.toml is gone from the store and from the root; cannot repair the store'), c.logs.join('\n'));
    } finally { c.close(); }
  });

  it('the index replaced by a directory: reported as unreadable with its cause; the rewrite that cannot replace a directory is logged with its code', async () => {
    const c = checker(await ioInitRoot());
    try {
      const index = c.t.s('baseline/index');
      renameSync(index, `${index}.away`);
      mkdirSync(index);
      c.check.verify(false, '-');
      assert.deepEqual(c.tampers.map((x) => x.detail), ['index unreadable (EINVAL); the baseline held in memory was written back']);
      assert.equal(c.tampers[0]!.path, 'snapshots/baseline/index');
      const line = c.logs.find((l) => l.startsWith('<2>warden: cannot rewrite the baseline index: '));
      assert.ok(line, c.logs.join('\n'));
      assert.match(line, /^<2>warden: cannot rewrite the baseline index: E[A-Z]+$/, 'the code alone, not the error\'s whole text');
    } finally { c.close(); }
  });

  it('an edited index is written back from the baseline held in memory', async () => {
    const c = checker(await ioInitRoot());
    try {
      const index = c.t.s('baseline/index');
      const good = readFileSync(index);
      writeFileSync(index, Buffer.concat([good, Buffer.from('\n')]));
      c.check.verify(false, '-');
      assert.deepEqual(c.tampers.map((x) => x.detail), ['index content differs from the authenticated baseline; the baseline held in memory was written back']);
      assert.ok(readFileSync(index).equals(good));
    } finally { c.close(); }
  });
});
