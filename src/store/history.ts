/**
 * History: a git repository in snapshots/history with one commit per accepted state.
 * Its work tree mirrors the protected files, except that a credential file is replaced
 * by "<path>.fingerprints" (keys and the first 12 hex digits of each value's sha256), so
 * no credential value ever enters a git object. Kept off the revert path: git is slow.
 */
import type { SimpleGit } from 'simple-git';
import { userInfo } from 'node:os';
import { at, createFileAt, ensureDirBeneath, lstatAt, replaceFileAt, safeClose, unlinkAt, walkDir } from '../fsx/beneath.js';
import { errnoCode } from '../common/errors.js';
import { HISTORY_DIR } from './layout.js';
import type { Store, StoreFd } from './store.js';
import { credentialFingerprintText } from '../credentials/rules.js';
import type { FileKind } from '../config/protected-set.js';

export function osUser(): string {
  try { return userInfo().username; } catch { return `uid ${process.getuid?.() ?? '?'}`; }
}

/** simple-git costs ~11 MB: load it only when history is written or read, never in an idle guard. */
async function git(store: Store, extraConfig: string[] = []): Promise<SimpleGit> {
  const { simpleGit } = await import('simple-git');
  // simple-git needs an identity per instance (a fresh machine has no global one).
  // The work tree is reached through the held store descriptor: git's child process
  // changes into it before exec, so a renamed or exchanged store path never redirects it.
  return simpleGit({
    baseDir: at(store.fd, HISTORY_DIR),
    config: ['user.name=warden', 'user.email=warden@localhost', 'commit.gpgsign=false', ...extraConfig],
    // A git that makes no progress (a FIFO planted as .git/HEAD blocks its open forever) is
    // killed: a sanctioned change then reports the failed history commit instead of hanging.
    timeout: { block: gitTimeoutMs() },
  });
}

/** How long a git call may make no progress (default 120 s: a first `git add` of 10,000 files prints nothing for a while on a loaded machine). WARDEN_GIT_TIMEOUT_MS is a test seam (a hung git in a few seconds). */
function gitTimeoutMs(): number {
  const v = Number(process.env.WARDEN_GIT_TIMEOUT_MS);
  return Number.isFinite(v) && v >= 100 ? v : 120_000;
}

/**
 * For the first commit of a whole root: every blob over core.bigFileThreshold is streamed
 * by `git add` into one pack (git's bulk check-in) instead of one loose object file each
 * (10,000 files: one pack, not 10,000 creates and a `gc --auto` repack afterwards).
 */
const BULK = ['core.bigFileThreshold=1'];

/** `mode`/`beforeMode` are set when the approved mode changes: the commit message records it. */
export interface HistoryChange { path: string; kind: FileKind; bytes: Buffer | null; mode?: number; beforeMode?: number }

const oct = (m: number): string => m.toString(8).padStart(4, '0');

export function mirrorName(path: string, kind: FileKind): string {
  return kind === 'credentials' ? `${path}.fingerprints` : path;
}

/** Write the mirror files for a change (null bytes = removed); each directory is opened once. */
function writeMirror(storeFd: StoreFd, changes: HistoryChange[]): string[] {
  const touched: string[] = [];
  const dirs = new Map<string, number | null>();
  const dirFd = (dir: string, create: boolean): number | null => {
    let fd = dirs.get(dir);
    if (fd === undefined || (fd === null && create)) {
      if (create) fd = ensureDirBeneath(storeFd, dir);
      else { const w = walkDir(storeFd, dir); if (w.ok) fd = w.fd; else { safeClose(w.parentFd); fd = null; } }
      dirs.set(dir, fd);
    }
    return fd;
  };
  try {
    for (const c of changes) {
      const rel = mirrorName(c.path, c.kind);
      const i = rel.lastIndexOf('/');
      const dir = `${HISTORY_DIR}${i < 0 ? '' : '/' + rel.slice(0, i)}`;
      const name = i < 0 ? rel : rel.slice(i + 1);
      if (c.bytes === null) {
        const fd = dirFd(dir, false);
        if (fd === null) continue;
        try { unlinkAt(fd, name); } catch { /* already gone */ }
      } else {
        const fd = dirFd(dir, true) as number;
        const content = c.kind === 'credentials' ? Buffer.from(credentialFingerprintText(c.bytes)) : c.bytes;
        // A new mirror file is created in place (init: 10,000 of them); an existing one is replaced.
        try { createFileAt(fd, name, content, 0o600, false); } catch (err) {
          if (errnoCode(err) !== 'EEXIST') throw err;
          replaceFileAt(fd, name, content, { mode: 0o600, durable: false });
        }
        // A file that became a credential file: its plain mirror leaves the tree.
        const plain = c.path.slice(c.path.lastIndexOf('/') + 1);
        if (c.kind === 'credentials' && lstatAt(fd, plain)) { unlinkAt(fd, plain); touched.push(c.path); }
      }
      touched.push(rel);
    }
  } finally {
    for (const fd of dirs.values()) if (fd !== null) safeClose(fd);
  }
  return touched;
}

export async function initHistory(store: Store, changes: HistoryChange[], user = osUser()): Promise<void> {
  safeClose(ensureDirBeneath(store.fd, HISTORY_DIR));
  const g = await git(store, BULK);
  await g.init();
  writeMirror(store.fd, changes);
  await g.add(['-A', '.']);
  await g.commit(`init: baseline of ${changes.length} file(s)\n\ncommand: warden init\nuser: ${user}\n`, undefined, { '--allow-empty': null });
}

/** `whole`: `changes` is the complete new state (a re-baseline): files not in it leave the mirror. */
export async function commitHistory(store: Store, changes: HistoryChange[], command: string, user = osUser(), whole = false): Promise<string> {
  const g = await git(store);
  if (whole) {
    const keep = new Set(changes.map((c) => mirrorName(c.path, c.kind)));
    const tracked = (await g.raw(['ls-files'])).split('\n').filter(Boolean);
    const gone = tracked.filter((f) => !keep.has(f));
    if (gone.length) await g.raw(['rm', '-q', '--cached', '--ignore-unmatch', '--', ...gone]);
  }
  const touched = writeMirror(store.fd, changes);
  await g.add(['-A', '--', ...touched]);
  const paths = changes.map((c) => c.path).join(', ');
  const modes = changes.filter((c) => c.mode !== undefined && c.beforeMode !== undefined).map((c) => `mode: ${c.path} ${oct(c.beforeMode as number)} → ${oct(c.mode as number)}\n`).join('');
  const r = await g.commit(`${command.split(' ')[0] ?? command}: ${paths}\n\ncommand: warden ${command}\nuser: ${user}\npaths: ${paths}\n${modes}`, undefined, { '--allow-empty': null });
  return r.commit;
}

export interface HistoryEntry { commit: string; date: string; message: string }

export async function readHistory(store: Store, path?: string, kind?: FileKind): Promise<HistoryEntry[]> {
  const g = await git(store);
  const opts: Record<string, string | null> = {};
  const log = path ? await g.log({ file: mirrorName(path, kind ?? 'text'), ...opts }) : await g.log(opts);
  return log.all.map((e) => ({ commit: e.hash, date: e.date, message: `${e.message}${e.body ? '\n' + e.body : ''}`.trim() }));
}

/** One accepted change as a patch (credential files appear as their fingerprint mirror). */
export async function readPatch(store: Store, commit: string, path?: string, kind?: FileKind): Promise<string> {
  if (!/^[0-9a-f]{7,64}$/.test(commit)) throw new Error(`not a commit id: ${commit}`);
  const g = await git(store);
  return g.show(['--format=', '--patch', '--no-color', '--no-ext-diff', commit, ...(path ? ['--', mirrorName(path, kind ?? 'text')] : [])]);
}

/** The latest commit's mirror: mirror path → content, and the commit id; null without history. */
export async function latestHistoryTree(store: Store): Promise<{ commit: string; files: Map<string, Buffer> } | null> {
  try {
    const g = await git(store);
    const commit = (await g.raw(['rev-parse', 'HEAD'])).trim();
    const names = (await g.raw(['ls-tree', '-r', '--name-only', '-z', 'HEAD'])).split('\0').filter(Boolean);
    const files = new Map<string, Buffer>();
    const { execFileSync } = await import('node:child_process');
    for (const n of names) files.set(n, execFileSync('git', ['show', `HEAD:${n}`], { cwd: at(store.fd, HISTORY_DIR), timeout: 30_000, maxBuffer: 64 * 1024 * 1024, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }));
    return { commit, files };
  } catch { return null; }
}
