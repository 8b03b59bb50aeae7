/**
 * Blob stamps kept across restarts: the stat identity (guard/observe.ts statStamp:
 * inode, size, mode, owner, mtime, ctime) of each store blob last verified by hash, so the
 * first rescan after a start does not re-hash every blob.
 *
 * The file lives beside the key and the seal (outside the store, in the guard's state
 * directory) and is authenticated with the root's key, as the index is: a file that does not
 * carry a valid HMAC, names another store directory (device and inode) or is malformed is
 * ignored, and every blob is hashed again (fail closed). A stamp only lets a blob's read be
 * skipped while the blob's inode and ctime are unchanged; any write to a blob changes ctime,
 * so a blob forged while the guard was down is still hashed and caught.
 */
import { closeSync, constants, fstatSync, openSync, readSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { hmacEqual, hmacHex, stateBaseDir } from './keys.js';
import { KEYS_DIR, rootId } from './location.js';

const MAGIC = 'warden-blob-stamps 1';
const MAX_BYTES = 16 * 1024 * 1024;

export interface BlobStampsFile { path: string; key: Buffer }

export function blobStampsPath(root: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(stateBaseDir(env), KEYS_DIR, `${rootId(root)}.blob-stamps`);
}

/** The store directory's identity, bound into the file (a copied or other store is not trusted). */
export function storeIdentity(storeFd: number): string {
  const st = fstatSync(storeFd);
  return `${st.dev}:${st.ino}`;
}

/** The stamps, or null (absent, unreadable, not authentic, another store): the caller re-hashes. */
export function readBlobStamps(f: BlobStampsFile, storeId: string): Map<string, string> | null {
  let fd: number;
  try { fd = openSync(f.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK); } catch { return null; }
  let text: string;
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > MAX_BYTES) return null;
    const buf = Buffer.alloc(st.size);
    let n = 0;
    while (n < buf.length) { const r = readSync(fd, buf, n, buf.length - n, n); if (r === 0) break; n += r; }
    text = buf.subarray(0, n).toString('utf8');
  } catch { return null; } finally { closeSync(fd); }
  const cut = text.lastIndexOf('\nhmac ');
  if (cut < 0) return null;
  const body = text.slice(0, cut + 1);
  const mac = text.slice(cut + 6).trim();
  if (!/^[0-9a-f]{64}$/.test(mac) || !hmacEqual(mac, hmacHex(f.key, Buffer.from(body, 'utf8')))) return null;
  const lines = body.split('\n');
  if (lines[0] !== MAGIC || lines[1] !== `store ${storeId}`) return null;
  const out = new Map<string, string>();
  for (let i = 2; i < lines.length - 1; i++) {
    const m = /^([0-9a-f]{64}) (\S+)$/.exec(lines[i]!);
    if (!m) return null;
    out.set(m[1]!, m[2]!);
  }
  return out;
}

/** Write the stamps (temp + rename, 0600). A lost or torn file only costs a re-hash: no fsync. */
export function writeBlobStamps(f: BlobStampsFile, storeId: string, stamps: ReadonlyMap<string, string>): void {
  const parts = [MAGIC, `store ${storeId}`];
  for (const [sha, stamp] of stamps) parts.push(`${sha} ${stamp}`);
  const body = parts.join('\n') + '\n';
  const bytes = Buffer.from(`${body}hmac ${hmacHex(f.key, Buffer.from(body, 'utf8'))}\n`, 'utf8');
  // One fixed temp name: one guard per root writes this file (it holds the lock), and a temp
  // left by a kill is removed by the next write instead of piling up. Then an exclusive create:
  // whatever was at that name, link or not, is never written through.
  const tmp = `${f.path}.tmp`;
  try { unlinkSync(tmp); } catch (err) { if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; }
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  try { let n = 0; while (n < bytes.length) n += writeSync(fd, bytes, n, bytes.length - n); } finally { closeSync(fd); }
  renameSync(tmp, f.path);
}
