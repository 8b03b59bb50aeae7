/**
 * The store under watch: compare the store with the authenticated baseline the guard holds,
 * and put back whatever was edited outside warden (docs/CONTRACT.md §Baseline: never adopt the tampered one).
 *
 * The store is held by descriptor (store.ts), so the guard keeps working on its real store
 * whatever happens to the path. Three kinds of damage are repaired here, each raising
 * `baseline-tampered`:
 * - the path no longer leads to the held directory (renamed, exchanged with renameat2
 *   RENAME_EXCHANGE, replaced by a link): in embedded mode whatever sits at ROOT/snapshots
 *   is moved into quarantine and the real store is renamed back;
 * - an entry of the layout that is not what it must be (a link or a file where a directory
 *   belongs, a directory where alerts.jsonl belongs): moved into quarantine, recreated,
 *   never followed;
 * - an edited index: written back from the one held in memory;
 * - an edited or missing blob: written back from the live file when that still hashes to
 *   the approved sha256 (approved bytes are not held in memory); else it stays flagged, and
 *   a revert that needs it fails closed (revert-failed) until the owner approves a state.
 */
import { mkdirSync, renameSync, fsyncSync } from 'node:fs';
import { errnoCode } from '../common/errors.js';
import { AT_FDCWD, at, ensureDirBeneath, lstatAt, moveAt, readRegularAt, readSmallAt, safeClose, withCwdAt, withDir } from '../fsx/beneath.js';
import { blobDir, sha256Hex } from '../store/baseline.js';
import { newAlertId } from '../store/alerts.js';
import { BASELINE_DIR, BLOBS_DIR, INDEX_NAME, LAYOUT_DIRS, LAYOUT_FILES, QUARANTINE_DIR, SECRETS_DIR } from '../store/layout.js';
import { EMBEDDED_STORE } from '../store/location.js';
import type { BaselineState } from '../store/baseline-state.js';
import type { Store } from '../store/store.js';
import { readBlobStamps, storeIdentity, writeBlobStamps, type BlobStampsFile } from '../store/blob-stamps.js';
import { DirCache, baseOf, dirOf } from './inspect.js';
import { observe, statStamp } from './observe.js';
import { BlobDirWatch, STORE_FULL_CHECK_EVERY } from './blob-watch.js';

/** Where blobs live, by kind (baseline.ts blobDir). */
const BLOB_DIRS = [BLOBS_DIR, SECRETS_DIR] as const;


export class StoreCheck {
  /** Stat stamps of store blobs last verified by hash. */
  private blobStamps = new Map<string, string>();
  /** Stamps kept across restarts (store/blob-stamps.ts): loaded at the first verify, written when they changed. */
  private stampsLoaded = false;
  private stampsDirty = false;
  private repairing = false;
  /** Which blobs a rescan must lstat (blob-watch.ts); every STORE_FULL_CHECK_EVERY-th rescan looks at all. */
  private readonly watch = new BlobDirWatch();
  /** Blobs the last rescan skipped as vouched for by the blob-directory watches (for the bench and tests). */
  lastRescanVouched = 0;

  constructor(
    private readonly store: Store,
    private readonly state: BaselineState,
    private readonly tamper: (detail: string, path: string) => void,
    private readonly log: (line: string) => void,
    /** The guard's root descriptor: the embedded store's path is repaired beneath it. */
    /** Mutable: after a root swap is put right the guard holds the directory now at the root path. */
    public rootFd: number = -1,
    private readonly stampsFile: BlobStampsFile | null = null,
  ) {}

  private storeId(): string | null {
    try { return storeIdentity(this.store.fd); } catch { return null; }
  }

  /** Adopt the authenticated stamps of the last run; anything else (absent, forged, another store) means re-hashing. */
  private loadStamps(): void {
    this.stampsLoaded = true;
    const id = this.stampsFile ? this.storeId() : null;
    if (!this.stampsFile || !id) return;
    const m = readBlobStamps(this.stampsFile, id);
    if (m) this.blobStamps = m;
    else this.stampsDirty = true;
  }

  private saveStamps(): void {
    if (!this.stampsFile || !this.stampsDirty) return;
    const id = this.storeId();
    if (!id) return;
    // Blobs no longer approved leave the file with their stamps (it would only grow otherwise).
    const approved = new Set<string>();
    for (const p of this.state.paths()) { const sha = this.state.entry(p)?.sha256; if (sha) approved.add(sha); }
    for (const sha of this.blobStamps.keys()) if (!approved.has(sha)) this.blobStamps.delete(sha);
    try { writeBlobStamps(this.stampsFile, id, this.blobStamps); this.stampsDirty = false; }
    catch (err) { this.log(`<4>warden: cannot keep the blob stamps in ${this.stampsFile.path}: ${errnoCode(err) ?? err}; the next start hashes every blob again`); }
  }

  /** The path of the index as alerts name it. */
  get indexLabel(): string { return this.store.label(`${BASELINE_DIR}/${INDEX_NAME}`); }

  /**
   * Path, layout, index and blobs. On a hint, that one blob; on a rescan, only blobs whose
   * stat stamp changed since they were last hashed; allBlobs re-hashes everything.
   * `rescan` (the backstop rescan's number): blobs the blob-directory watches vouch for are
   * not even lstat'ed, except at every STORE_FULL_CHECK_EVERY-th rescan (blob-watch.ts).
   */
  verify(allBlobs: boolean, hint?: string, rescan?: number): void {
    this.verifyPath();
    this.verifyLayout();
    this.verifyIndex();
    this.verifyBlobs(allBlobs, hint, rescan);
  }

  close(): void { this.watch.close(); }

  /** The blob part of verify. */
  private verifyBlobs(allBlobs: boolean, hint?: string, rescan?: number): void {
    if (!allBlobs && hint === '-') return; // the index only
    const planned = rescan !== undefined && !allBlobs && !hint;
    if (planned) this.lastRescanVouched = 0;
    const linked = this.watch.linked;
    if (!this.stampsLoaded) this.loadStamps();
    // Per blob directory (blobs/, secrets/), one pass over the approved paths. No Set or Map
    // per pass (a rescan would leave 10,000-entry tables behind as garbage); a blob shared by
    // identical files is looked at once per file, its read skipped by its stamp.
    const bad: string[] = [];
    const badShas = new Set<string>(); // stays empty unless something is wrong
    const dirs = new DirCache(this.store.fd);
    const paths = this.state.paths();
    try {
      for (const dir of BLOB_DIRS) {
        const check = (at: number, look: ((sha: string) => boolean) | null): void => {
          for (const path of paths) {
            const e = this.state.entry(path);
            if (!e || blobDir(e.kind) !== dir || (!allBlobs && hint && hint !== e.sha256)) continue;
            const sha = e.sha256;
            // Vouched for: hashed clean at its stamp, and no event on its name since the last look.
            if (look && !look(sha) && this.blobStamps.has(sha)) { this.lastRescanVouched++; continue; }
            let ok = false;
            if (at !== -1) {
              try {
                const st = lstatAt(at, sha);
                if (st && st.nlink > 1) linked.add(sha); else if (linked.size) linked.delete(sha);
                const stamp = st ? statStamp(st) : null;
                if (!allBlobs && !hint && stamp && this.blobStamps.get(sha) === stamp) continue;
                // lstat above is the truth (never a FIFO opened); one open + read, no second lstat.
                const b = st?.isFile() ? readRegularAt(at, sha, Math.max(e.size, 1))?.bytes ?? null : null;
                ok = b !== null && sha256Hex(b) === sha;
                if (ok && stamp && this.blobStamps.get(sha) !== stamp) { this.blobStamps.set(sha, stamp); this.stampsDirty = true; }
              } catch { ok = false; }
            }
            if (!ok) { if (this.blobStamps.delete(sha)) this.stampsDirty = true; if (!badShas.has(sha)) { badShas.add(sha); bad.push(path); } }
          }
        };
        const fd = dirs.get(dir);
        if (fd === null) { check(-1, null); continue; }
        const look = planned ? this.watch.plan(dir, fd, (rescan as number) % STORE_FULL_CHECK_EVERY === 0) : null;
        // From inside the directory when there are many (a plain name per lstat/open), else through the descriptor.
        if (hint || !withCwdAt(fd, () => check(AT_FDCWD, look))) check(fd, look);
      }
    } finally {
      dirs.close();
    }
    this.saveStamps();
    if (bad.length) {
      // Every path per approved sha256, built once (rm -rf blobs/ loses thousands at once).
      const bySha = new Map<string, string[]>();
      for (const p of this.state.paths()) {
        const sha = this.state.entry(p)?.sha256;
        if (sha) { const l = bySha.get(sha); if (l) l.push(p); else bySha.set(sha, [p]); }
      }
      for (const path of bad) this.repairBlob(path, bySha.get(this.state.entry(path)?.sha256 ?? '') ?? [path]);
    }
  }

  /** A blob that is missing or altered: rebuild it from a live file that still has the approved content. */
  private repairBlob(path: string, candidates: readonly string[]): void {
    const want = this.state.entry(path);
    if (!want) return;
    const sha = want.sha256;
    const label = this.store.label(`${blobDir(want.kind)}/${sha}`);
    let from: string | null = null;
    try {
      for (const p of candidates) {
        const e = this.state.entry(p);
        if (!e || e.sha256 !== sha) continue;
        const live = this.rootFd < 0 ? null : withDir(this.rootFd, dirOf(p), (fd) => observe(fd, baseOf(p), e.size), () => null);
        if (live?.sha256 === sha && this.state.rewriteBlob(this.store.fd, p, live.bytes)) { from = p; break; }
      }
    } catch (err) { this.log(`<2>warden: cannot rewrite blob: ${errnoCode(err) ?? err}`); }
    this.tamper(from
      ? `the stored approved content of ${path} was altered or removed; written back from ${from}, which still has the approved content`
      : `the stored approved content of ${path} was altered or removed, and no live file has the approved content to rebuild it from; a revert of ${path} fails closed until a state is approved again (warden init --force)`, label);
    if (!from) this.log(`<2>warden: approved content of ${path} is gone from the store and from the root; cannot repair the store`);
  }

  /** Does the store's path still lead to the directory we hold? If not, say so and repair it. */
  verifyPath(): void {
    const problem = this.store.pathProblem();
    if (!problem) { this.pathReported = null; return; }
    let outcome = 'warden keeps working on its real store';
    if (this.store.mode === 'embedded' && this.rootFd >= 0) outcome += this.repairEmbeddedPath();
    const detail = `${problem}; ${outcome}`;
    // A path that cannot be repaired (the state directory's store, renamed by an
    // administrator) is reported once, not at every rescan.
    if (this.store.pathProblem() && detail === this.pathReported) return;
    this.pathReported = this.store.pathProblem() ? detail : null;
    this.tamper(detail, this.store.label());
  }

  private pathReported: string | null = null;

  /** Put the real store back at ROOT/snapshots; what was planted there goes to quarantine. */
  private repairEmbeddedPath(): string {
    const id = newAlertId();
    let kept = '';
    try {
      if (lstatAt(this.rootFd, EMBEDDED_STORE)) {
        const q = ensureDirBeneath(this.store.fd, `${QUARANTINE_DIR}/${id}`, 0o700);
        try { moveAt(this.rootFd, EMBEDDED_STORE, q, EMBEDDED_STORE); } finally { safeClose(q); }
        kept = `; what was at the path is kept in ${this.store.label(`${QUARANTINE_DIR}/${id}/${EMBEDDED_STORE}`)}`;
      }
      const now = this.store.currentPath();
      if (!now) return `${kept}; the real store is no longer reachable by path, so the path could not be repaired`;
      renameSync(now, at(this.rootFd, EMBEDDED_STORE));
      try { fsyncSync(this.rootFd); } catch { /* best effort */ }
      const still = this.store.pathProblem();
      return still ? `${kept}; repairing the path failed (${still}), will try again` : `${kept}; the store was moved back from ${now}`;
    } catch (err) {
      return `${kept}; repairing the path failed (${errnoCode(err) ?? String(err)}), will try again`;
    }
  }

  /**
   * Every entry of the store's own layout must be what it is: a directory, or a regular
   * file for alerts.jsonl. Anything else is moved into quarantine and recreated.
   * Returns the names repaired.
   */
  verifyLayout(only?: string): string[] {
    if (this.repairing) return [];
    this.repairing = true;
    const fixed: string[] = [];
    try {
      for (const name of only ? [only] : [...LAYOUT_DIRS, ...LAYOUT_FILES]) {
        const st = lstatAt(this.store.fd, name);
        if (!st) continue;
        const isDir = (LAYOUT_DIRS as readonly string[]).includes(name);
        if (isDir ? st.isDirectory() : st.isFile()) continue;
        const what = st.isSymbolicLink() ? 'a symbolic link' : st.isDirectory() ? 'a directory' : st.isFile() ? 'a file' : 'a special file';
        const kept = this.quarantineEntry(name, isDir);
        fixed.push(name);
        this.tamper(`${this.store.label(name)} was ${what} instead of ${isDir ? 'a directory' : 'a regular file'}; ${kept ? `moved to ${kept} and recreated` : 'it could not be moved aside'}; never followed`, this.store.label(name));
      }
    } catch (err) {
      this.log(`<2>warden: cannot check the store's layout: ${errnoCode(err) ?? String(err)}`);
    } finally {
      this.repairing = false;
    }
    return fixed;
  }

  /** Move a damaged layout entry into quarantine/<id>/ and recreate it (directories). */
  private quarantineEntry(name: string, isDir: boolean): string | null {
    const id = newAlertId();
    try {
      if (name === QUARANTINE_DIR) {
        // The quarantine itself is damaged: set it aside, make a new one, and keep the old inside it.
        const aside = `.${QUARANTINE_DIR}-damaged-${id}`;
        moveAt(this.store.fd, name, this.store.fd, aside);
        mkdirSync(at(this.store.fd, QUARANTINE_DIR), 0o700);
        const q = ensureDirBeneath(this.store.fd, `${QUARANTINE_DIR}/${id}`, 0o700);
        try { moveAt(this.store.fd, aside, q, name); } finally { safeClose(q); }
      } else {
        const q = ensureDirBeneath(this.store.fd, `${QUARANTINE_DIR}/${id}`, 0o700);
        try { moveAt(this.store.fd, name, q, name); } finally { safeClose(q); }
        if (isDir) mkdirSync(at(this.store.fd, name), 0o700);
      }
      try { fsyncSync(this.store.fd); } catch { /* best effort */ }
      return this.store.label(`${QUARANTINE_DIR}/${id}/${name}`);
    } catch (err) {
      this.log(`<2>warden: cannot move the damaged ${this.store.label(name)} aside: ${errnoCode(err) ?? String(err)}`);
      return null;
    }
  }

  private verifyIndex(): void {
    let raw: Buffer | null = null;
    let problem: string | null = withDir(this.store.fd, BASELINE_DIR, (fd) => {
      try { raw = readSmallAt(fd, INDEX_NAME); return raw ? null : 'index deleted'; } catch (err) { return `index unreadable (${errnoCode(err)})`; }
    }, () => `${this.store.label(BASELINE_DIR)} is missing or not a directory`);
    if (!problem && raw && !this.state.sameIndex(raw)) problem = 'index content differs from the authenticated baseline';
    if (!problem) {
      // A second writer also moves the seal (outside the store): keep it on the index held, or the next start refuses.
      let seal: string | null = null;
      try { seal = this.state.checkSeal(); } catch (err) { this.log(`<2>warden: cannot rewrite the baseline seal: ${errnoCode(err) ?? err}`); }
      if (seal) this.tamper(`${seal}; sealed the baseline held in memory again`, this.indexLabel);
      return;
    }
    this.tamper(`${problem}; the baseline held in memory was written back`, this.indexLabel);
    try { this.state.rewriteIndex(this.store.fd); } catch (err) { this.log(`<2>warden: cannot rewrite the baseline index: ${errnoCode(err) ?? err}`); }
  }

  /** A watcher hint inside the store (relative to the store; '' = the store's path itself). */
  onEvent(rel: string): void {
    if (rel === '') { this.verifyPath(); return; }
    if (rel === `${BASELINE_DIR}/${INDEX_NAME}` || rel === BASELINE_DIR) { this.verify(false, '-'); return; }
    const m = /^(blobs|secrets)\/([0-9a-f]{64})$/.exec(rel);
    if (m) { this.verify(false, m[2]); return; }
    if (/^(blobs|secrets)$/.test(rel)) { this.verify(true); return; }
    if ((LAYOUT_DIRS as readonly string[]).includes(rel) || (LAYOUT_FILES as readonly string[]).includes(rel)) { this.verifyPath(); this.verifyLayout(rel); }
  }
}
