/**
 * The HMAC key that authenticates the baseline index. It lives outside snapshots/ so
 * that whoever can edit the store cannot forge a matching index (docs/CONTRACT.md §Baseline).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, renameSync, writeSync, fsyncSync } from 'node:fs';
import { join } from 'node:path';
import { WardenError, errnoCode } from '../common/errors.js';
import { KEYS_DIR, rootId, stateBase } from './location.js';

export { rootId } from './location.js';

/** The guard's state directory (location.ts): $STATE_DIRECTORY, /var/lib/warden-guard when ours, else $XDG_STATE_HOME/warden. */
export function stateBaseDir(env: NodeJS.ProcessEnv = process.env): string {
  return stateBase(env).dir;
}

export function keyPath(root: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(stateBaseDir(env), KEYS_DIR, `${rootId(root)}.key`);
}

const KEY_BYTES = 32;

/** Read the root's key; with create, make one (0600, exclusive) when there is none. */
export function loadKey(root: string, create: boolean, env: NodeJS.ProcessEnv = process.env): Buffer {
  const path = keyPath(root, env);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    if (errnoCode(err) !== 'ENOENT') throw new WardenError(`cannot read the baseline key ${path}: ${errnoCode(err)}`);
    if (!create) throw new WardenError(`no baseline key at ${path}: this root was initialised with another state directory, or the key was lost (run 'warden init --force' after checking the files)`);
    mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
    const key = randomBytes(KEY_BYTES);
    let wfd: number;
    // Two first starts at once: the loser reads the winner's key (the key is made before the lock is taken).
    try { wfd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600); }
    catch (e) { if (errnoCode(e) === 'EEXIST') return loadKey(root, false, env); throw e; }
    try { writeSync(wfd, key.toString('hex')); fsyncSync(wfd); } finally { closeSync(wfd); }
    return key;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new WardenError(`baseline key ${path} is not a regular file`);
    if ((st.mode & 0o077) !== 0) throw new WardenError(`baseline key ${path} is readable by others (mode ${(st.mode & 0o777).toString(8)}); it must be 0600`);
    const buf = Buffer.alloc(KEY_BYTES * 2 + 2);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const hex = buf.subarray(0, n).toString('utf8').trim();
    if (!/^[0-9a-f]{64}$/.test(hex)) throw new WardenError(`baseline key ${path} is malformed`);
    return Buffer.from(hex, 'hex');
  } finally {
    closeSync(fd);
  }
}

export function hmacHex(key: Buffer, data: Uint8Array): string {
  return createHmac('sha256', key).update(data).digest('hex');
}

export function hmacEqual(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * The seal: the generation and sha256 of the newest index, kept beside the key (outside
 * snapshots/). The HMAC proves an index was once approved; the seal proves it is the
 * latest one, so an old authenticated index copied back is not adopted at the next start.
 */
export function sealPath(root: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(stateBaseDir(env), KEYS_DIR, `${rootId(root)}.seal`);
}

export function readSeal(path: string): string | null {
  let fd: number;
  try { fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK); }
  catch (err) { if (errnoCode(err) === 'ENOENT') return null; throw new WardenError(`cannot read the baseline seal ${path}: ${errnoCode(err)}`); }
  try {
    if (!fstatSync(fd).isFile()) throw new WardenError(`baseline seal ${path} is not a regular file`);
    const buf = Buffer.alloc(256);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).toString('utf8').trim();
  } finally { closeSync(fd); }
}

export function writeSeal(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o600);
  try { writeSync(fd, text + '\n'); fsyncSync(fd); } finally { closeSync(fd); }
  renameSync(tmp, path);
}
