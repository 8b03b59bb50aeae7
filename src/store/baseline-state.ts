/**
 * The baseline held in memory. Loaded once and authenticated; afterwards the guard trusts
 * only this copy, so a later edit of snapshots/ can be detected and undone, never adopted.
 */
import { WardenError } from '../common/errors.js';
import {
  blobDir, readBlob, readIndex, serializeIndex, sha256Hex, writeBlob, writeIndexBytes,
  type BaselineIndex, type FileEntry,
} from './baseline.js';
import { readRegularAt, safeClose, walkDir } from '../fsx/beneath.js';
import { readSeal, writeSeal } from './keys.js';
import type { FileKind } from '../config/protected-set.js';
import { publishManifest } from './manifest.js';
import type { StoreFd } from './store.js';

/** Keep approved bytes in memory up to this much; beyond it they are read (and checked) on demand. */
/** What the owner must do when the store does not authenticate (said once, the same everywhere). */
export const RECOVER = "warden does not guard this root until its state is approved again: run 'warden init --force' on a terminal; it shows what differs from the last approved state (snapshots/history) and asks before adopting anything.";

const MEMORY_BUDGET = 48 * 1024 * 1024;

export interface BaselineChange {
  path: string;
  kind: FileKind;
  /** New approved content, or null to drop the path from the baseline. */
  bytes: Buffer | null;
  mode: number;
  uid: number;
  gid: number;
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

/** How a start that cannot trust the store points the owner at the recovery (SPEC §8: init --force shows the difference first). */
export const RECOVERY = 'run `warden init --force` to review the difference and approve it';

/** Reads blobs with each store directory opened once (10,000 blobs at start). */
class BlobReader {
  private readonly fds = new Map<string, number | null>();
  constructor(private readonly storeFd: StoreFd) {}
  read(kind: FileKind, sha: string): Buffer | null {
    const dir = blobDir(kind);
    let fd = this.fds.get(dir);
    if (fd === undefined) {
      const w = walkDir(this.storeFd, dir);
      if (w.ok) fd = w.fd; else { safeClose(w.parentFd); fd = null; }
      this.fds.set(dir, fd);
    }
    if (fd === null) return null;
    try {
      // The store is warden's own: no lstat first; O_NOFOLLOW|O_NONBLOCK and fstat still
      // refuse a link, and make a planted FIFO or device fail instead of blocking.
      const r = readRegularAt(fd, sha, 64 * 1024 * 1024);
      const b = r?.bytes ?? null;
      return b && sha256Hex(b) === sha ? b : null;
    } catch { return null; }
  }
  close(): void { for (const fd of this.fds.values()) if (fd !== null) safeClose(fd); }
}

export interface LoadOptions {
  blobs: boolean;
  /** Write the seal when it is missing or names two pairs (the lock holder only). */
  settle?: boolean;
}

export class BaselineState {
  private constructor(
    public index: BaselineIndex,
    public indexBytes: Buffer,
    private readonly blobs: Map<string, Buffer>,
    private readonly key: Buffer,
    /** Where the seal lives (beside the key); null = not checked (tests of pure parts). */
    private readonly seal: string | null,
  ) {}

  private writeSealNow(): void {
    if (this.seal) writeSeal(this.seal, sealPair(this.index.generation, this.indexBytes));
  }

  /**
   * Authenticate the index and load the blobs. Fails closed: a tampered store is never adopted.
   * `settle`: only the one writer (the daemon, or a command under the lock) may bring the
   * seal up to date; a reader racing a commit would put back a stale pair.
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
    const blobs = new Map<string, Buffer>();
    let used = 0;
    const blobReader = new BlobReader(storeFd);
    try {
    // Read-only commands (verify, status) compare hashes only and skip the blobs.
    for (const [path, e] of opts.blobs ? Object.entries(r.index.files) : []) {
      if (blobs.has(e.sha256)) continue;
      const b = blobReader.read(e.kind, e.sha256);
      if (!b) throw new WardenError(`baseline-tampered: the approved content of ${path} is missing from the store or altered; warden will not adopt it. ${RECOVER}`);
      if (used + b.length <= MEMORY_BUDGET) { blobs.set(e.sha256, b); used += b.length; }
    }
    } finally {
      blobReader.close();
    }
    const state = new BaselineState(r.index, r.raw, blobs, key, seal);
    // No seal yet (first start with one): adopt the authenticated index. A commit that
    // crashed before its index rename: the previous index stands; settle the seal on it.
    if (seal && opts.settle && (!sealed || mine !== current || previous !== '')) state.writeSealNow();
    return state;
  }

  static fresh(index: BaselineIndex, indexBytes: Buffer, blobs: Map<string, Buffer>, key: Buffer, seal: string | null = null): BaselineState {
    const s = new BaselineState(index, indexBytes, blobs, key, seal);
    s.writeSealNow();
    return s;
  }

  entry(path: string): FileEntry | undefined {
    return Object.hasOwn(this.index.files, path) ? this.index.files[path] : undefined;
  }

  paths(): string[] {
    return Object.keys(this.index.files);
  }

  /** The approved bytes of a path: from memory, else from the store with its hash checked. */
  bytesOf(storeFd: StoreFd, path: string): Buffer | null {
    const e = this.entry(path);
    if (!e) return null;
    return this.blobs.get(e.sha256) ?? readBlob(storeFd, e.kind, e.sha256);
  }

  blobInMemory(sha: string): Buffer | undefined {
    return this.blobs.get(sha);
  }

  /** The root whose runtime manifest every commit publishes (SPEC §9.3); null: none (tests, readers). */
  private publishRoot: number | null = null;

  /** Publish the runtime manifest of the root behind rootFd after every commit. */
  publishFor(rootFd: number): this {
    this.publishRoot = rootFd;
    return this;
  }

  /** Record accepted changes: blobs first, then the authenticated index in one rename. */
  commit(storeFd: StoreFd, changes: BaselineChange[]): void {
    const files = { ...this.index.files };
    for (const c of changes) {
      if (c.bytes === null) { delete files[c.path]; continue; }
      const sha = writeBlob(storeFd, c.kind, c.bytes);
      files[c.path] = { kind: c.kind, sha256: sha, size: c.bytes.length, mode: c.mode & 0o7777, uid: c.uid, gid: c.gid };
      this.blobs.set(sha, c.bytes);
    }
    const next: BaselineIndex = { ...this.index, generation: this.index.generation + 1, updated: new Date().toISOString(), files };
    const bytes = serializeIndex(next, this.key);
    if (this.seal) writeSeal(this.seal, `${sealPair(next.generation, bytes)} ${sealPair(this.index.generation, this.indexBytes)}`);
    this.indexBytes = writeIndexBytes(storeFd, bytes);
    this.index = next;
    this.writeSealNow();
    // The one commit point of every accepted change: tell the runtime's view (SPEC §9.3).
    if (this.publishRoot !== null) publishManifest(this.publishRoot, this.index);
    const live = new Set(Object.values(files).map((f) => f.sha256));
    for (const sha of this.blobs.keys()) if (!live.has(sha)) this.blobs.delete(sha);
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
    this.indexBytes = writeIndexBytes(storeFd, bytes);
    this.writeSealNow();
  }

  /**
   * Put the seal back on the index held, when another writer moved it (it lives outside the
   * watched store, so this is checked with the store). Returns what was wrong, or null.
   */
  checkSeal(): string | null {
    if (!this.seal) return null;
    const mine = sealPair(this.index.generation, this.indexBytes);
    const onDisk = safeReadSeal(this.seal);
    if (onDisk === mine) return null;
    this.writeSealNow();
    return onDisk === null ? 'the baseline seal was removed' : 'the baseline seal names another index';
  }

  /** Put an approved blob back in the store (after a tamper). */
  rewriteBlob(storeFd: StoreFd, path: string): boolean {
    const e = this.entry(path);
    const b = e && this.blobs.get(e.sha256);
    if (!e || !b || sha256Hex(b) !== e.sha256) return false;
    writeBlob(storeFd, e.kind, b, e.sha256);
    return true;
  }

  setDirs(dirs: BaselineIndex['dirs']): void {
    this.index = { ...this.index, dirs };
  }
}
