/** withDir: whatever the callback does, no descriptor stays open. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRoot, readSmallAt, safeClose, withDir } from '../../src/fsx/beneath.js';

const openFds = () => readdirSync('/proc/self/fd').length;

test('withDir closes every descriptor: on return, on throw, after a promise settles, and when the walk fails', async () => {
  const base = mkdtempSync(join(tmpdir(), 'warden-withdir-'));
  try {
    mkdirSync(join(base, 'a', 'b'), { recursive: true });
    writeFileSync(join(base, 'a', 'b', 'f'), 'hi');
    symlinkSync(join(base, 'a'), join(base, 'link'));
    const rootFd = openRoot(base);
    const before = openFds();
    assert.equal(withDir(rootFd, 'a/b', (fd) => readSmallAt(fd, 'f')?.toString(), () => 'missing'), 'hi');
    assert.throws(() => withDir(rootFd, 'a/b', () => { throw new Error('boom'); }, () => null), /boom/);
    assert.equal(await withDir(rootFd, 'a/b', async (fd) => { await new Promise((r) => setTimeout(r, 5)); return readSmallAt(fd, 'f')?.toString(); }, async () => 'missing'), 'hi');
    await assert.rejects(withDir(rootFd, 'a/b', async () => { await new Promise((r) => setTimeout(r, 5)); throw new Error('late'); }, async () => null), /late/);
    const f = withDir<unknown>(rootFd, 'a/nope/c', () => 'found', (why) => why);
    assert.deepEqual(f, { code: 'ENOENT', depth: 1, segment: 'nope' });
    const l = withDir(rootFd, 'link/b', () => 'followed', (why) => why.code);
    assert.match(l, /^(ELOOP|ENOTDIR)$/, 'a link on the way is never followed');
    assert.equal(openFds(), before, 'no descriptor leaked');
    safeClose(rootFd);
  } finally { rmSync(base, { recursive: true, force: true }); }
});
