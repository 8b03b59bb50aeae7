/**
 * The store under watch: compare snapshots/ with the authenticated baseline the guard holds,
 * and put back whatever was edited outside warden (SPEC §3: never adopt the tampered one).
 */
import { errnoCode } from '../common/errors.js';
import { lstatAt, readSmallAt, safeClose, walkDir } from '../fsx/beneath.js';
import { blobDir, sha256Hex } from '../store/baseline.js';
import { BASELINE_DIR, INDEX_NAME } from '../store/layout.js';
import type { BaselineState } from '../store/baseline-state.js';
import { DirCache } from './inspect.js';
import { statStamp } from './observe.js';

export const INDEX_PATH = `${BASELINE_DIR}/${INDEX_NAME}`;

export class StoreCheck {
  /** Stat stamps of store blobs last verified by hash. */
  private readonly blobStamps = new Map<string, string>();

  constructor(
    private readonly rootFd: number,
    private readonly state: BaselineState,
    private readonly tamper: (detail: string, path: string) => void,
    private readonly log: (line: string) => void,
  ) {}

  /**
   * Index and blobs. On a hint, that one blob; on a rescan, only blobs whose stat stamp
   * changed since they were last hashed; allBlobs re-hashes everything.
   */
  verify(allBlobs: boolean, hint?: string): void {
    this.verifyIndex();
    const dirs = new DirCache(this.rootFd);
    const seen = new Set<string>();
    try {
      for (const path of this.state.paths()) {
        const e = this.state.entry(path);
        if (!e || seen.has(e.sha256)) continue;
        seen.add(e.sha256);
        if (!allBlobs && hint && hint !== e.sha256) continue;
        const fd = dirs.get(blobDir(e.kind));
        let ok = false;
        if (fd !== null) {
          try {
            const st = lstatAt(fd, e.sha256);
            const stamp = st ? statStamp(st) : null;
            if (!allBlobs && !hint && stamp && this.blobStamps.get(e.sha256) === stamp) continue;
            const b = readSmallAt(fd, e.sha256);
            ok = b !== null && sha256Hex(b) === e.sha256;
            if (ok && stamp) this.blobStamps.set(e.sha256, stamp);
          } catch { ok = false; }
        }
        if (!ok) {
          this.blobStamps.delete(e.sha256);
          this.tamper(`the stored approved content of ${path} was altered or removed; written back from memory`, `${blobDir(e.kind)}/${e.sha256}`);
          try { if (!this.state.rewriteBlob(this.rootFd, path)) this.log(`<2>warden: approved content of ${path} is not in memory; cannot repair the store`); }
          catch (err) { this.log(`<2>warden: cannot rewrite blob: ${errnoCode(err) ?? err}`); }
        }
      }
    } finally {
      dirs.close();
    }
  }

  private verifyIndex(): void {
    const w = walkDir(this.rootFd, BASELINE_DIR);
    let raw: Buffer | null = null;
    let problem: string | null = null;
    if (!w.ok) { safeClose(w.parentFd); problem = `${BASELINE_DIR} is missing or not a directory`; }
    else {
      try { raw = readSmallAt(w.fd, INDEX_NAME); if (!raw) problem = 'index deleted'; } catch (err) { problem = `index unreadable (${errnoCode(err)})`; }
      finally { safeClose(w.fd); }
    }
    if (!problem && raw && !raw.equals(this.state.indexBytes)) problem = 'index content differs from the authenticated baseline';
    if (!problem) {
      // A second writer also moves the seal (outside the store): keep it on the index held, or the next start refuses.
      let seal: string | null = null;
      try { seal = this.state.checkSeal(); } catch (err) { this.log(`<2>warden: cannot rewrite the baseline seal: ${errnoCode(err) ?? err}`); }
      if (seal) this.tamper(`${seal}; sealed the baseline held in memory again`, INDEX_PATH);
      return;
    }
    this.tamper(`${problem}; the baseline held in memory was written back`, INDEX_PATH);
    try { this.state.rewriteIndex(this.rootFd); } catch (err) { this.log(`<2>warden: cannot rewrite the baseline index: ${errnoCode(err) ?? err}`); }
  }

  /** A watcher hint inside snapshots/. */
  onEvent(rel: string): void {
    if (rel === INDEX_PATH || rel === BASELINE_DIR) { this.verify(false, '-'); return; }
    const m = /^snapshots\/(blobs|secrets)\/([0-9a-f]{64})$/.exec(rel);
    if (m) { this.verify(false, m[2]); return; }
    if (/^snapshots(\/(blobs|secrets))?$/.test(rel)) this.verify(true);
  }
}
