/**
 * History: a git repository in snapshots/history with one commit per accepted state.
 * Its work tree mirrors the protected files, except that a credential file is replaced
 * by "<path>.fingerprints" (keys and the first 12 hex digits of each value's sha256), so
 * no credential value ever enters a git object. Kept off the revert path: git is slow.
 */
import type { SimpleGit } from 'simple-git';
import { userInfo } from 'node:os';
import { constants, openSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { at, atText, createFileAt, ensureDirBeneath, lstatAt, replaceFileAt, safeClose, unlinkAt, withDir } from '../fsx/beneath.js';
import { errnoCode, WardenError } from '../common/errors.js';
import { escapeText } from '../common/escape.js';
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
    baseDir: atText(store.fd, HISTORY_DIR),
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
 * `mode`/`beforeMode` are set when the approved mode changes: the commit message records it.
 * `mirror`: what the work tree keeps instead of `bytes` (a file whose credentials the runtime
 * rewrites, with their values as fingerprints: grants/redact.ts).
 */
export interface HistoryChange { path: string; kind: FileKind; bytes: Buffer | null; mode?: number; beforeMode?: number; mirror?: Buffer }

const oct = (m: number): string => m.toString(8).padStart(4, '0');

export function mirrorName(path: string, kind: FileKind): string {
  return kind === 'credentials' ? `${path}.fingerprints` : path;
}

/**
 * Write the mirror files for a change (null bytes = removed); each directory is opened once.
 * `touched`: mirror paths written (to add); `removed`: mirror paths that leave the tree (to
 * remove from the index: the work tree may not hold them, see initHistory).
 */
function writeMirror(storeFd: StoreFd, changes: HistoryChange[]): { touched: string[]; removed: string[] } {
  const touched: string[] = [];
  const removed: string[] = [];
  const byDir = new Map<string, { c: HistoryChange; rel: string; name: string }[]>();
  for (const c of changes) {
    const rel = mirrorName(c.path, c.kind);
    const i = rel.lastIndexOf('/');
    const dir = `${HISTORY_DIR}${i < 0 ? '' : '/' + rel.slice(0, i)}`;
    const list = byDir.get(dir) ?? [];
    list.push({ c, rel, name: i < 0 ? rel : rel.slice(i + 1) });
    byDir.set(dir, list);
  }
  const inDir = (fd: number, items: { c: HistoryChange; rel: string; name: string }[]) => {
    for (const { c, rel, name } of items) {
      if (c.bytes === null) {
        try { unlinkAt(fd, name); } catch { /* already gone */ }
        removed.push(rel);
        continue;
      } else {
        const content = c.mirror ?? (c.kind === 'credentials' ? Buffer.from(credentialFingerprintText(c.bytes)) : c.bytes);
        // A new mirror file is created in place; an existing one is replaced.
        try { createFileAt(fd, name, content, 0o600, false); } catch (err) {
          if (errnoCode(err) !== 'EEXIST') throw err;
          replaceFileAt(fd, name, content, { mode: 0o600, durable: false });
        }
        // A credential file never has a plain mirror (one that became a credential file: it leaves the tree).
        const plain = c.path.slice(c.path.lastIndexOf('/') + 1);
        if (c.kind === 'credentials') { if (lstatAt(fd, plain)) unlinkAt(fd, plain); removed.push(c.path); }
      }
      touched.push(rel);
    }
  };
  for (const [dir, items] of byDir) {
    if (items.every((x) => x.c.bytes === null)) {
      // Only removals: a directory that is not there has nothing to remove (still staged below).
      withDir(storeFd, dir, (fd) => inDir(fd, items), () => { for (const x of items) removed.push(x.rel); });
      continue;
    }
    const fd = ensureDirBeneath(storeFd, dir);
    try { inDir(fd, items); } finally { safeClose(fd); }
  }
  return { touched, removed };
}

/** A path as git's fast-import reads it: always C-style quoted (a name may hold a newline or a quote). */
export function quotePath(path: string): string {
  let out = '"';
  for (const ch of path) {
    const c = ch.charCodeAt(0);
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (c < 0x20 || c === 0x7f) out += '\\' + c.toString(8).padStart(3, '0');
    else out += ch; // UTF-8 as it is: fast-import takes the bytes inside the quotes
  }
  return out + '"';
}

/**
 * The first commit of a whole root, built by `git fast-import` straight from memory: one
 * pack, and no mirror file written into the work tree (10,000 files: 10,000 file creates
 * saved, half of what init paid the kernel). The index is then filled from the commit
 * (`read-tree`, no files either), so later commits (`add -A -- <touched>`) stage against
 * it as before. The work tree starts empty; nothing reads it but git, and a later commit
 * writes the mirror files it touches. Killed half way, it leaves at most an unreferenced
 * pack or a commit the next init builds on (the baseline index, written after this, is
 * the commit point).
 */
export async function initHistory(store: Store, changes: HistoryChange[], user = osUser()): Promise<void> {
  safeClose(ensureDirBeneath(store.fd, HISTORY_DIR));
  const g = await git(store);
  await g.init();
  const ref = (await g.raw(['symbolic-ref', '-q', 'HEAD'])).trim() || 'refs/heads/master';
  let parent = '';
  try { parent = (await g.raw(['rev-parse', '--verify', '-q', `${ref}^{commit}`])).trim(); } catch { /* unborn: the first commit */ }
  const parts: Buffer[] = [];
  const msg = Buffer.from(`init: baseline of ${changes.length} file(s)\n\ncommand: warden init\nuser: ${user}\n`);
  parts.push(Buffer.from(`commit ${ref}\ncommitter warden <warden@localhost> ${Math.floor(Date.now() / 1000)} +0000\ndata ${msg.length}\n`), msg, Buffer.from('\n'));
  if (parent) parts.push(Buffer.from(`from ${parent}\n`));
  parts.push(Buffer.from('deleteall\n'));
  for (const c of changes) {
    if (c.bytes === null) continue;
    const content = c.mirror ?? (c.kind === 'credentials' ? Buffer.from(credentialFingerprintText(c.bytes)) : c.bytes);
    parts.push(Buffer.from(`M 100644 inline ${quotePath(mirrorName(c.path, c.kind))}\ndata ${content.length}\n`), content, Buffer.from('\n'));
  }
  parts.push(Buffer.from('\ndone\n'));
  await fastImport(store, Buffer.concat(parts));
  await g.raw(['read-tree', ref]);
}

/**
 * Feed a fast-import stream to git in the history repository (a child; killed if it takes
 * too long). The one git call not made through simple-git, which cannot give a command a
 * stdin. The stream goes through an unlinked temp file in .git, git's stdin: a pipe
 * would be fed only when this process's event loop turns, and init keeps it busy writing
 * blobs meanwhile, so git would start its work only after them instead of beside them.
 */
async function fastImport(store: Store, stream: Buffer): Promise<void> {
  const { spawn } = await import('node:child_process');
  const name = `warden-import-${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  const input = withDir(store.fd, `${HISTORY_DIR}/.git`, (dir) => {
    try {
      createFileAt(dir, name, stream, 0o600, false);
      return openSync(at(dir, name), constants.O_RDONLY | constants.O_NOFOLLOW);
    } finally {
      try { unlinkAt(dir, name); } catch { /* not created */ }
    }
  }, (f) => { throw new WardenError(`${HISTORY_DIR}/.git: "${f.segment}" is not a directory we may enter (${f.code})`); });
  try {
    await new Promise<void>((resolve, reject) => {
      // As simple-git does: no GIT_* variable of ours reaches git; the repository is the held store's.
      // --depth=0: no delta attempts (the first commit's blobs are distinct files);
      // core.compression=0: zlib was a third of git's time here. A later gc compresses it.
      // MALLOC_TOP_PAD_ (glibc): fast-import grows and trims its heap around every blob, one
      // brk each way (40,018 brk calls for 10,000 blobs, most of its system time);
      // with 16 MiB of pad it grows a few times and is done: 3 brk calls, 2-2.5x faster.
      const child = spawn('git', ['-c', 'core.compression=0', 'fast-import', '--quiet', '--done', '--depth=0'], { cwd: atText(store.fd, HISTORY_DIR), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', MALLOC_TOP_PAD_: String(16 * 1024 * 1024) }, stdio: [input, 'ignore', 'pipe'] });
      let err = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), gitTimeoutMs());
      child.stderr?.on('data', (d: Buffer) => { if (err.length < 4096) err += String(d); });
      child.on('error', (e) => { clearTimeout(timer); reject(e); });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else reject(new Error(`git fast-import failed (${signal ?? `exit ${code}`}): ${err.trim().split('\n')[0] ?? ''}`));
      });
    });
  } finally {
    safeClose(input);
  }
}

/** `whole`: `changes` is the complete new state (a re-baseline): files not in it leave the mirror. */
export async function commitHistory(store: Store, changes: HistoryChange[], command: string, user = osUser(), whole = false): Promise<string> {
  const g = await git(store);
  if (whole) {
    const keep = new Set(changes.map((c) => mirrorName(c.path, c.kind)));
    // -z: names as they are (no C-quoting of unusual ones), so they compare with ours.
    const tracked = (await g.raw(['ls-files', '-z'])).split('\0').filter(Boolean);
    const gone = tracked.filter((f) => !keep.has(f));
    if (gone.length) await g.raw(['--literal-pathspecs', 'rm', '-q', '--cached', '--ignore-unmatch', '--', ...gone]);
  }
  const { touched, removed } = writeMirror(store.fd, changes);
  // Literal pathspecs: a file named "a*.toml" stages or removes itself, never every match of
  // a glob (the work tree holds only what this commit touches, so a glob would stage the
  // other matches as deleted).
  if (removed.length) await g.raw(['--literal-pathspecs', 'rm', '-q', '--cached', '--ignore-unmatch', '--', ...removed]);
  if (touched.length) await g.raw(['--literal-pathspecs', 'add', '-A', '--', ...touched]);
  // Paths escaped: a name holding a newline must not add a line ("user: …") to the record.
  const paths = changes.map((c) => escapeText(c.path)).join(', ');
  const modes = changes.filter((c) => c.mode !== undefined && c.beforeMode !== undefined).map((c) => `mode: ${escapeText(c.path)} ${oct(c.beforeMode as number)} → ${oct(c.mode as number)}\n`).join('');
  const r = await g.commit(`${escapeText(command.split(' ')[0] ?? command)}: ${paths}\n\ncommand: warden ${escapeText(command)}\nuser: ${escapeText(user)}\npaths: ${paths}\n${modes}`, undefined, { '--allow-empty': null });
  return r.commit;
}

export interface HistoryEntry { commit: string; date: string; message: string }

/** A pathspec that names exactly this path: "a*.toml" is that file, not a glob. */
const literal = (p: string): string => `:(literal)${p}`;

/**
 * Newest first. One path's history is the commits that touch its mirror file and the
 * commits that change only its approved mode (the mirror does not carry modes, so git's
 * own path filter drops those: they are found by their "mode: PATH" line).
 */
export async function readHistory(store: Store, path?: string, kind?: FileKind): Promise<HistoryEntry[]> {
  const g = await git(store);
  const toEntry = (e: { hash: string; date: string; message: string; body: string }): HistoryEntry => ({ commit: e.hash, date: e.date, message: `${e.message}${e.body ? '\n' + e.body : ''}`.trim() });
  const all = (await g.log()).all.map(toEntry);
  if (!path) return all;
  const touching = new Set((await g.log({ file: literal(mirrorName(path, kind ?? 'text')) })).all.map((e) => e.hash));
  const modeLine = `mode: ${escapeText(path)} `;
  return all.filter((e) => touching.has(e.commit) || e.message.split('\n').some((l) => l.startsWith(modeLine) && isModeLine(l.slice(modeLine.length))));
}

/** "0644 → 0600": the rest of a mode line after its path. */
const isModeLine = (rest: string): boolean => /^[0-7]{4} → [0-7]{4}$/.test(rest);

/** The mode changes a commit message records for `path` ("0644 → 0600"), for a patch that has no content change. */
export function modeChangesOf(message: string, path: string): string[] {
  const modeLine = `mode: ${escapeText(path)} `;
  return message.split('\n').filter((l) => l.startsWith(modeLine) && isModeLine(l.slice(modeLine.length))).map((l) => l.slice(modeLine.length));
}

/** One accepted change as a patch (credential files appear as their fingerprint mirror). */
export async function readPatch(store: Store, commit: string, path?: string, kind?: FileKind): Promise<string> {
  if (!/^[0-9a-f]{7,64}$/.test(commit)) throw new Error(`not a commit id: ${commit}`);
  const g = await git(store);
  return g.show(['--format=', '--patch', '--no-color', '--no-ext-diff', commit, ...(path ? ['--', literal(mirrorName(path, kind ?? 'text'))] : [])]);
}

/** The latest commit's mirror: mirror path → content, and the commit id; null without history. */
export async function latestHistoryTree(store: Store): Promise<{ commit: string; files: Map<string, Buffer> } | null> {
  try {
    const g = await git(store);
    const commit = (await g.raw(['rev-parse', 'HEAD'])).trim();
    const names = (await g.raw(['ls-tree', '-r', '--name-only', '-z', 'HEAD'])).split('\0').filter(Boolean);
    const files = new Map<string, Buffer>();
    // showBuffer: the mirror's bytes as git holds them (decoded as text they could change).
    for (const n of names) files.set(n, await g.showBuffer([`HEAD:${n}`]));
    return { commit, files };
  } catch { return null; }
}
