/**
 * replaceFileAt through a held directory descriptor: the directory is moved out of its place
 * while the temp file is written (the agent's `mv`, here done at the last moment before the
 * rename). The descriptor follows the directory, so without the check the approved bytes
 * landed in the moved-away directory (seen once under load in test/guard/dir-moved-out).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fstatSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DIR_MOVED, openRoot, replaceFileAt, safeClose } from '../../src/fsx/beneath.js';

test('a directory moved away before the rename gets nothing: the temp file is dropped and EDIRMOVED thrown', () => {
  const base = mkdtempSync(join(tmpdir(), 'warden-replace-moved-'));
  try {
    mkdirSync(join(base, 'root', 'd'), { recursive: true });
    mkdirSync(join(base, 'away'));
    writeFileSync(join(base, 'root', 'd', 'f'), 'agent\n');
    const fd = openRoot(join(base, 'root', 'd'));
    const held = fstatSync(fd);
    let asked = 0;
    const stillHere = () => {
      asked++;
      renameSync(join(base, 'root', 'd'), join(base, 'away', 'd'));
      try { const now = lstatSync(join(base, 'root', 'd')); return now.ino === held.ino && now.dev === held.dev; } catch { return false; }
    };
    assert.throws(() => replaceFileAt(fd, 'f', Buffer.from('approved\n'), { mode: 0o600, stillHere }), (e: NodeJS.ErrnoException) => e.code === DIR_MOVED);
    assert.equal(asked, 1);
    assert.equal(readFileSync(join(base, 'away', 'd', 'f'), 'utf8'), 'agent\n', 'the moved-away directory kept its file');
    assert.deepEqual(readdirSync(join(base, 'away', 'd')), ['f'], 'no temp file left behind');
    // Still in place: written as usual.
    renameSync(join(base, 'away', 'd'), join(base, 'root', 'd'));
    replaceFileAt(fd, 'f', Buffer.from('approved\n'), { mode: 0o600, stillHere: () => true });
    assert.equal(readFileSync(join(base, 'root', 'd', 'f'), 'utf8'), 'approved\n');
    safeClose(fd);
  } finally { rmSync(base, { recursive: true, force: true }); }
});
