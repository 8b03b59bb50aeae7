/**
 * The baseline held in memory. Loaded once and authenticated; afterwards the guard trusts
 * only this copy of the index, so a later edit of snapshots/ can be detected and undone,
 * never adopted. Approved bytes are not held: each is read from its store blob when needed
 * and used only when it hashes to the sha256 the authenticated index names.
 */
import { dict } from '../common/dict.js';
import { WardenError } from '../common/errors.js';
import {
  blobDir, readIndex, serializeIndex, sha256Hex, writeBlob, writeIndexBytes,
  type BaselineIndex, type FileEntry,
} from './baseline.js';
import { tryOpenDir, readRegularAt, safeClose } from '../fsx/beneath.js';
import { readSeal, writeSeal } from './keys.js';
import type { FileKind } from '../config/protected-set.js';
import { publishManifest } from './manifest.js';
import type { StoreFd } from './store.js';
import type { XattrSet } from '../fsx/xattrs.js';

/** What the owner must do when the store does not authenticate (said once, the same everywhere). */
export const RECOVER = "warden does not guard this root until its state is approved again: run 'warden init --force' on a terminal; it shows what differs from the last approved state (snapshots/history) and asks before adopting anything.";

/** The largest blob read back (a protected file is at most max_bytes; this only bounds a planted one). */
const BLOB_READ_LIMIT = 64 * 1024 * 1024;

export interface BaselineChange {
  path: string;
  kind: FileKind;
  /** New approved content, or null to drop the path from the baseline. */
  bytes: Buffer | null;
  mode: number;
  uid: number;
  gid: number;
  /** The approved ACL and extended attributes (baseline.ts FileEntry); absent: none (a file warden writes has none). */
  xattrs?: XattrSet;
}

/**
 * The seal names the latest index ("<generation> <sha256>"). While a commit is under way it
 * also names the one before (a second pair), so a crash between the seal and the index
 * rename leaves a seal that accepts either; the commit then drops the old pair.
 */
const sealPair = (generation: number, indexBytes: Buffer): string => `${generation} ${sha256Hex(indexBytes)}`;

function safeReadSeal(path: string): string | null {
  try { return readSeal(path); } catch { return null; }
}


/**
 * Reads blobs with each store directory (blobs/, secrets/) opened once and held: 10,000
 * blobs at a checking load, one per revert in the guard. A read that fails through a held
 * descriptor walks to the directory again once (it may have been replaced and repaired
 * since), so a held descriptor never hides the store's current content.
 */
class BlobReader {
  private readonly fds = new Map<string, number | null>();
  constructor(private readonly storeFd: StoreFd) {}
  private dirFd(dir: string): number | null {
    let fd = this.fds.get(dir);
    if (fd === undefined) {
      // Held, not closed after the call: tryOpenDir leaves nothing open on failure.
      const w = tryOpenDir(this.storeFd, dir); fd = w.ok ? w.fd : null;
      this.fds.set(dir, fd);
    }
    return fd;
  }
  /** The blob's bytes when they hash to their name; null when missing or altered. */
  read(kind: FileKind, sha: string): Buffer | null {
    const dir = blobDir(kind);
    const once = (): Buffer | null => {
      const fd = this.dirFd(dir);
      if (fd === null) return null;
      try {
        // The store is warden's own: no lstat first; O_NOFOLLOW|O_NONBLOCK and fstat still
        // refuse a link, and make a planted FIFO or device fail instead of blocking.
        const b = readRegularAt(fd, sha, BLOB_READ_LIMIT)?.bytes ?? null;
        return b && sha256Hex(b) === sha ? b : null;
      } catch { return null; }
    };
    const b = once();
    if (b) return b;
    this.forget(dir);
    return once();
  }
  private forget(dir: string): void {
    const fd = this.fds.get(dir);
    if (fd !== undefined && fd !== null) safeClose(fd);
    this.fds.delete(dir);
  }
  close(): void { for (const fd of this.fds.values()) if (fd !== null) safeClose(fd); this.fds.clear(); }
}

export interface LoadOptions {
  /** Read every blob once and fail closed when one is missing or altered (nothing is kept in memory). */
  blobs: boolean;
  /** Write the seal when it is missing or names two pairs (the lock holder only). */
  settle?: boolean;
}

export class BaselineState {
  /** sha256 of the index bytes as held: what the index on disk must still be. */
  private indexSha: string;
  /** Blob directories held open (holdBlobDirs): the revert path reads a blob with one open. */
  private held: { storeFd: StoreFd; reader: BlobReader } | null = null;

  private constructor(
    public index: BaselineIndex,
    indexBytes: Buffer,
    private readonly key: Buffer,
    /** Where the seal lives (beside the key); null = not checked (tests of pure parts). */
    private readonly seal: string | null,
  ) {
    this.indexSha = sha256Hex(indexBytes);
    // The files table has no prototype (dict), so a lookup is one probe (entry()); an index
    // parsed from the JSON form, or built by a caller, is copied into one once.
    if (Object.getPrototypeOf(index.files) !== null) this.index = { ...index, files: dict(index.files) };
  }

  private sealNow(): string { return `${this.index.generation} ${this.indexSha}`; }

  private writeSealNow(): void {
    if (this.seal) writeSeal(this.seal, this.sealNow());
  }

  /** Are these the index bytes held (the index on disk was not edited)? */
  sameIndex(raw: Buffer): boolean {
    return sha256Hex(raw) === this.indexSha;
  }

  /**
   * Authenticate the index (and with `blobs`, check every blob). Fails closed: a tampered
   * store is never adopted. `settle`: only the one writer (the daemon, or a command under
   * the lock) may bring the seal up to date; a reader racing a commit would put back a
   * stale pair.
   */
  static load(storeFd: StoreFd, key: Buffer, opts: LoadOptions = { blobs: true }, seal: string | null = null): BaselineState {
    const r = readIndex(storeFd, key);
    const sealed = seal ? readSeal(seal) : null;
    if (!r.ok) {
      if (r.problem === 'missing' && sealed) throw new WardenError(`baseline-tampered: baseline/index was removed (a baseline was sealed for this root); warden will not start from nothing. ${RECOVER}`);
      if (r.problem === 'missing') throw new WardenError("no baseline yet: run 'warden init' first");
      throw new WardenError(`baseline-tampered: baseline/index cannot be trusted (${r.detail}); warden will not adopt it. ${RECOVER}`);
    }
    const mine = sealPair(r.index.generation, r.raw);
    const parts = sealed?.split(' ') ?? [];
    const current = parts.slice(0, 2).join(' ');
    const previous = parts.slice(2, 4).join(' ');
    if (sealed && mine !== current && mine !== previous) {
      throw new WardenError(`baseline-tampered: baseline/index is authentic but not the latest approved one (generation ${r.index.generation}, the seal names ${current.split(' ')[0] ?? '?'}; rolled back, or written by a second writer?); warden will not adopt it. ${RECOVER}`);
    }
    if (opts.blobs) {
      // Commands that change the baseline check every blob first; the guard does not (it
      // checks each blob when it reads it, and the store check re-hashes them after start).
      const reader = new BlobReader(storeFd);
      const seen = new Set<string>();
      try {
        for (const [path, e] of Object.entries(r.index.files)) {
          if (seen.has(e.sha256)) continue;
          seen.add(e.sha256);
          if (!reader.read(e.kind, e.sha256)) throw new WardenError(`baseline-tampered: the approved content of ${path} is missing from the store or altered; warden will not adopt it. ${RECOVER}`);
        }
      } finally {
        reader.close();
      }
    }
    const state = new BaselineState(r.index, r.raw, key, seal);
    // No seal yet (first start with one): adopt the authenticated index. A commit that
    // crashed before its index rename: the previous index stands; settle the seal on it.
    if (seal && opts.settle && (!sealed || mine !== current || previous !== '')) state.writeSealNow();
    // An index in the JSON form of before the compact index is read as it is; the one writer puts it
    // in the compact form (the same entries; the seal follows as in any rewrite).
    if (r.legacy && opts.settle) state.rewriteIndex(storeFd);
    return state;
  }

  /** A state just written (init). `_blobs` is ignored (kept for callers): approved bytes live in the store only. */
  static fresh(index: BaselineIndex, indexBytes: Buffer, _blobs: unknown, key: Buffer, seal: string | null = null): BaselineState {
    const s = new BaselineState(index, indexBytes, key, seal);
    s.writeSealNow();
    return s;
  }

  entry(path: string): FileEntry | undefined {
    return this.index.files[path];
  }

  /** Every approved file with its entry, in the index's order (no lookup per file). */
  entries(): [string, FileEntry][] {
    return Object.entries(this.index.files);
  }

  paths(): string[] {
    return Object.keys(this.index.files);
  }

  /** Keep the store's blob directories open for the life of the process (the guard): one open per blob read. */
  holdBlobDirs(storeFd: StoreFd): this {
    this.held?.reader.close();
    this.held = { storeFd, reader: new BlobReader(storeFd) };
    return this;
  }

  /** Close what holdBlobDirs holds. */
  releaseBlobDirs(): void {
    this.held?.reader.close();
    this.held = null;
  }

  /** The approved bytes of a path, read from the store: null when the blob is missing or does not hash to the approved sha256. */
  bytesOf(storeFd: StoreFd, path: string): Buffer | null {
    const e = this.entry(path);
    if (!e) return null;
    if (this.held && this.held.storeFd === storeFd) return this.held.reader.read(e.kind, e.sha256);
    const reader = new BlobReader(storeFd);
    try { return reader.read(e.kind, e.sha256); } finally { reader.close(); }
  }

  /** The root whose runtime manifest every commit publishes (docs/CONTRACT.md §Runtime view); null: none (tests, readers). */
  private publishRoot: number | null = null;

  /** Publish the runtime manifest of the root behind rootFd after every commit. */
  publishFor(rootFd: number): this {
    this.publishRoot = rootFd;
    return this;
  }

  /** Record accepted changes: blobs first, then the authenticated index in one rename. */
  commit(storeFd: StoreFd, changes: BaselineChange[]): void {
    const files = dict(this.index.files);
    for (const c of changes) {
      if (c.bytes === null) { delete files[c.path]; continue; }
      const sha = writeBlob(storeFd, c.kind, c.bytes);
      files[c.path] = { kind: c.kind, sha256: sha, size: c.bytes.length, mode: c.mode & 0o7777, uid: c.uid, gid: c.gid, ...(c.xattrs && Object.keys(c.xattrs).length ? { xattrs: c.xattrs } : {}) };
    }
    const next: BaselineIndex = { ...this.index, generation: this.index.generation + 1, updated: new Date().toISOString(), files };
    const bytes = serializeIndex(next, this.key);
    if (this.seal) writeSeal(this.seal, `${sealPair(next.generation, bytes)} ${this.sealNow()}`);
    writeIndexBytes(storeFd, bytes);
    this.index = next;
    this.indexSha = sha256Hex(bytes);
    this.writeSealNow();
    // The one commit point of every accepted change: tell the runtime's view (docs/CONTRACT.md §Runtime view).
    if (this.publishRoot !== null) publishManifest(this.publishRoot, this.index);
  }

  /**
   * Rewrite the index exactly as held (after a tamper, e.g. a second writer's commit). The
   * seal follows it: while the index is put back the seal names both, so a crash in between
   * leaves a pair the next start accepts, never a seal that names neither.
   */
  rewriteIndex(storeFd: StoreFd): void {
    const bytes = serializeIndex(this.index, this.key);
    const mine = sealPair(this.index.generation, bytes);
    if (this.seal) {
      const onDisk = safeReadSeal(this.seal)?.split(' ').slice(0, 2).join(' ') ?? '';
      writeSeal(this.seal, onDisk && onDisk !== mine ? `${mine} ${onDisk}` : mine);
    }
    writeIndexBytes(storeFd, bytes);
    this.indexSha = sha256Hex(bytes);
    this.writeSealNow();
  }

  /**
   * Put the seal back on the index held, when another writer moved it (it lives outside the
   * watched store, so this is checked with the store). Returns what was wrong, or null.
   */
  checkSeal(): string | null {
    if (!this.seal) return null;
    const onDisk = safeReadSeal(this.seal);
    if (onDisk === this.sealNow()) return null;
    this.writeSealNow();
    return onDisk === null ? 'the baseline seal was removed' : 'the baseline seal names another index';
  }

  /**
   * Put an approved blob back in the store (after a tamper) from bytes found elsewhere (the
   * live file): written only when they hash to the approved sha256 of `path`.
   */
  rewriteBlob(storeFd: StoreFd, path: string, bytes: Uint8Array | null): boolean {
    const e = this.entry(path);
    if (!e || !bytes || sha256Hex(bytes) !== e.sha256) return false;
    writeBlob(storeFd, e.kind, bytes, e.sha256);
    return true;
  }

  setDirs(dirs: BaselineIndex['dirs']): void {
    this.index = { ...this.index, dirs };
  }
}
