/**
 * The authenticated baseline: an index of every approved file (hash, size, mode, owner)
 * plus content-addressed blobs. The index is one file: a header line carrying the
 * HMAC of the JSON body that follows, so it is replaced in one atomic rename.
 */
import * as nodeCrypto from 'node:crypto';
import type { Stats } from 'node:fs';
import type { FileKind } from '../config/protected-set.js';
import { createFileAt, ensureDirBeneath, readSmallAt, replaceFileAt, safeClose, withDir, lstatAt } from '../fsx/beneath.js';
import { dict } from '../common/dict.js';
import { errnoCode } from '../common/errors.js';
import { syncNamesIn } from '../fsx/durable.js';
import { hmacEqual, hmacHex } from './keys.js';
import { BASELINE_DIR, BLOBS_DIR, INDEX_NAME, SECRETS_DIR } from './layout.js';
import type { StoreFd } from './store.js';
import type { XattrSet } from '../fsx/xattrs.js';
import { parseProfileRootRecord, type ProfileRootRecord } from '../config/profile-root.js';

export interface FileEntry {
  kind: FileKind;
  sha256: string;
  size: number;
  mode: number;
  uid: number;
  gid: number;
  /**
   * The approved ACL and extended attributes its owner can set (fsx/xattrs.ts `kept`), name →
   * base64 value. Absent: none (an index written before they were recorded approved none,
   * which is what a file usually has).
   */
  xattrs?: XattrSet;
}

export interface DirEntry {
  mode: number;
  uid: number;
  gid: number;
  /**
   * Its approved ACLs (access and default) and `user.*` attributes (fsx/xattrs.ts `kept`),
   * `{}` when it has none. Absent: none recorded (an index written before directories'
   * were, or where they could not be read): nothing is claimed about them.
   */
  xattrs?: XattrSet;
}

export interface BaselineIndex {
  version: 1;
  /** Bumped on every accepted change; history and alerts can refer to it. */
  generation: number;
  updated: string;
  files: Record<string, FileEntry>;
  dirs: Record<string, DirEntry>;
  /**
   * A profile's root (config/profile-root.ts): which profile, level and files this root
   * guards, recorded at init and carried by every later index (authenticated with it).
   * Absent: a root with its own config/warden.toml.
   */
  profile?: ProfileRootRecord;
}

/** The JSON index of before the compact index: still read (an existing store loads as it is), never written. */
const HEADER_V1 = 'warden-baseline 1 hmac-sha256=';
/** The compact index: the same header line, then the binary body below. */
const HEADER = 'warden-baseline 2 hmac-sha256=';

/** crypto.hash (Node ≥ 20.12): one call, no Hash object per file (half the cost over 10,000 files); else createHash. */
const oneShot = (nodeCrypto as { hash?: (algorithm: string, data: Uint8Array, encoding: 'hex') => string }).hash;
export const sha256Hex: (b: Uint8Array) => string = oneShot
  ? (b) => oneShot('sha256', b, 'hex')
  : (b) => nodeCrypto.createHash('sha256').update(b).digest('hex');

/**
 * The compact body (version 2), in columns so that reading it is a few bulk decodes, not a
 * parse per file: a u32 length and that many bytes of JSON for what is small ({version,
 * generation, updated, dirs}), a u32 count N, a u8 path encoding (0 latin1, 1 utf16le),
 * then the columns, each N long and in the index's order: sha256 (32 raw bytes each),
 * size (f64), mode, uid, gid (u32 each), kind (u8), and last the paths joined by NUL
 * (a path never holds one) in the stated encoding. Little-endian throughout. The few files
 * with approved extended attributes have them in the small JSON part (`xattrs`: path → name
 * → base64), absent when none has any: a body without the key reads as before, and a reader
 * of before the key ignores it (the HMAC covers it either way). A directory's entry in `dirs`
 * carries its attributes (`xattrs`, `{}` for none) once they were recorded; an entry without
 * the key (written before) records none, and a reader of before ignores it.
 *
 * ~70 bytes a file instead of ~150 of JSON, and no 1.4 MB string to decode and parse at
 * 10,000 files. The paths are Latin-1 when every code unit of every path is below 0x100
 * (every ASCII root), else UTF-16 code units, so a name kept as raw bytes (lone surrogates,
 * common/names.ts) comes back exactly as it went in.
 */
const KIND_CODES: readonly FileKind[] = ['warden', 'conditions', 'guests', 'credentials', 'org', 'block', 'text'];
const KIND_CODE: ReadonlyMap<string, number> = new Map(KIND_CODES.map((k, i) => [k, i]));
const PER_FILE = 32 + 8 + 4 * 3 + 1;
const u32 = (n: number): boolean => Number.isInteger(n) && n >= 0 && n <= 0xffffffff;
const LATIN1 = /^[\u0001-\u00ff]*$/;
const SHA_HEX = /^[0-9a-f]{64}$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
function isXattrSet(v: unknown): v is XattrSet {
  return isObject(v) && Object.entries(v).every(([n, x]) => n !== '' && typeof x === 'string' && BASE64.test(x));
}

/** The body alone (no header, no HMAC): tests that forge an index use it. */
export function serializeBody(index: BaselineIndex): Buffer {
  const paths = Object.keys(index.files);
  const xattrs: Record<string, XattrSet> = {};
  for (const p of paths) { const x = index.files[p]!.xattrs; if (x && Object.keys(x).length > 0) xattrs[p] = x; }
  const meta = Buffer.from(JSON.stringify({ version: 2, generation: index.generation, updated: index.updated, dirs: index.dirs, ...(Object.keys(xattrs).length ? { xattrs } : {}), ...(index.profile ? { profile: index.profile } : {}) }));
  const n = paths.length;
  for (const p of paths) if (p === '' || p.includes('\0')) throw new Error(`index path ${JSON.stringify(p)} cannot be written`);
  const joined = paths.join('\0');
  const latin1 = LATIN1.test(joined.replaceAll('\0', ''));
  const pathBytes = Buffer.from(joined, latin1 ? 'latin1' : 'utf16le');
  const head = 4 + meta.length + 4 + 1;
  const out = Buffer.alloc(head + n * PER_FILE + pathBytes.length);
  let o = out.writeUInt32LE(meta.length, 0);
  o += meta.copy(out, o);
  o = out.writeUInt32LE(n, o);
  o = out.writeUInt8(latin1 ? 0 : 1, o);
  const sha = o, size = sha + 32 * n, mode = size + 8 * n, uid = mode + 4 * n, gid = uid + 4 * n, kind = gid + 4 * n, path = kind + n;
  for (let i = 0; i < n; i++) {
    const e = index.files[paths[i]!]!;
    const k = KIND_CODE.get(e.kind);
    if (k === undefined || !SHA_HEX.test(e.sha256) || ![e.mode, e.uid, e.gid].every(u32) || !(Number.isSafeInteger(e.size) && e.size >= 0)) {
      throw new Error(`index entry for ${JSON.stringify(paths[i])} cannot be written (kind ${JSON.stringify(e.kind)})`);
    }
    out.write(e.sha256, sha + 32 * i, 32, 'hex');
    out.writeDoubleLE(e.size, size + 8 * i);
    out.writeUInt32LE(e.mode, mode + 4 * i);
    out.writeUInt32LE(e.uid, uid + 4 * i);
    out.writeUInt32LE(e.gid, gid + 4 * i);
    out[kind + i] = k;
  }
  pathBytes.copy(out, path);
  return out;
}

/** The files and settings of an authenticated version-2 body; throws (malformed) on anything else. */
export function parseBody(body: Buffer): BaselineIndex {
  if (body.length < 9) throw new Error('truncated');
  const metaLen = body.readUInt32LE(0);
  if (4 + metaLen + 5 > body.length) throw new Error('truncated');
  const meta = JSON.parse(body.toString('utf8', 4, 4 + metaLen)) as { version?: unknown; generation?: unknown; updated?: unknown; dirs?: unknown; xattrs?: unknown; profile?: unknown };
  if (meta.version !== 2 || typeof meta.generation !== 'number' || typeof meta.updated !== 'string' || typeof meta.dirs !== 'object' || meta.dirs === null || Array.isArray(meta.dirs)) throw new Error('unexpected shape');
  let o = 4 + metaLen;
  const n = body.readUInt32LE(o); o += 4;
  const enc = body[o]!; o += 1;
  if (enc > 1 || o + n * PER_FILE > body.length) throw new Error('truncated or not an index');
  const sha = o, size = sha + 32 * n, mode = size + 8 * n, uid = mode + 4 * n, gid = uid + 4 * n, kind = gid + 4 * n, path = kind + n;
  if (enc === 1 && (body.length - path) % 2 !== 0) throw new Error('paths column is not UTF-16');
  // Two bulk decodes: every sha256 as one hex string, every path as one string.
  const hex = body.toString('hex', sha, size);
  const paths = n === 0 ? [] : body.toString(enc === 0 ? 'latin1' : 'utf16le', path).split('\0');
  if (paths.length !== n) throw new Error(`${paths.length} paths for ${n} records`);
  const nums = new DataView(body.buffer, body.byteOffset, body.length);
  const files: Record<string, FileEntry> = dict();
  for (let i = 0; i < n; i++) {
    const p = paths[i]!;
    const k = KIND_CODES[body[kind + i]!];
    const sz = nums.getFloat64(size + 8 * i, true);
    if (p === '' || !k || !Number.isSafeInteger(sz) || sz < 0) throw new Error(`record ${i} is not an entry`);
    if (files[p] !== undefined) throw new Error(`record ${i}: a path named twice`);
    files[p] = {
      kind: k, sha256: hex.slice(64 * i, 64 * i + 64), size: sz,
      mode: nums.getUint32(mode + 4 * i, true), uid: nums.getUint32(uid + 4 * i, true), gid: nums.getUint32(gid + 4 * i, true),
    };
  }
  if (meta.xattrs !== undefined) {
    if (!isObject(meta.xattrs)) throw new Error('unexpected shape');
    for (const [p, set] of Object.entries(meta.xattrs)) {
      const e = files[p];
      if (e === undefined || !isXattrSet(set)) throw new Error('extended attributes of a path that is not an entry, or not name → base64');
      e.xattrs = set;
    }
  }
  for (const e of Object.values(meta.dirs as Record<string, unknown>)) {
    if (isObject(e) && e.xattrs !== undefined && !isXattrSet(e.xattrs)) throw new Error('extended attributes of a directory that are not name → base64');
  }
  const profile = meta.profile === undefined ? undefined : parseProfileRootRecord(meta.profile);
  if (profile === null) throw new Error('a profile root record that is not one');
  const index: BaselineIndex = { version: 1, generation: meta.generation, updated: meta.updated, files, dirs: dict(meta.dirs as BaselineIndex['dirs']), ...(profile ? { profile } : {}) };
  const cols: IndexColumns = {
    paths, digests: body.toString('latin1', sha, size),
    mode: new Uint32Array(n), uid: new Uint32Array(n), gid: new Uint32Array(n),
  };
  for (let i = 0; i < n; i++) {
    cols.mode[i] = nums.getUint32(mode + 4 * i, true); cols.uid[i] = nums.getUint32(uid + 4 * i, true); cols.gid[i] = nums.getUint32(gid + 4 * i, true);
  }
  COLUMNS.set(index, cols);
  return index;
}

/**
 * The files of an index as columns, in the index's order: what `warden verify` walks (one
 * entry after another, no lookup by path). `digests` holds each sha256 as 32 Latin-1 chars
 * (the raw bytes), so a file's digest is compared with no hex string made per file.
 */
export interface IndexColumns {
  readonly paths: readonly string[];
  readonly digests: string;
  readonly mode: Uint32Array;
  readonly uid: Uint32Array;
  readonly gid: Uint32Array;
}

/** Kept per index object: a copy or a new generation (commit) has none and builds its own. */
const COLUMNS = new WeakMap<BaselineIndex, IndexColumns>();

/** The columns of an index: those of its body when it was parsed from one, else built from its files. */
export function columnsOf(index: BaselineIndex): IndexColumns {
  const known = COLUMNS.get(index);
  if (known) return known;
  const paths = Object.keys(index.files);
  const n = paths.length;
  const cols: IndexColumns = { paths, digests: '', mode: new Uint32Array(n), uid: new Uint32Array(n), gid: new Uint32Array(n) };
  let digests = '';
  for (let i = 0; i < n; i++) {
    const e = index.files[paths[i]!]!;
    digests += SHA_HEX.test(e.sha256) ? Buffer.from(e.sha256, 'hex').toString('latin1') : '\0'.repeat(32);
    cols.mode[i] = e.mode; cols.uid[i] = e.uid; cols.gid[i] = e.gid;
  }
  const built = { ...cols, digests };
  COLUMNS.set(index, built);
  return built;
}

/**
 * The entries of index bytes, either form, WITHOUT authenticating them: for a reader that
 * holds no key (approved-config.ts: the notifier, the witness), which trusts the store by
 * where it is and checks each blob against the hash named here. Throws when malformed.
 */
export function unauthenticatedFiles(raw: Buffer): Record<string, FileEntry> {
  const nl = raw.indexOf(0x0a);
  if (nl < 0) throw new Error('no header line');
  const body = raw.subarray(nl + 1);
  if (raw.toString('latin1', 0, HEADER.length) === HEADER) return parseBody(body).files;
  return (JSON.parse(body.toString('utf8')) as BaselineIndex).files;
}

/** The profile root record of index bytes (either form), WITHOUT authenticating them, as unauthenticatedFiles. */
export function unauthenticatedProfile(raw: Buffer): ProfileRootRecord | undefined {
  const nl = raw.indexOf(0x0a);
  if (nl < 0) throw new Error('no header line');
  if (raw.toString('latin1', 0, HEADER.length) !== HEADER) return undefined;
  return parseBody(raw.subarray(nl + 1)).profile;
}

export function serializeIndex(index: BaselineIndex, key: Buffer): Buffer {
  const body = serializeBody(index);
  return Buffer.concat([Buffer.from(`${HEADER}${hmacHex(key, body)}\n`), body]);
}

/** The index in the JSON form of before the compact index (what an existing store holds; tests of the migration). */
export function serializeIndexV1(index: BaselineIndex, key: Buffer): Buffer {
  const body = Buffer.from(JSON.stringify(index));
  return Buffer.concat([Buffer.from(`${HEADER_V1}${hmacHex(key, body)}\n`), body]);
}

export type IndexCheck =
  | { ok: true; index: BaselineIndex; raw: Buffer; /** written in the JSON form of before the compact index */ legacy: boolean }
  | { ok: false; problem: 'missing' | 'tampered' | 'malformed'; detail: string };

/** Parse and authenticate index bytes (either form). Pure apart from the HMAC: nothing is parsed before it verifies. */
export function parseIndex(raw: Buffer, key: Buffer): IndexCheck {
  const nl = raw.indexOf(0x0a);
  const head = raw.subarray(0, nl < 0 ? raw.length : nl).toString('utf8');
  const legacy = head.startsWith(HEADER_V1);
  if (nl < 0 || !(legacy || head.startsWith(HEADER))) return { ok: false, problem: 'tampered', detail: 'index header is missing or altered' };
  const body = raw.subarray(nl + 1);
  if (!hmacEqual(head.slice(HEADER.length), hmacHex(key, body))) return { ok: false, problem: 'tampered', detail: 'index HMAC does not match' };
  try {
    if (!legacy) return { ok: true, index: parseBody(body), raw, legacy };
    const index = JSON.parse(body.toString('utf8')) as BaselineIndex;
    if (index.version !== 1 || typeof index.files !== 'object' || typeof index.dirs !== 'object') throw new Error('unexpected shape');
    return { ok: true, index, raw, legacy };
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
export async function writeBlobsInTurns(storeFd: StoreFd, items: readonly BlobWrite[], created?: (sha: string, st: Stats) => void): Promise<void> {
  const run = writeBlobsStepwise(storeFd, items, created);
  while (!run.next().done) await new Promise<void>((r) => setImmediate(r));
}

/** `created`: each blob this call created under its own name, as fstat saw it once written (the blob stamps of init). */
function* writeBlobsStepwise(storeFd: StoreFd, items: readonly BlobWrite[], created?: (sha: string, st: Stats) => void): Generator<void, void, void> {
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
        try { createFileAt(fd, it.sha, it.bytes, 0o600, false, created && ((st) => created(it.sha, st))); written.add(it.sha); continue; } catch (err) { if (errnoCode(err) !== 'EEXIST') throw err; }
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
