/**
 * History: a git repository in snapshots/history with one commit per accepted state.
 * Its work tree mirrors the protected files, except that a credential file is replaced
 * by "<path>.fingerprints" (keys and the first 12 hex digits of each value's sha256), so
 * no credential value ever enters a git object. Kept off the revert path: git is slow.
 */
import type { SimpleGit } from 'simple-git';
import { join } from 'node:path';
import { userInfo } from 'node:os';
import { ensureDirBeneath, lstatAt, replaceFileAt, safeClose, unlinkAt, walkDir } from '../fsx/beneath.js';
import { HISTORY_DIR } from './layout.js';
import { credentialFingerprintText } from '../credentials/rules.js';
import type { FileKind } from '../config/protected-set.js';

export function osUser(): string {
  try { return userInfo().username; } catch { return `uid ${process.getuid?.() ?? '?'}`; }
}

/** simple-git costs ~11 MB: load it only when history is written or read, never in an idle guard. */
async function git(root: string): Promise<SimpleGit> {
  const { simpleGit } = await import('simple-git');
  // simple-git needs an identity per instance (a fresh machine has no global one).
  return simpleGit({
    baseDir: join(root, HISTORY_DIR),
    config: ['user.name=warden', 'user.email=warden@localhost', 'commit.gpgsign=false'],
    // A git that makes no progress (a FIFO planted as .git/HEAD blocks its open forever) is
    // killed: a sanctioned change then reports the failed history commit instead of hanging.
    timeout: { block: gitTimeoutMs() },
  });
}

/** WARDEN_GIT_TIMEOUT_MS is a test seam (a hung git in a few seconds, not 20). */
function gitTimeoutMs(): number {
  const v = Number(process.env.WARDEN_GIT_TIMEOUT_MS);
  return Number.isFinite(v) && v >= 100 ? v : 20_000;
}

export interface HistoryChange { path: string; kind: FileKind; bytes: Buffer | null }

export function mirrorName(path: string, kind: FileKind): string {
  return kind === 'credentials' ? `${path}.fingerprints` : path;
}

/** Write the mirror files for a change (null bytes = removed). */
function writeMirror(rootFd: number, changes: HistoryChange[]): string[] {
  const touched: string[] = [];
  for (const c of changes) {
    const rel = mirrorName(c.path, c.kind);
    const i = rel.lastIndexOf('/');
    const dir = `${HISTORY_DIR}${i < 0 ? '' : '/' + rel.slice(0, i)}`;
    const name = i < 0 ? rel : rel.slice(i + 1);
    if (c.bytes === null) {
      const w = walkDir(rootFd, dir);
      if (!w.ok) { safeClose(w.parentFd); continue; }
      try { unlinkAt(w.fd, name); } catch { /* already gone */ } finally { safeClose(w.fd); }
    } else {
      const fd = ensureDirBeneath(rootFd, dir);
      const content = c.kind === 'credentials' ? Buffer.from(credentialFingerprintText(c.bytes)) : c.bytes;
      try {
        replaceFileAt(fd, name, content, { mode: 0o600, durable: false });
        // A file that became a credential file: its plain mirror leaves the tree.
        const plain = c.path.slice(c.path.lastIndexOf('/') + 1);
        if (c.kind === 'credentials' && lstatAt(fd, plain)) { unlinkAt(fd, plain); touched.push(c.path); }
      } finally { safeClose(fd); }
    }
    touched.push(rel);
  }
  return touched;
}

export async function initHistory(root: string, rootFd: number, changes: HistoryChange[], user = osUser()): Promise<void> {
  safeClose(ensureDirBeneath(rootFd, HISTORY_DIR));
  const g = await git(root);
  await g.init();
  writeMirror(rootFd, changes);
  await g.add(['-A', '.']);
  await g.commit(`init: baseline of ${changes.length} file(s)\n\ncommand: warden init\nuser: ${user}\n`, undefined, { '--allow-empty': null });
}

export async function commitHistory(root: string, rootFd: number, changes: HistoryChange[], command: string, user = osUser()): Promise<string> {
  const touched = writeMirror(rootFd, changes);
  const g = await git(root);
  await g.add(['-A', '--', ...touched]);
  const paths = changes.map((c) => c.path).join(', ');
  const r = await g.commit(`${command.split(' ')[0] ?? command}: ${paths}\n\ncommand: warden ${command}\nuser: ${user}\npaths: ${paths}\n`, undefined, { '--allow-empty': null });
  return r.commit;
}

export interface HistoryEntry { commit: string; date: string; message: string }

export async function readHistory(root: string, path?: string, kind?: FileKind): Promise<HistoryEntry[]> {
  const g = await git(root);
  const opts: Record<string, string | null> = {};
  const log = path ? await g.log({ file: mirrorName(path, kind ?? 'text'), ...opts }) : await g.log(opts);
  return log.all.map((e) => ({ commit: e.hash, date: e.date, message: `${e.message}${e.body ? '\n' + e.body : ''}`.trim() }));
}
