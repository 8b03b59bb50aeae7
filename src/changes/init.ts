/** `warden init`: record the first baseline of every protected file (docs/CONTRACT.md §Baseline). */
import { hasRawBytes, nameFromBytes } from '../common/names.js';
import { escapeText } from '../common/escape.js';
import { dict } from '../common/dict.js';
import { readdirSync } from 'node:fs';
import { WardenError, errnoCode } from '../common/errors.js';
import { loadWardenConfigFromDisk } from '../store/approved-config.js';
import { at, lstatAt, openRoot, readRegularAt, safeClose, typeOf, withDir } from '../fsx/beneath.js';
import { BaselineState } from '../store/baseline-state.js';
import { baseOf, dirOf } from '../guard/inspect.js';
import { statStamp } from '../guard/observe.js';
import { blobStampsPath, readBlobStamps, storeIdentity, writeBlobStamps } from '../store/blob-stamps.js';
import { protectedSet, type ProtectedSet } from '../config/protected-set.js';
import { readIndex, sha256Hex, writeBlobsInTurns, writeIndex, type BaselineIndex, type BlobWrite } from '../store/baseline.js';
import { commitHistory, initHistory } from '../store/history.js';
import { historyMirror } from '../grants/redact.js';
import { rootProfileFor } from '../profiles/root-profile.js';
import { readSeal, sealPath } from '../store/keys.js';
import { publishManifest } from '../store/manifest.js';
import { loadKeyOrExplainMove, recordKeyOwner } from '../store/rehome.js';
import { NotInitialised, Store } from '../store/store.js';
import { withDirsOnTheWay } from '../guard/dirs-on-the-way.js';
import { MAX_DEPTH, withinDepth } from '../guard/inspect.js';
import { approvedDirXattrsAt, approvedXattrsAt, type XattrSet } from '../fsx/xattrs.js';
import type { ProfileRootRecord } from '../config/profile-root.js';
import { settingsFor } from '../store/root-settings.js';
import { configFromBytes } from '../config/warden-config.js';

/** Exact protected paths plus whatever the globs match on disk now. */
export function candidatePathsFor(rootFd: number, pset: ProtectedSet): string[] {
  const set = new Set<string>(pset.exactPaths);
  const walk = (dir: string, depth: number) => {
    const names = withDir(rootFd, dir, (fd) => readdirSync(at(fd, '.'), { withFileTypes: true, encoding: 'buffer' }).map((e) => ({ name: nameFromBytes(e.name), dir: e.isDirectory() })), () => []);
    for (const n of names) {
      const rel = dir === '' ? n.name : `${dir}/${n.name}`;
      if (pset.kindOf(rel)) set.add(rel);
      if (n.dir && depth > 1 && withinDepth(rel)) walk(rel, depth - 1);
    }
  };
  for (const base of pset.listedDirs) walk(base, pset.patterns.some((p) => p.base === base && p.deep) ? MAX_DEPTH : 1); // the guard's own bounds (guard/inspect.ts)
  return [...set].sort();
}

export interface InitResult { files: number; dirs: number; storeDir: string; state: BaselineState }

export interface DiskFile { path: string; bytes: Buffer; mode: number; uid: number; gid: number; xattrs?: XattrSet }

/** Every protected file and directory as it is on disk now; refuses (changing nothing) anything that is not a regular file. */
/** Progress of long work: a phase, and for counted phases how far it is. */
export type Progress = (phase: 'reading' | 'writing' | 'history', done?: number, total?: number) => void;

export function scanDisk(rootFd: number, pset: ProtectedSet, maxBytes: number, progress?: Progress): { files: DiskFile[]; dirs: BaselineIndex['dirs'] } {
  const files: DiskFile[] = [];
  const dirs: BaselineIndex['dirs'] = dict();
  for (const d of pset.dirs) {
    withDir(rootFd, dirOf(d), (fd) => {
      const st = lstatAt(fd, baseOf(d));
      if (!st) return;
      if (!st.isDirectory()) throw new WardenError(`${d} must be a directory, found a ${typeOf(st)}; only real directories and regular files can be baselined`);
      dirs[d] = { mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, ...approvedDirXattrsAt(fd, baseOf(d) || '.') };
    }, () => undefined);
  }
  // Each directory is opened once (10,000 files in one directory: one walk, not 10,000).
  const byDir = new Map<string, string[]>();
  const candidates = candidatePathsFor(rootFd, pset);
  // Names are bytes (docs/CONTRACT.md §Detection): a name that is not UTF-8 is an unexpected file, never approved
  // (no two readers agree on what it says); init names each one and records nothing.
  const raw = candidates.filter(hasRawBytes);
  if (raw.length) {
    throw new WardenError(`${raw.slice(0, 20).map(escapeText).join(', ')}${raw.length > 20 ? ` (and ${raw.length - 20} more)` : ''}: `
      + `${raw.length === 1 ? 'the name is' : 'these names are'} not valid UTF-8 (shown escaped, \\xNN per byte); warden never approves such a name. `
      + 'Rename or remove it, then run init again; nothing was recorded');
  }
  let read = 0;
  for (const path of candidates) {
    const list = byDir.get(dirOf(path));
    if (list) list.push(path); else byDir.set(dirOf(path), [path]);
  }
  for (const [dir, paths] of byDir) {
    withDir(rootFd, dir, (fd) => {
      for (const path of paths) {
        const st = lstatAt(fd, baseOf(path));
        if (!st) continue;
        if (!st.isFile()) throw new WardenError(`${escapeText(path)} is a ${typeOf(st)}, not a regular file; only regular files can be baselined`);
        if (st.size > maxBytes) throw new WardenError(`${escapeText(path)} is ${st.size} bytes, over max_bytes (${maxBytes})`);
        const r = readRegularAt(fd, baseOf(path), maxBytes);
        if (!r?.bytes) throw new WardenError(`${escapeText(path)} changed while it was being read; run init again`);
        files.push({ path, bytes: r.bytes, mode: r.stats.mode & 0o7777, uid: r.stats.uid, gid: r.stats.gid, ...approvedXattrsAt(fd, baseOf(path)) });
        if (progress && ++read % 500 === 0) progress('reading', read, candidates.length);
      }
    }, () => undefined);
  }
  // In path order, as the candidates were (the index and the history list them so).
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  // The directories on the way to a file below a `**` glob's base are approved too.
  return { files, dirs: withDirsOnTheWay(rootFd, files.map((f) => f.path), dirs, pset) };
}

/**
 * Write a whole new baseline from scanned files: blobs, history, then the index (the
 * commit point) and its seal. `generation` continues past a sealed one on recovery, and
 * `history` says how the history records it (the first init, or a recovery commit).
 */
export async function writeBaseline(root: string, rootFd: number, store: Store, key: Buffer, pset: ProtectedSet, scan: { files: DiskFile[]; dirs: BaselineIndex['dirs'] }, generation: number,
  history: { kind: 'init' } | { kind: 'commit'; command: string; user: string }, progress?: Progress, profile?: ProfileRootRecord): Promise<InitResult> {
  progress?.('writing', 0, scan.files.length);
  const index: BaselineIndex = { version: 1, generation, updated: new Date().toISOString(), files: dict(), dirs: scan.dirs, ...(profile ? { profile } : {}) };
  const blobs = new Map<string, Buffer>();
  const writes: BlobWrite[] = [];
  for (const f of scan.files) {
    const kind = pset.kindOf(f.path);
    if (!kind) continue;
    const sha = sha256Hex(f.bytes);
    writes.push({ kind, bytes: f.bytes, sha });
    blobs.set(sha, f.bytes);
    index.files[f.path] = { kind, sha256: sha, size: f.bytes.length, mode: f.mode, uid: f.uid, gid: f.gid, ...(f.xattrs && Object.keys(f.xattrs).length ? { xattrs: f.xattrs } : {}) };
  }
  // A file whose credentials the runtime rewrites is kept in history with their values as fingerprints (grants/redact.ts).
  const rp = profile ? rootProfileFor(root, profile) : null;
  const hist = scan.files.map((f) => { const mirror = historyMirror(rp, f.path, f.bytes); return { path: f.path, kind: pset.kindOf(f.path) ?? 'text' as const, bytes: f.bytes, ...(mirror ? { mirror } : {}) }; });
  // History (git, a child process) runs while the blobs are written: two cores, not one.
  const recorded = history.kind === 'init' ? initHistory(store, hist) : commitHistory(store, hist, history.command, history.user, true).then(() => undefined, (err: unknown) => {
    process.stderr.write(`<3>warden: the new baseline is written, but recording it in snapshots/history failed: ${String((err as Error)?.message ?? err).split('\n')[0]}\n`);
  });
  recorded.catch(() => undefined); // observed below; never an unhandled rejection meanwhile
  // Every blob durable (one sync for all of them, not an fsync each) before the index below can name it.
  // The stamp of each blob created here (its bytes are the ones just hashed for its name): the
  // guard's first rescan then skips reading them back, as after any start with stamps kept.
  const stamps = new Map<string, string>();
  try { await writeBlobsInTurns(store.fd, writes, (sha, st) => stamps.set(sha, statStamp(st))); } catch (err) { await recorded.catch(() => undefined); throw err; }
  progress?.('history');
  await recorded;
  // The index is the commit point: written last, so a failure before it leaves no new baseline.
  store.recordRoot(rootFd);
  recordKeyOwner(root, rootFd);
  const indexBytes = writeIndex(store.fd, index, key);
  publishManifest(rootFd, index);
  keepInitStamps(root, store, key, stamps);
  return { files: scan.files.length, dirs: Object.keys(scan.dirs).length, storeDir: store.dir, state: BaselineState.fresh(index, indexBytes, blobs, key, sealPath(root)) };
}

/**
 * Add the stamps of the blobs just created to the guard's blob stamps (store/blob-stamps.ts:
 * authenticated with the key, bound to this store directory; stamps already there are kept).
 * Only a cache of what was hashed: when it cannot be written, the guard's first rescan hashes
 * those blobs, as it did before init kept them.
 */
function keepInitStamps(root: string, store: Store, key: Buffer, created: ReadonlyMap<string, string>): void {
  if (created.size === 0) return;
  const file = { path: blobStampsPath(root), key };
  try {
    const id = storeIdentity(store.fd);
    const all = readBlobStamps(file, id) ?? new Map<string, string>();
    for (const [sha, stamp] of created) all.set(sha, stamp);
    writeBlobStamps(file, id, all);
  } catch (err) {
    process.stderr.write(`warden: note: could not keep the blob stamps (${errnoCode(err) ?? String(err)}); the guard's first rescan reads every blob once\n`);
  }
}

/** The first baseline of a root (`warden init`). A root with a baseline is re-baselined as a sanctioned change instead (`init --force`). */
export async function initRoot(root: string, opts: { force: boolean; progress?: Progress }): Promise<InitResult> {
  const config = loadWardenConfigFromDisk(root);
  const pset = protectedSet(config);
  const rootFd = openRoot(root);
  let store: Store | null = null;
  try {
    // Open an existing store now; create one only once everything was read (a refused
    // init leaves nothing behind).
    try { store = Store.open(root); } catch (err) { if (!(err instanceof NotInitialised)) throw err; }
    const key = loadKeyOrExplainMove(root, true);
    const existing = store ? readIndex(store.fd, key) : { ok: false as const, problem: 'missing' as const };
    if (existing.ok || existing.problem !== 'missing' || readSeal(sealPath(root)) !== null) {
      if (!opts.force) {
        // The seal outlives a deleted store on purpose (deleting the store must not reset the baseline): say which case this is.
        if (!existing.ok && existing.problem === 'missing') {
          throw new WardenError(store
            ? `${root} had a baseline (its seal is in ${sealPath(root)}), but its store in ${store.dir} holds no index (an interrupted init, or deleted): run 'warden init --force' to take what is on disk now as the new baseline`
            : `${root} had a baseline (its seal is in ${sealPath(root)}), but its store is gone: deleted or moved? Restore the store, or run 'warden init --force' to take what is on disk now as the new baseline`);
        }
        throw new WardenError(`a baseline already exists in ${store?.dir ?? root} ('warden init --force' re-baselines it as a sanctioned change: it shows what differs from the last approved state and asks)`);
      }
    }
    const scan = scanDisk(rootFd, pset, config.max_bytes, opts.progress);
    store ??= Store.open(root, { create: true });
    store.ensureLayout();
    return await writeBaseline(root, rootFd, store, key, pset, scan, 1, { kind: 'init' }, opts.progress);
  } finally {
    store?.close();
    safeClose(rootFd);
  }
}

/**
 * The first baseline of a profile's root (docs/PROFILES.md, "A profile's root"): the
 * profile's files that exist under `root` now, with the record of what is guarded kept in the
 * authenticated index and the store in the state directory (never inside a directory warden
 * does not own). A root that has a baseline already is refused: its record changes only
 * through warden's commands.
 */
export async function initProfileRoot(root: string, profile: ProfileRootRecord, opts: { progress?: Progress } = {}): Promise<InitResult> {
  const config = settingsFor(configFromBytes(null), { profile });
  const pset = protectedSet(config);
  const rootFd = openRoot(root);
  let store: Store | null = null;
  try {
    try { store = Store.open(root, { state: true }); } catch (err) { if (!(err instanceof NotInitialised)) throw err; }
    const key = loadKeyOrExplainMove(root, true);
    const existing = store ? readIndex(store.fd, key) : { ok: false as const, problem: 'missing' as const };
    if (existing.ok || existing.problem !== 'missing' || readSeal(sealPath(root)) !== null) {
      const what = existing.ok ? (existing.index.profile ? `the ${existing.index.profile.profile} profile's ${existing.index.profile.level} files` : 'a root with its own config/warden.toml') : 'a baseline';
      throw new WardenError(`${root} already has a baseline (${what}, in ${store?.dir ?? 'its store'}); warden init records a root once. Its files change through 'warden edit', 'warden apply' or 'warden accept'`);
    }
    const scan = scanDisk(rootFd, pset, config.max_bytes, opts.progress);
    if (scan.files.length === 0) throw new WardenError(`none of the ${profile.profile} profile's ${profile.level} files is in ${root} (${profile.files.map((f) => f.path).join(', ')}); nothing was recorded`);
    store ??= Store.open(root, { create: true, state: true });
    store.ensureLayout();
    return await writeBaseline(root, rootFd, store, key, pset, scan, 1, { kind: 'init' }, opts.progress, profile);
  } finally {
    store?.close();
    safeClose(rootFd);
  }
}
