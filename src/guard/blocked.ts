/**
 * A foreign object at a protected directory's path that cannot be moved aside (a mount
 * point: EBUSY; a read-only parent: EROFS; a parent warden may not write: EACCES, EPERM):
 * docs/ARCHITECTURE.md, invariant 19. warden never acts on it (no chown, chmod, write, no
 * file reverted inside it); it says so once, waits, watching, and acts again as soon as
 * another object stands at the path (e.g. after `umount`), or at the next retry (backoff).
 * Pure: the guard does the lstat, the repair and the alert.
 */
import { backoffDelay, type Backoff } from '../common/backoff.js';
import { errnoCode } from '../common/errors.js';
import { describeStanding, type Ident, type Standing } from './root-path.js';

/** Tried again at 250 ms, 500 ms, … then every 60 s (a parent made writable again is seen so). */
const AGAIN: Backoff = { baseMs: 250, capMs: 60_000 };

/**
 * The errors that say the object itself cannot be moved (the WHY list below). Any other
 * (ENOSPC or EDQUOT: the agent used up the file system; EMFILE, EIO) is a failed repair,
 * retried at each look: never a reason to leave the agent's object at the path and wait.
 */
export const REFUSALS: ReadonlySet<string> = new Set(['EBUSY', 'EROFS', 'EACCES', 'EPERM', 'EXDEV', 'ELOOP']);

/** Thrown by a repair whose move aside failed: nothing was moved, nothing changed. */
export class CannotMoveAside extends Error {
  readonly code: string;
  constructor(readonly seen: Standing, cause: unknown) {
    const code = errnoCode(cause) ?? 'EIO';
    super(`cannot move aside: ${code}`);
    this.code = code;
  }
}

interface Entry extends Ident { tries: number; until: number }

const same = (a: Ident, b: Ident): boolean => a.dev === b.dev && a.ino === b.ino;

/** Protected directory paths ('' the root) where a foreign object stands that could not be moved. */
export class BlockedPaths {
  private readonly at = new Map<string, Entry>();

  /**
   * The move aside of `seen` at `path` failed again. True when this object was not noted
   * before (the one alert is raised then); the next try waits longer each time.
   */
  note(path: string, seen: Ident, now: number): boolean {
    const e = this.at.get(path);
    if (e && same(e, seen)) { e.tries++; e.until = now + backoffDelay(AGAIN, e.tries); return false; }
    this.at.set(path, { dev: seen.dev, ino: seen.ino, tries: 1, until: now + backoffDelay(AGAIN, 1) });
    return true;
  }

  /** Is the object noted at `path` still what stands there, and its next try not due yet? */
  waiting(path: string, seen: Ident | null, now: number): boolean {
    const e = this.at.get(path);
    return e !== undefined && seen !== null && same(e, seen) && now < e.until;
  }

  /** Is `rel` (a file or directory below the root) at or below a blocked directory other than the root? */
  covers(rel: string): boolean {
    for (const p of this.at.keys()) if (p !== '' && (rel === p || rel.startsWith(`${p}/`))) return true;
    return false;
  }

  has(path: string): boolean { return this.at.has(path); }

  clear(path: string): boolean { return this.at.delete(path); }

  /** Keep only the directories below the root still found foreign (the rest were fixed or went away). */
  keepOnly(stillForeign: readonly string[]): void {
    for (const p of [...this.at.keys()]) if (p !== '' && !stillForeign.includes(p)) this.at.delete(p);
  }
}

const WHY: Record<string, string> = {
  EBUSY: 'it is a mount point: a file system is mounted there, and a mount point cannot be renamed',
  EROFS: 'the directory that holds it is on a read-only file system',
  EACCES: 'warden may not write the directory that holds it',
  EPERM: 'the directory that holds it does not let warden rename it (sticky bit, or an immutable attribute)',
  EXDEV: 'it is on another file system than every place warden can move it to',
  ELOOP: 'a symlink of another user stands above the root',
};

/**
 * The alert's detail: what stands at `where` (the root path, or a path below the root),
 * why it could not be moved, that nothing in it was touched, and what warden does meanwhile.
 */
export function blockedDetail(where: string, seen: Standing, code: string, isRoot: boolean): string {
  const why = WHY[code] ?? `moving it failed with ${code}`;
  const meanwhile = isRoot
    ? 'warden does not guard the root while it stands there, and takes the root back by itself as soon as the path names something else (e.g. after umount)'
    : 'warden guards everything else and takes this path back by itself as soon as something else stands there (e.g. after umount)';
  return `${describeStanding(seen)} stands at ${where} and cannot be moved aside (${code}: ${why}); warden changed nothing in it (no chown, chmod or write) and leaves it as it is; ${meanwhile}`;
}

/**
 * What the owner does (the alert's advice; 'warden …' is rewritten for the deployment by
 * classify.ts's deployedAdvice): adopt it as the root's new home, or remove it.
 */
export function blockedAdvice(where: string, isRoot: boolean, code: string): string {
  const away = code === 'EBUSY' ? `'umount ${where}'` : `remove or rename it (${code === 'EROFS' || code === 'EACCES' || code === 'EPERM' ? 'or make its parent writable again' : 'by hand'})`;
  if (!isRoot) return `If it is not meant to be there, ${away}: warden puts the approved directory back by itself. warden never adopts a directory it did not make below the root; to stop protecting what is in it, change the [[protect]] entries with 'warden edit config/warden.toml'.`;
  return `If it is the root's new home (its own file system mounted there, or a directory you put there), adopt it: stop the guard ('systemctl stop warden-guard', or stop 'warden run'), run 'warden rehome --here', then start the guard again. If it is not, ${away}: warden takes the root back by itself within a second.`;
}
