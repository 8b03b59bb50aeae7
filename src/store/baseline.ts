/**
 * The authenticated baseline: an index of every approved file (hash, size, mode, owner)
 * plus content-addressed blobs. The index is one file: a header line carrying the
 * HMAC of the JSON body that follows, so it is replaced in one atomic rename.
 */
import * as nodeCrypto from 'node:crypto';
import type { FileKind } from '../config/protected-set.js';
import { createFileAt, ensureDirBeneath, readSmallAt, replaceFileAt, safeClose, withDir, lstatAt } from '../fsx/beneath.js';
import { errnoCode } from '../common/errors.js';
import { syncNamesIn } from '../fsx/durable.js';
import { hmacEqual, hmacHex } from './keys.js';
import { BASELINE_DIR, BLOBS_DIR, INDEX_NAME, SECRETS_DIR } from './layout.js';
import type { StoreFd } from './store.js';

export interface FileEntry {
  kind: FileKind;
  sha256: string;
  size: number;
  mode: number;
  uid: number;
  gid: number;
}

export interface DirEntry { mode: number; uid: number; gid: number }

export interface BaselineIndex {
  version: 1;
  /** Bumped on every accepted change; history and alerts can refer to it. */
  generation: number;
  updated: string;
  files: Record<string, FileEntry>;
  dirs: Record<string, DirEntry>;
}

const HEADER = 'warden-baseline 1 hmac-sha256=';

/** crypto.hash (Node ≥ 20.12): one call, no Hash object per file (half the cost over 10,000 files); else createHash. */
const oneShot = (nodeCrypto as { hash?: (algorithm: string, data: Uint8Array, encoding: 'hex') => string }).hash;
export const sha256Hex: (b: Uint8Array) => string = oneShot
  ? (b) => oneShot('sha256', b, 'hex')
  : (b) => nodeCrypto.createHash('sha256').update(b).digest('hex');

export function serializeIndex(index: BaselineIndex, key: Buffer): Buffer {
  const body = Buffer.from(JSON.stringify(index));
  return Buffer.concat([Buffer.from(`${HEADER}${hmacHex(key, body)}\n`), body]);
}

export type IndexCheck =
  | { ok: true; index: BaselineIndex; raw: Buffer }
  | { ok: false; problem: 'missing' | 'tampered' | 'malformed'; detail: string };

/** Parse and authenticate index bytes. Pure apart from the HMAC. */
export function parseIndex(raw: Buffer, key: Buffer): IndexCheck {
  const nl = raw.indexOf(0x0a);
  const head = raw.subarray(0, nl < 0 ? raw.length : nl).toString('utf8');
  if (nl < 0 || !head.startsWith(HEADER)) return { ok: false, problem: 'tampered', detail: 'index header is missing or altered' };
  const body = raw.subarray(nl + 1);
  if (!hmacEqual(head.slice(HEADER.length), hmacHex(key, body))) return { ok: false, problem: 'tampered', detail: 'index HMAC does not match' };
  try {
    const index = JSON.parse(body.toString('utf8')) as BaselineIndex;
    if (index.version !== 1 || typeof index.files !== 'object' || typeof index.dirs !== 'object') throw new Error('unexpected shape');
    return { ok: true, index, raw };
  } catch (err) {
    return { ok: false, problem: 'malformed', detail: `index body: ${(err as Error).message}` };
  }
}

export function readIndex(storeFd: StoreFd, key: Buffer): IndexCheck {
  return withDir(storeFd, BASELINE_DIR, (fd): IndexCheck => {
    const st = lstatAt(fd, INDEX_NAME);
    if (!st) return { ok: false, problem: 'missing', detail: 'no baseline yet' };
    if (!st.isFile()) return { ok: false, problem: 'tampered', detail: 'index is not a regular file' };
    const raw = readSmallAt(fd, INDEX_NAME);
    if (!raw) return { ok: false, problem: 'missing', detail: 'no baseline yet' };
    return parseIndex(raw, key);
  }, (f) => f.code === 'ENOENT'
    ? { ok: false, problem: 'missing', detail: 'no baseline yet' }
    : { ok: false, problem: 'tampered', detail: `${BASELINE_DIR} is not a directory (${f.code})` });
}

export function writeIndex(storeFd: StoreFd, index: BaselineIndex, key: Buffer): Buffer {
  return writeIndexBytes(storeFd, serializeIndex(index, key));
}

export function writeIndexBytes(storeFd: StoreFd, bytes: Buffer): Buffer {
  const fd = ensureDirBeneath(storeFd, BASELINE_DIR);
  try {
    replaceFileAt(fd, INDEX_NAME, bytes, { mode: 0o600 });
  } finally {
    safeClose(fd);
  }
  return bytes;
}

export const blobDir = (kind: FileKind): string => (kind === 'credentials' ? SECRETS_DIR : BLOBS_DIR);

/** Store content under its hash (idempotent: an intact blob is left as it is). */
export function writeBlob(storeFd: StoreFd, kind: FileKind, bytes: Uint8Array, sha = sha256Hex(bytes)): string {
  const fd = ensureDirBeneath(storeFd, blobDir(kind));
  try {
    const existing = safeRead(fd, sha);
    if (existing && sha256Hex(existing) === sha) return sha;
    replaceFileAt(fd, sha, bytes, { mode: 0o600 });
    return sha;
  } finally {
    safeClose(fd);
  }
}

export interface BlobWrite { kind: FileKind; bytes: Uint8Array; sha: string }

/**
 * Store many blobs (init: every protected file), durable together: each is written with no
 * fsync of its own (created under its name when absent, else temp + rename), then one sync makes all of them and their directory
 * entries durable before this returns. The caller renames the index only after it returns,
 * so an index on disk never names a blob a crash could lose; a blob left torn by a crash
 * before that fails its hash and is rewritten by the next run.
 */
export function writeBlobs(storeFd: StoreFd, items: readonly BlobWrite[]): void {
  const run = writeBlobsStepwise(storeFd, items);
  while (!run.next().done) { /* all in one turn */ }
}

/** writeBlobs, yielding to the event loop every 256 blobs (so a git child started before keeps being served). */
export async function writeBlobsInTurns(storeFd: StoreFd, items: readonly BlobWrite[]): Promise<void> {
  const run = writeBlobsStepwise(storeFd, items);
  while (!run.next().done) await new Promise<void>((r) => setImmediate(r));
}

function* writeBlobsStepwise(storeFd: StoreFd, items: readonly BlobWrite[]): Generator<void, void, void> {
  const byDir = new Map<string, BlobWrite[]>();
  for (const it of items) {
    const d = blobDir(it.kind);
    const list = byDir.get(d);
    if (list) list.push(it); else byDir.set(d, [it]);
  }
  for (const [dir, list] of byDir) {
    const fd = ensureDirBeneath(storeFd, dir);
    try {
      const written = new Set<string>();
      for (const it of list) {
        if (written.has(it.sha)) continue;
        if (written.size % 256 === 255) yield;
        // Absent: create it under its own name (no temp, no rename). A crash can leave it
        // torn, which its name (the hash) exposes: it is then rewritten below.
        try { createFileAt(fd, it.sha, it.bytes, 0o600, false); written.add(it.sha); continue; } catch (err) { if (errnoCode(err) !== 'EEXIST') throw err; }
        const existing = safeRead(fd, it.sha);
        if (existing && sha256Hex(existing) === it.sha) continue;
        replaceFileAt(fd, it.sha, it.bytes, { mode: 0o600, durable: false });
        written.add(it.sha);
      }
      if (written.size > 0) syncNamesIn(fd, [...written]);
    } finally {
      safeClose(fd);
    }
  }
}

function safeRead(fd: number, name: string): Buffer | null {
  try { return readSmallAt(fd, name); } catch { return null; }
}

/** Read a blob and check it against its name; null when missing or not intact. */
export function readBlob(storeFd: StoreFd, kind: FileKind, sha: string): Buffer | null {
  return withDir(storeFd, blobDir(kind), (fd) => {
    const b = safeRead(fd, sha);
    return b && sha256Hex(b) === sha ? b : null;
  }, () => null);
}
