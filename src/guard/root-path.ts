/**
 * What stands at a protected directory's path (the root or one below it), and whether it is
 * warden's to change: docs/ARCHITECTURE.md, invariant 19. Pure: no I/O, so every rule is
 * table-tested (test/guard/root-path-rules.test.ts); the guard does the lstat and the repair
 * (dir-repair.ts).
 *
 * warden changes the owner, mode or content only of what belongs to the approved state:
 * the root directory it holds, and the directories it made or verified itself, known by
 * device and inode (never by path: a path names whatever was last put there). Anything else
 * at such a path is foreign: it is moved aside whole, untouched, and the approved directory
 * is made anew.
 */
import type { EntryType } from '../fsx/beneath.js';

/** A directory's identity: what warden recorded when it made or verified it. */
export interface Ident { dev: number; ino: number }

/** What lstat saw at a path (null: nothing there). */
export interface Standing extends Ident { type: EntryType; uid: number; gid: number; mode: number }

export type Judgement =
  /** Nothing at the path: the approved directory is made anew. */
  | { kind: 'absent' }
  /** warden's own directory (`first`: verified just now, its identity to be recorded). */
  | { kind: 'ours'; first: boolean }
  /** Anything else: moved aside whole, never chowned, chmodded, written into or emptied. */
  | { kind: 'foreign' };

const same = (a: Ident, b: Ident): boolean => a.dev === b.dev && a.ino === b.ino;

/**
 * A protected directory below the root. With a record, only the very directory recorded is
 * warden's. Without one (the first look after a start, or a directory a sanctioned change
 * just made), a directory owned by the approved owner is verified as warden's: whatever
 * warden then does to it (its mode put back, the approved files written in, unexpected ones
 * moved out) the approved owner could do itself, so no privilege of warden's is lent to
 * anyone. A directory of any other owner is foreign.
 */
export function judgeDir(seen: Standing | null, known: Ident | undefined, approvedUid: number): Judgement {
  if (!seen) return { kind: 'absent' };
  if (seen.type !== 'dir') return { kind: 'foreign' };
  if (known) return same(seen, known) ? { kind: 'ours', first: false } : { kind: 'foreign' };
  return seen.uid === approvedUid ? { kind: 'ours', first: true } : { kind: 'foreign' };
}

/** The root path: only the directory the guard holds is warden's. */
export function judgeRoot(seen: Standing | null, held: Ident): 'holds' | 'absent' | 'foreign' {
  if (!seen) return 'absent';
  return seen.type === 'dir' && same(seen, held) ? 'holds' : 'foreign';
}

const NAMES: Record<EntryType, string> = {
  dir: 'a directory warden did not make', symlink: 'a symlink', file: 'a file', fifo: 'a FIFO', socket: 'a socket', device: 'a device node', absent: 'nothing',
};

/** "a directory warden did not make (owned by uid 0, gid 0, mode 0755)": what was put at a path, in words. */
export function describeStanding(seen: Standing): string {
  const what = NAMES[seen.type];
  if (seen.type === 'symlink') return `${what} (owned by uid ${seen.uid})`;
  return `${what} (owned by uid ${seen.uid}, gid ${seen.gid}, mode ${(seen.mode & 0o7777).toString(8).padStart(4, '0')})`;
}

/**
 * The alert's detail for a foreign object moved away from a protected directory's path
 * `where` (the root path, or a path below the root), kept at `kept`.
 */
export function foreignDetail(where: string, seen: Standing, kept: string, made: string): string {
  return `${describeStanding(seen)} was put at ${where}; warden changed nothing in it and moved it whole to ${kept}; ${made}`;
}

/**
 * The name a foreign object gets beside the root, in the root's parent, when it cannot be
 * renamed into quarantine (the store is on another file system): hidden, marked as warden's
 * doing, with the alert id; at most 255 bytes.
 */
export function besideName(rootName: string, rel: string, id: string): string {
  const tail = `.warden-moved-${id}`;
  const what = rel === '' ? rootName : `${rootName}.${rel.replaceAll('/', '.')}`;
  let head = `.${what}`;
  while (Buffer.byteLength(head + tail) > 255) head = head.slice(0, -1);
  return head + tail;
}
