/** withCwdAt + AT_FDCWD: a pass over one directory's files by plain name, with the meaning of the descriptor. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AT_FDCWD, lstatAt, openRoot, readRegularAt, safeClose, tryOpenDir, withCwdAt } from '../../src/fsx/beneath.js';

test('names resolve in the directory the descriptor holds, even after its path moved; the cwd comes back', () => {
  const base = mkdtempSync(join(tmpdir(), 'warden-cwdat-'));
  const before = process.cwd();
  try {
    mkdirSync(join(base, 'a'));
    writeFileSync(join(base, 'a', 'f.txt'), 'in a\n');
    symlinkSync('/etc/passwd', join(base, 'a', 'link'));
    const root = openRoot(base);
    const w = tryOpenDir(root, 'a'); assert.ok(w.ok); const fd = w.fd;
    try {
      // The path now leads elsewhere: a planted directory with its own f.txt.
      renameSync(join(base, 'a'), join(base, 'moved'));
      mkdirSync(join(base, 'a'));
      writeFileSync(join(base, 'a', 'f.txt'), 'planted\n');
      const r = withCwdAt(fd, () => ({
        text: readRegularAt(AT_FDCWD, 'f.txt', 100)?.bytes?.toString(),
        link: lstatAt(AT_FDCWD, 'link')?.isSymbolicLink(),
        viaLink: readRegularAt(AT_FDCWD, 'link', 100),
      }));
      assert.ok(r, 'the current directory could be changed');
      assert.equal(r.value.text, 'in a\n', 'the descriptor\'s directory, not the path\'s');
      assert.equal(r.value.link, true);
      assert.equal(r.value.viaLink, null, 'a link is never followed (O_NOFOLLOW)');
      assert.equal(process.cwd(), before, 'the current directory is put back');
      // A throw inside also puts it back.
      assert.throws(() => withCwdAt(fd, () => { throw new Error('boom'); }), /boom/);
      assert.equal(process.cwd(), before);
    } finally { safeClose(fd); safeClose(root); }
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
});
