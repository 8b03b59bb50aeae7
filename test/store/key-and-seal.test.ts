/**
 * The baseline key and seal (src/store/keys.ts) against real files in a temporary state
 * directory, in process: how a key is made (0600, 64 hex digits, in a 0700 keys/ made on
 * the way), what is refused (a link, a key others may read, a directory, malformed content),
 * and the seal written beside it (0600, through a temporary file, never through a link).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hmacEqual, hmacHex, keyPath, loadKey, readSeal, sealPath, stateBaseDir, writeSeal } from '../../src/store/keys.js';
import { WardenError } from '../../src/common/errors.js';
import { ioBase, ioSuite } from '../helpers/io-store.js';

let n = 0;
/** A state directory that does not exist yet (three levels down), for a root of its own. */
function fresh(): { env: NodeJS.ProcessEnv; xdg: string; root: string; keys: string } {
  const dir = join(ioBase(), `keys-${++n}`);
  const xdg = join(dir, 'deep', 'er', 'state');
  const env = { XDG_STATE_HOME: xdg, WARDEN_GUARD_STATE_DIR: join(dir, 'none') };
  return { env, xdg, root: join(dir, 'root'), keys: join(xdg, 'warden', 'keys') };
}
const id = (root: string) => createHash('sha256').update(root).digest('hex').slice(0, 16);
const throwsWarden = (fn: () => unknown, message: string) =>
  assert.throws(fn, (e: unknown) => { assert.ok(e instanceof WardenError, String(e)); assert.equal(e.message, message); return true; });

ioSuite('store I/O: the baseline key and seal (keys.ts)', () => {
  describe('loadKey', () => {
    it('makes a key on first use: 32 bytes written as 64 hex digits, 0600, in keys/ (0700) made with its parents', () => {
      const f = fresh();
      const path = join(f.keys, `${id(f.root)}.key`);
      assert.equal(keyPath(f.root, f.env), path);
      assert.equal(stateBaseDir(f.env), join(f.xdg, 'warden'));
      const key = loadKey(f.root, true, f.env);
      assert.equal(key.length, 32);
      assert.equal(readFileSync(path, 'utf8'), key.toString('hex'), 'the file holds exactly the key in hex');
      assert.equal(statSync(path).mode & 0o777, 0o600);
      assert.equal(statSync(f.keys).mode & 0o777, 0o700);
      assert.deepEqual(readdirSync(f.keys), [`${id(f.root)}.key`]);
      // Read back (with or without create): the same key, the file unchanged.
      assert.ok(loadKey(f.root, false, f.env).equals(key));
      assert.ok(loadKey(f.root, true, f.env).equals(key));
      assert.equal(readFileSync(path, 'utf8'), key.toString('hex'));
      // Another root: another key file, another key.
      const other = loadKey(`${f.root}2`, true, f.env);
      assert.ok(!other.equals(key));
    });

    it('a key file with a trailing newline is read (a key written by hand)', () => {
      const f = fresh();
      mkdirSync(f.keys, { recursive: true });
      const hex = 'ab'.repeat(32);
      writeFileSync(join(f.keys, `${id(f.root)}.key`), `${hex}\n`, { mode: 0o600 });
      assert.equal(loadKey(f.root, false, f.env).toString('hex'), hex);
    });

    it('no key and no create: says where it looked and what to do', () => {
      const f = fresh();
      throwsWarden(() => loadKey(f.root, false, f.env),
        `no baseline key at ${join(f.keys, `${id(f.root)}.key`)}: this root was initialised with another state directory, or the key was lost (run 'warden init --force' after checking the files)`);
      assert.equal(existsSync(f.keys), false, 'nothing made');
    });

    it('a key path that is a symbolic link is refused (O_NOFOLLOW), even to a valid key; nothing is made in its place', () => {
      const f = fresh();
      mkdirSync(f.keys, { recursive: true });
      const target = join(f.keys, '..', 'elsewhere.key');
      writeFileSync(target, 'cd'.repeat(32), { mode: 0o600 });
      const path = join(f.keys, `${id(f.root)}.key`);
      symlinkSync(target, path);
      throwsWarden(() => loadKey(f.root, true, f.env), `cannot read the baseline key ${path}: ELOOP`);
      assert.ok(lstatSync(path).isSymbolicLink());
      assert.equal(readFileSync(target, 'utf8'), 'cd'.repeat(32));
    });

    it('a key others may read or write is refused, with its mode', () => {
      const f = fresh();
      mkdirSync(f.keys, { recursive: true });
      const path = join(f.keys, `${id(f.root)}.key`);
      writeFileSync(path, 'ef'.repeat(32));
      for (const [mode, shown] of [[0o644, '644'], [0o640, '640'], [0o602, '602']] as const) {
        chmodSync(path, mode);
        throwsWarden(() => loadKey(f.root, false, f.env), `baseline key ${path} is readable by others (mode ${shown}); it must be 0600`);
      }
      chmodSync(path, 0o600);
      assert.equal(loadKey(f.root, false, f.env).toString('hex'), 'ef'.repeat(32));
      chmodSync(path, 0o400);
      assert.equal(loadKey(f.root, false, f.env).toString('hex'), 'ef'.repeat(32), 'read-only for its owner is fine');
    });

    it('a directory at the key path is not a key', () => {
      const f = fresh();
      const path = join(f.keys, `${id(f.root)}.key`);
      mkdirSync(path, { recursive: true, mode: 0o700 });
      throwsWarden(() => loadKey(f.root, true, f.env), `baseline key ${path} is not a regular file`);
    });

    it('malformed content is refused: not hex, too short, upper case, too long', () => {
      const f = fresh();
      mkdirSync(f.keys, { recursive: true });
      const path = join(f.keys, `${id(f.root)}.key`);
      for (const bad of ['zz'.repeat(32), 'ab'.repeat(31) + 'a', 'AB'.repeat(32), 'ab'.repeat(33), '']) {
        writeFileSync(path, bad, { mode: 0o600 });
        throwsWarden(() => loadKey(f.root, true, f.env), `baseline key ${path} is malformed`);
      }
    });
  });

  describe('hmacHex and hmacEqual', () => {
    it('hmacHex is HMAC-SHA256 in hex (RFC 4231-style vector)', () => {
      assert.equal(hmacHex(Buffer.from('key'), Buffer.from('The quick brown fox jumps over the lazy dog')), 'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8');
      const k = Buffer.alloc(32, 1);
      assert.equal(hmacHex(k, Buffer.from('x')), createHmac('sha256', k).update('x').digest('hex'));
    });
    it('equal only for the same string: a different digit or a different length is not', () => {
      const a = hmacHex(Buffer.alloc(32, 2), Buffer.from('body'));
      assert.equal(hmacEqual(a, a), true);
      assert.equal(hmacEqual(a, `${a}`), true);
      assert.equal(hmacEqual(a, `${a.slice(0, -1)}${a.endsWith('0') ? '1' : '0'}`), false);
      assert.equal(hmacEqual(a, a.slice(0, 63)), false);
      assert.equal(hmacEqual(a, `${a}0`), false);
      assert.equal(hmacEqual('', ''), true);
      assert.equal(hmacEqual(a, ''), false);
    });
  });

  describe('the seal', () => {
    it('sealPath is beside the key; readSeal of none is null; writeSeal writes the line, 0600, and leaves no temporary file', () => {
      const f = fresh();
      const path = sealPath(f.root, f.env);
      assert.equal(path, join(f.keys, `${id(f.root)}.seal`));
      mkdirSync(f.keys, { recursive: true });
      assert.equal(readSeal(path), null);
      writeSeal(path, `3 ${'a'.repeat(64)}`);
      assert.equal(readFileSync(path, 'utf8'), `3 ${'a'.repeat(64)}\n`);
      assert.equal(statSync(path).mode & 0o777, 0o600);
      assert.equal(readSeal(path), `3 ${'a'.repeat(64)}`);
      writeSeal(path, `4 ${'b'.repeat(64)} 3 ${'a'.repeat(64)}`);
      assert.equal(readSeal(path), `4 ${'b'.repeat(64)} 3 ${'a'.repeat(64)}`);
      assert.deepEqual(readdirSync(f.keys), [`${id(f.root)}.seal`]);
    });

    it('a seal that is a link is refused on read; a write replaces the link itself, never its target', () => {
      const f = fresh();
      mkdirSync(f.keys, { recursive: true });
      const path = sealPath(f.root, f.env);
      const target = join(f.keys, '..', 'target');
      writeFileSync(target, 'outside\n');
      symlinkSync(target, path);
      throwsWarden(() => readSeal(path), `cannot read the baseline seal ${path}: ELOOP`);
      writeSeal(path, '1 x');
      assert.equal(readFileSync(target, 'utf8'), 'outside\n', 'the target is untouched');
      assert.ok(lstatSync(path).isFile());
      assert.equal(readSeal(path), '1 x');
    });

    it('a link planted at the temporary name is not followed: the write fails, its target untouched', () => {
      const f = fresh();
      mkdirSync(f.keys, { recursive: true });
      const path = sealPath(f.root, f.env);
      const target = join(f.keys, '..', 'target2');
      writeFileSync(target, 'outside\n');
      symlinkSync(target, `${path}.${process.pid}.tmp`);
      assert.throws(() => writeSeal(path, '1 y'), (e: unknown) => (e as NodeJS.ErrnoException).code === 'ELOOP');
      assert.equal(readFileSync(target, 'utf8'), 'outside\n');
      assert.equal(existsSync(path), false);
    });

    it('a directory or a FIFO at the seal path is not a seal (and a FIFO never blocks the read)', () => {
      const f = fresh();
      mkdirSync(f.keys, { recursive: true });
      const path = sealPath(f.root, f.env);
      mkdirSync(path);
      throwsWarden(() => readSeal(path), `baseline seal ${path} is not a regular file`);
      const fifo = `${path}-fifo`;
      execFileSync('mkfifo', [fifo]);
      throwsWarden(() => readSeal(fifo), `baseline seal ${fifo} is not a regular file`);
    });
  });
});
