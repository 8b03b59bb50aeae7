/** `warden init`: record the first baseline of every protected file (SPEC §3). */
import { readdirSync } from 'node:fs';
import { WardenError } from '../common/errors.js';
import { loadWardenConfigFromDisk } from '../config/warden-config.js';
import { at, lstatAt, openRoot, readRegularAt, safeClose, typeOf, walkDir } from '../fsx/beneath.js';
import { BaselineState } from '../guard/baseline-state.js';
import { baseOf, dirOf } from '../guard/inspect.js';
import { protectedSet, type ProtectedSet } from '../config/protected-set.js';
import { readIndex, sha256Hex, writeBlob, writeIndex, type BaselineIndex } from '../store/baseline.js';
import { ensureStoreDirs } from '../store/store-dirs.js';
import { initHistory } from '../store/history.js';
import { loadKey, sealPath } from '../store/keys.js';

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

export interface InitResult { files: number; dirs: number; state: BaselineState }

export async function initRoot(root: string, opts: { force: boolean }): Promise<InitResult> {
  const config = loadWardenConfigFromDisk(root);
  const pset = protectedSet(config);
  const rootFd = openRoot(root);
  try {
    const key = loadKey(root, true);
    const existing = readIndex(rootFd, key);
    if (existing.ok || existing.problem !== 'missing') {
      if (!opts.force) throw new WardenError(`a baseline already exists in ${root}/snapshots (use 'warden init --force' to replace it with the files as they are now)`);
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
    for (const path of candidatePathsFor(rootFd, pset)) {
      const w = walkDir(rootFd, dirOf(path));
      if (!w.ok) { safeClose(w.parentFd); continue; }
      try {
        const st = lstatAt(w.fd, baseOf(path));
        if (!st) continue;
        if (!st.isFile()) throw new WardenError(`${path} is a ${typeOf(st)}, not a regular file; only regular files can be baselined`);
        if (st.size > config.max_bytes) throw new WardenError(`${path} is ${st.size} bytes, over max_bytes (${config.max_bytes})`);
        const r = readRegularAt(w.fd, baseOf(path), config.max_bytes);
        if (!r?.bytes) throw new WardenError(`${path} changed while it was being read; run init again`);
        files.push({ path, bytes: r.bytes, mode: r.stats.mode & 0o7777, uid: r.stats.uid, gid: r.stats.gid });
      } finally { safeClose(w.fd); }
    }
    const index: BaselineIndex = { version: 1, generation: 1, updated: new Date().toISOString(), files: {}, dirs };
    const blobs = new Map<string, Buffer>();
    for (const f of files) {
      const kind = pset.kindOf(f.path);
      if (!kind) continue;
      const sha = writeBlob(rootFd, kind, f.bytes, sha256Hex(f.bytes));
      blobs.set(sha, f.bytes);
      index.files[f.path] = { kind, sha256: sha, size: f.bytes.length, mode: f.mode, uid: f.uid, gid: f.gid };
    }
    // The index is the commit point: written last, so a failure before it leaves no baseline.
    ensureStoreDirs(rootFd); // before any notifier starts: it can be denied only what exists
    await initHistory(root, rootFd, files.map((f) => ({ path: f.path, kind: pset.kindOf(f.path) ?? 'text', bytes: f.bytes })));
    const indexBytes = writeIndex(rootFd, index, key);
    return { files: files.length, dirs: Object.keys(dirs).length, state: BaselineState.fresh(index, indexBytes, blobs, key, sealPath(root)) };
  } finally {
    safeClose(rootFd);
  }
}
