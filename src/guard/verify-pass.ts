/**
 * `warden verify`'s pass: the findings inspectAll reports, with the least work per file.
 * Each directory is opened and listed once; the listing's entry type (d_type) stands in for
 * the lstat: an entry listed as a regular file is opened O_NOFOLLOW|O_NONBLOCK and fstat'ed
 * (the fstat of the opened inode is the truth), read into one reused buffer and hashed; any
 * other entry, or one that is not regular when opened, goes through observe() (lstat
 * first), so a FIFO or device in the listing is never opened, and one swapped in after the
 * listing cannot block us (O_NONBLOCK, then fstat says it is no file).
 *
 * Measured (10,000 files of 1 KiB, 2 cores): reaching each file through
 * /proc/self/fd/<dirfd>/<name> costs ~5 µs more per open than a name relative to the
 * current directory, a third of the per-file work. So the pass stands in each directory it
 * holds (chdir through the descriptor: the very inode it opened, as fchdir would) and opens
 * the bare name, then returns to where the process was. It is synchronous: nothing else
 * runs in this process meanwhile. Worker threads (libuv's pool or worker_threads) were
 * measured and made verify slower on this shared 2-core machine: a worker costs ~30 ms to
 * start and the reading is syscall-bound.
 */
import { nameFromBytes } from '../common/names.js';
import { constants } from 'node:fs';
import * as nodeCrypto from 'node:crypto';
import { at, safeClose, tryOpenDir, withCwdAt } from '../fsx/beneath.js';
import { DIRENT_FILE, ST_GID, ST_MODE, ST_SIZE, ST_UID, rawFs, statSlots, type RawFs } from '../fsx/raw-fs.js';
import { classify, type Observation } from './classify.js';
import { observe } from './observe.js';
import { baseOf, candidatePaths, dirOf, inspectDirs, type Finding } from './inspect.js';
import { readListed } from './verify-read.js';
import type { ProtectedSet } from '../config/protected-set.js';
import type { BaselineState } from '../store/baseline-state.js';
import { columnsOf } from '../store/baseline.js';
import { readXattrsAt, readXattrsFd, type XattrSet } from '../fsx/xattrs.js';
import { attrReasons } from './attrs.js';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;
const READ_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK;
const S_IFMT = 0o170000, S_IFREG = 0o100000;
const NON_ASCII = /[^\x00-\x7f]/;

const ABSENT_OBS: Observation = { type: 'absent', size: 0, mode: 0, uid: -1, gid: -1, ino: 0, sha256: null, bytes: null };

/**
 * A directory as listed once: each name (as warden spells it: common/names.ts) with its
 * slot, whether the listing called it a regular file, and which slots the baseline named
 * (so the glob pass finds the unexpected names without a lookup in the baseline per name).
 */
interface DirState {
  fd: number | null;
  /** null: not listable (every name goes the lstat way). */
  slots: Map<string, number> | null;
  names: string[];
  /** The bytes to open by, for a name that is not ASCII (else the name itself). */
  raw: (Buffer | null)[];
  regular: Uint8Array;
  named: Uint8Array;
}

/** Run fn standing in dirFd (fsx withCwdAt); here = false: that was not possible, use /proc paths. */
function standingIn<T>(dirFd: number, fn: (here: boolean) => T): T {
  const r = withCwdAt(dirFd, () => fn(true));
  return r ? r.value : fn(false);
}

/** A sha256 as 32 Latin-1 chars (crypto.hash where Node has it, ≥ 20.12). */
const oneShot = (nodeCrypto as { hash?: (algorithm: string, data: Uint8Array, encoding: 'binary') => string }).hash;
const digestOf: (b: Uint8Array) => string = oneShot
  ? (b) => oneShot('sha256', b, 'binary')
  : (b) => nodeCrypto.createHash('sha256').update(b).digest('binary');

let scratch: Buffer = Buffer.allocUnsafeSlow(64 * 1024);
const st = statSlots();

/**
 * Open, fstat, read and hash one entry the listing called a regular file, and say whether
 * it is clean: the same content (sha256, 32 Latin-1 chars), mode and owner. No object is
 * made per file. False: anything else, including not openable or no longer regular; the
 * caller then looks again the careful way, which says what it is.
 */
function cleanFile(fs: RawFs, path: string | Buffer, digests: string, at32: number, mode: number, uid: number, gid: number, maxBytes: number, xattrs: XattrSet | undefined): boolean {
  let fd: number;
  try { fd = fs.open(path, READ_FLAGS); } catch { return false; }
  try {
    fs.fstatInto(fd, st);
    const m = st[ST_MODE]!;
    if ((m & S_IFMT) !== S_IFREG || (m & 0o7777) !== mode || st[ST_UID] !== uid || st[ST_GID] !== gid) return false;
    const size = st[ST_SIZE]!;
    if (size > maxBytes) return false;
    // One read of size + 1: a file that grew since the fstat reads past its size and is
    // looked at again; the short read that stops at the size is the end of the file.
    if (scratch.length < size + 1) scratch = Buffer.allocUnsafeSlow(Math.max(size + 1, scratch.length * 2));
    let n = 0;
    for (;;) {
      const r = fs.read(fd, scratch, n, size + 1 - n, null);
      if (r === 0) break;
      n += r;
      if (n > size) return false;
      if (n === size) break;
    }
    if (n !== size) return false;
    // Its ACL and extended attributes too (one flistxattr on the descriptor when it has none).
    return digests.startsWith(digestOf(scratch.subarray(0, n)), at32) && attrReasons(xattrs, readXattrsFd(fd)).length === 0;
  } catch {
    return false;
  } finally {
    try { fs.close(fd); } catch { /* closed */ }
  }
}

/** The same findings as inspectAll (directories first, then files in path order). */
export function verifyAll(rootFd: number, state: BaselineState, pset: ProtectedSet, maxBytes: number, fs: RawFs = rawFs()): Finding[] {
  const dirs = new Map<string, DirState>();
  const openDir = (dir: string): DirState => {
    let d = dirs.get(dir);
    if (d) return d;
    const w = tryOpenDir(rootFd, dir);
    d = { fd: w.ok ? w.fd : null, slots: null, names: [], raw: [], regular: new Uint8Array(0), named: new Uint8Array(0) };
    if (w.ok) {
      // An unlistable directory (mode 0300, walked O_PATH): every name goes the lstat way.
      try {
        const listed = fs.listTyped(at(w.fd, '.'));
        const n = listed.names.length;
        const slots = new Map<string, number>();
        const regular = new Uint8Array(n);
        for (let i = 0; i < n; i++) {
          const l = listed.names[i]!;
          // Names are bytes (docs/CONTRACT.md §Detection): listed as Latin-1 (one char a byte); an ASCII name is
          // itself, any other is decoded the one way (nameFromBytes) and opened by its bytes.
          let name = l;
          let raw: Buffer | null = null;
          if (NON_ASCII.test(l)) { raw = Buffer.from(l, 'latin1'); name = nameFromBytes(raw); }
          d.names.push(name); d.raw.push(raw);
          slots.set(name, i);
          if (listed.types[i] === DIRENT_FILE) regular[i] = 1;
        }
        d.slots = slots; d.regular = regular; d.named = new Uint8Array(n);
      } catch { d.names = []; d.raw = []; }
    }
    dirs.set(dir, d);
    return d;
  };
  try {
    const dirFindings = inspectDirs(rootFd, state);
    const files: Finding[] = [];
    const judge = (rel: string, obs: Observation) => {
      const entry = state.entry(rel);
      const kind = entry?.kind ?? pset.kindOf(rel);
      if (!entry && !kind) return;
      const verdict = classify(entry, obs);
      if (verdict) files.push({ path: rel, isDir: false, kind, verdict, obs });
    };
    // 1. The baseline's files, by directory, walking the index's columns (no lookup per file).
    const cols = columnsOf(state.index);
    const byDir = new Map<string, number[]>();
    let lastDir: string | null = null;
    let lastList: number[] = [];
    for (let i = 0; i < cols.paths.length; i++) {
      const d = dirOf(cols.paths[i]!);
      if (d !== lastDir) {
        lastDir = d;
        const l = byDir.get(d);
        if (l) lastList = l; else byDir.set(d, lastList = []);
      }
      lastList.push(i);
    }
    const unreachable: string[] = [];
    for (const [dir, idx] of byDir) {
      const d = openDir(dir);
      const fd = d.fd;
      if (fd === null) { for (const i of idx) unreachable.push(cols.paths[i]!); continue; }
      standingIn(fd, (here) => {
        for (const i of idx) {
          const rel = cols.paths[i]!;
          const name = baseOf(rel);
          const slot = d.slots?.get(name);
          if (slot !== undefined) d.named[slot] = 1;
          if (slot !== undefined && d.regular[slot] === 1 && name !== '.' && name !== '..') {
            const raw = d.raw[slot] ?? null;
            const path = here ? (raw ?? name) : at(fd, name);
            if (cleanFile(fs, path, cols.digests, 32 * i, cols.mode[i]!, cols.uid[i]!, cols.gid[i]!, maxBytes, state.entry(rel)?.xattrs)) continue;
            // Not clean, or no longer what the listing said: read it as before (its details).
            const s = readListed(path, maxBytes);
            if (s) { judge(rel, { type: 'file', ...s, bytes: null, xattrs: readXattrsAt(path) }); continue; }
          }
          judge(rel, observe(fd, name, maxBytes));
        }
      });
    }
    // 2. What the settings protect beyond the baseline: exact paths and glob matches on disk
    // (an unexpected file), looked at the careful way (lstat first).
    const extra = new Set<string>();
    for (const p of pset.exactPaths) if (!state.entry(p)) extra.add(p);
    if (pset.patterns.some((p) => p.deep)) {
      for (const p of candidatePaths(rootFd, state, pset)) if (!state.entry(p)) extra.add(p);
    } else {
      for (const base of pset.listedDirs) {
        const d = openDir(base);
        for (let i = 0; i < d.names.length; i++) {
          // A name the baseline holds in this directory was looked at above.
          if (d.named[i] === 1) continue;
          const name = d.names[i]!;
          const rel = base === '' ? name : `${base}/${name}`;
          if (!state.entry(rel) && pset.kindOf(rel)) extra.add(rel);
        }
      }
    }
    for (const rel of extra) {
      const d = openDir(dirOf(rel));
      if (d.fd !== null) judge(rel, observe(d.fd, baseOf(rel), maxBytes));
    }
    for (const rel of unreachable) {
      // The file's directory is gone or replaced: the file is missing from where it belongs.
      if (dirFindings.some((d) => rel.startsWith(d.path + '/') && d.verdict.reason !== 'mode' && d.verdict.reason !== 'owner')) {
        files.push({ path: rel, isDir: false, kind: state.entry(rel)?.kind ?? null, verdict: { reason: 'deleted', also: [], action: 'reverted' }, obs: ABSENT_OBS });
      }
    }
    files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return [...dirFindings, ...files];
  } finally {
    for (const d of dirs.values()) if (d.fd !== null) safeClose(d.fd);
  }
}
