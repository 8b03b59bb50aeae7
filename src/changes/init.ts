/** `warden init`: record the first baseline of every protected file (SPEC §3). */
import { readdirSync } from 'node:fs';
import { WardenError } from '../common/errors.js';
import { loadWardenConfigFromDisk } from '../store/approved-config.js';
import { at, lstatAt, openRoot, readRegularAt, safeClose, typeOf, walkDir } from '../fsx/beneath.js';
import { BaselineState } from '../store/baseline-state.js';
import { baseOf, dirOf } from '../guard/inspect.js';
import { protectedSet, type ProtectedSet } from '../config/protected-set.js';
import { readIndex, sha256Hex, writeBlobs, writeIndex, type BaselineIndex, type BlobWrite } from '../store/baseline.js';
import { initHistory } from '../store/history.js';
import { publishManifest } from '../store/manifest.js';
import { sealPath } from '../store/keys.js';
import { loadKeyOrExplainMove, recordKeyOwner } from '../store/rehome.js';
import { NotInitialised, Store } from '../store/store.js';

/** Exact protected paths plus whatever the globs match on disk now. */
export function candidatePathsFor(rootFd: number, pset: ProtectedSet): string[] {
  const set = new Set<string>(pset.exactPaths);
  const walk = (dir: string, depth: number) => {
    const w = walkDir(rootFd, dir);
    if (!w.ok) { safeClose(w.parentFd); return; }
    let names: { name: string; dir: boolean }[] = [];
    try { names = readdirSync(at(w.fd, '.'), { withFileTypes: true }).map((e) => ({ name: e.name, dir: e.isDirectory() })); }
    finally { safeClose(w.fd); }
    for (const n of names) {
      const rel = dir === '' ? n.name : `${dir}/${n.name}`;
      if (pset.kindOf(rel)) set.add(rel);
      if (n.dir && depth > 1) walk(rel, depth - 1);
    }
  };
  for (const base of pset.globDirs) walk(base, pset.patterns.some((p) => p.base === base && p.pattern.includes('**')) ? 8 : 1);
  return [...set].sort();
}

export interface InitResult { files: number; dirs: number; state: BaselineState; storeDir: string }

export async function initRoot(root: string, opts: { force: boolean }): Promise<InitResult> {
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
    if (existing.ok || existing.problem !== 'missing') {
      if (!opts.force) throw new WardenError(`a baseline already exists in ${store?.dir ?? root} (use 'warden init --force' to replace it with the files as they are now)`);
    }
    // Read everything first: refuse (changing nothing) if any protected path is not a regular file.
    const files: { path: string; bytes: Buffer; mode: number; uid: number; gid: number }[] = [];
    const dirs: BaselineIndex['dirs'] = {};
    for (const d of pset.dirs) {
      const w = walkDir(rootFd, dirOf(d));
      if (!w.ok) { safeClose(w.parentFd); continue; }
      try {
        const st = lstatAt(w.fd, baseOf(d));
        if (!st) continue;
        if (!st.isDirectory()) throw new WardenError(`${d} must be a directory, found a ${typeOf(st)}; only real directories and regular files can be baselined`);
        dirs[d] = { mode: st.mode & 0o7777, uid: st.uid, gid: st.gid };
      } finally { safeClose(w.fd); }
    }
    // Each directory is opened once (10,000 files in one directory: one walk, not 10,000).
    const dirFds = new Map<string, number | null>();
    try {
      for (const path of candidatePathsFor(rootFd, pset)) {
        const dir = dirOf(path);
        let fd = dirFds.get(dir);
        if (fd === undefined) {
          const w = walkDir(rootFd, dir);
          if (w.ok) fd = w.fd; else { safeClose(w.parentFd); fd = null; }
          dirFds.set(dir, fd);
        }
        if (fd === null) continue;
        const st = lstatAt(fd, baseOf(path));
        if (!st) continue;
        if (!st.isFile()) throw new WardenError(`${path} is a ${typeOf(st)}, not a regular file; only regular files can be baselined`);
        if (st.size > config.max_bytes) throw new WardenError(`${path} is ${st.size} bytes, over max_bytes (${config.max_bytes})`);
        const r = readRegularAt(fd, baseOf(path), config.max_bytes);
        if (!r?.bytes) throw new WardenError(`${path} changed while it was being read; run init again`);
        files.push({ path, bytes: r.bytes, mode: r.stats.mode & 0o7777, uid: r.stats.uid, gid: r.stats.gid });
      }
    } finally {
      for (const fd of dirFds.values()) if (fd !== null) safeClose(fd);
    }
    store ??= Store.open(root, { create: true });
    store.ensureLayout();
    const index: BaselineIndex = { version: 1, generation: 1, updated: new Date().toISOString(), files: {}, dirs };
    const blobs = new Map<string, Buffer>();
    const writes: BlobWrite[] = [];
    for (const f of files) {
      const kind = pset.kindOf(f.path);
      if (!kind) continue;
      const sha = sha256Hex(f.bytes);
      writes.push({ kind, bytes: f.bytes, sha });
      blobs.set(sha, f.bytes);
      index.files[f.path] = { kind, sha256: sha, size: f.bytes.length, mode: f.mode, uid: f.uid, gid: f.gid };
    }
    // Every blob durable (one sync for all of them) before the index below can name it.
    writeBlobs(store.fd, writes);
    // The index is the commit point: written last, so a failure before it leaves no baseline.
    await initHistory(store, files.map((f) => ({ path: f.path, kind: pset.kindOf(f.path) ?? 'text', bytes: f.bytes })));
    store.recordRoot(rootFd);
    recordKeyOwner(root, rootFd);
    const indexBytes = writeIndex(store.fd, index, key);
    publishManifest(rootFd, index);
    return { files: files.length, dirs: Object.keys(dirs).length, storeDir: store.dir, state: BaselineState.fresh(index, indexBytes, blobs, key, sealPath(root)) };
  } finally {
    store?.close();
    safeClose(rootFd);
  }
}
