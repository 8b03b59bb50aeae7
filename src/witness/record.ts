/**
 * The witness's record: one JSON line per open for writing it saw, appended (O_APPEND) to
 * `record.jsonl` in the witness's own state directory, never inside the root. The join of
 * a record to an alert (`RecordReader.lookup`) is exact: the same device and inode as the
 * file the guard rejected, seen within the window before the alert. Nothing else is
 * inferred: no path or time guess, no "probably".
 *
 * A reader trusts a record only where the agent cannot write it: the file and its directory
 * must belong to root or to the reader's own account, and be writable by no one else.
 */
import { closeSync, constants as C, fstatSync, mkdirSync, openSync, readSync, renameSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { rootId, stateBase } from '../store/location.js';
import type { NameOp, Writer } from '../store/alert-types.js';

export const RECORD_NAME = 'record.jsonl';
export const WITNESS_STATE_NAME = 'warden-witness';
/** A record older than this is never joined to an alert (inode numbers are reused). */
export const JOIN_WINDOW_MS = 10 * 60_000;
/** Rotated (to record.jsonl.1) at start when larger. */
const ROTATE_BYTES = 16 * 1024 * 1024;

export interface RecordLine extends Omit<Writer, 'time'> { t: number; dev: number; ino: number; path: string }

export type { NameOp };

/**
 * A name record: the directory entry PATH had OP done to it, by a writer read at once, or by
 * a pid that was gone before it could be read (`gone`: exited, or already reaped when the
 * kernel made the event's pidfd).
 */
export type NameLine = { t: number; name: 1; path: string; op: NameOp } & (Omit<Writer, 'time' | 'op'> | { pid: number; gone: 'exited' | 'reaped' });

/** A name record older than this (before the alert) is never joined: the guard sees a change within a second or two, or at a rescan. */
export const NAME_WINDOW_MS = 30_000;

/** The witness's state directory: WARDEN_WITNESS_STATE_DIR, its unit's STATE_DIRECTORY, the deployment's /var/lib/warden-witness, else <state>/witness. */
export function witnessDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.WARDEN_WITNESS_STATE_DIR?.startsWith('/')) return env.WARDEN_WITNESS_STATE_DIR;
  for (const d of (env.STATE_DIRECTORY ?? '').split(':')) if (d.startsWith('/') && d.endsWith(`/${WITNESS_STATE_NAME}`)) return d;
  const base = stateBase(env);
  return base.deployment ? `/var/lib/${WITNESS_STATE_NAME}` : join(base.dir, 'witness');
}

export function recordDirOf(root: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(witnessDir(env), rootId(root));
}

function trusted(st: { uid: number; mode: number }): boolean {
  const me = process.geteuid?.() ?? -1;
  return (st.uid === 0 || st.uid === me) && (st.mode & 0o022) === 0;
}

/** Open (create) the record for appending: 0600 (0640 with groupRead, for a guard of another account in the witness's group). */
export function openRecordForAppend(dir: string, groupRead = false): number {
  mkdirSync(dir, { recursive: true, mode: groupRead ? 0o750 : 0o700 });
  const dst = lstatSync(dir);
  if (!dst.isDirectory() || !trusted(dst)) throw new Error(`the witness's state directory ${dir} is not a directory only its owner can write`);
  const path = join(dir, RECORD_NAME);
  try { if (lstatSync(path).size > ROTATE_BYTES) renameSync(path, path + '.1'); } catch { /* none yet */ }
  const fd = openSync(path, C.O_WRONLY | C.O_APPEND | C.O_CREAT | C.O_NOFOLLOW, groupRead ? 0o640 : 0o600);
  const st = fstatSync(fd);
  if (!st.isFile() || !trusted(st)) { closeSync(fd); throw new Error(`${path} is not a regular file only its owner can write`); }
  return fd;
}

/** A heartbeat line: the witness is alive (a reader older than BEAT_STALE_MS without one says the witness is not running). */
export const BEAT_MS = 5000;
export const BEAT_STALE_MS = 15_000;
/** What a heartbeat says besides "alive": the mode and how much is marked (for `warden status` in another process). */
export interface BeatInfo { enforce: boolean; dirs: number; files: number; names?: boolean; namesWhy?: string | null }

export function beatLine(now = Date.now(), info?: BeatInfo): string { return JSON.stringify({ t: now, hb: 1, pid: process.pid, ...(info ?? {}) }) + '\n'; }

export interface Joined { writer: Writer; others: number }

/** A join by name: the writer, or, when the record says its actor was gone, why it is not known. */
export type NameJoined = Joined | { unknown: string };

const SLEEP = new Int32Array(new SharedArrayBuffer(4));

/** The name ops in words (after "the witness saw pid N"). */
export const OP_WORDS: Record<NameOp, string> = {
  attrib: 'change the mode, owner, ACL or extended attributes of', delete: 'delete', 'rename-away': 'rename away', 'rename-in': 'rename another file over', create: 'create',
  modify: 'change the content (without an open the witness saw) of',
};

/** Reads the record from where it last stopped; holds the lines of the join window, by device and inode. */
export class RecordReader {
  private fd = -1;
  private offset = 0;
  private partial = '';
  private readonly byInode = new Map<string, RecordLine[]>();
  private readonly byName = new Map<string, (NameLine & { used?: boolean })[]>();
  private readonly buf = Buffer.alloc(64 * 1024);
  /** Why lookups cannot answer (set when the record is missing or not trustworthy). */
  problem: string | null = null;

  /** When the witness last wrote a heartbeat line (epoch ms), 0 if never. */
  lastBeat = 0;
  /** What the newest heartbeat said: the witness's own mode and marks (its settings are the approved ones). */
  beatInfo: BeatInfo | null = null;

  constructor(private readonly dir: string, private readonly now: () => number = Date.now,
    /** Called for each refused open appended at or after `since` (the reader's start). */
    private readonly onRefused: ((r: RecordLine) => void) | null = null, private readonly since = Date.now()) {}

  private open(): boolean {
    if (this.fd >= 0) return true;
    try {
      const dst = lstatSync(this.dir);
      if (!dst.isDirectory() || !trusted(dst)) { this.problem = 'the witness record is in a directory others can write; not trusted'; return false; }
      const fd = openSync(join(this.dir, RECORD_NAME), C.O_RDONLY | C.O_NOFOLLOW | C.O_NONBLOCK);
      const st = fstatSync(fd);
      if (!st.isFile() || !trusted(st)) { closeSync(fd); this.problem = 'the witness record is writable by others; not trusted'; return false; }
      this.fd = fd;
      this.problem = null;
      return true;
    } catch {
      this.problem = 'no witness record';
      return false;
    }
  }

  /** Read what was appended since the last call. */
  catchUp(): void {
    if (!this.open()) return;
    for (;;) {
      let n = 0;
      try { n = readSync(this.fd, this.buf, 0, this.buf.length, this.offset); } catch { return; }
      if (n <= 0) break;
      this.offset += n;
      const text = this.partial + this.buf.toString('utf8', 0, n);
      const lines = text.split('\n');
      this.partial = lines.pop() ?? '';
      for (const l of lines) this.add(l);
    }
    this.prune();
  }

  private add(line: string): void {
    let r: RecordLine & { hb?: number };
    try { r = JSON.parse(line) as RecordLine; } catch { return; }
    if (r?.hb === 1 && typeof r.t === 'number') {
      if (r.t >= this.lastBeat) {
        this.lastBeat = r.t;
        const b = r as unknown as Partial<BeatInfo>;
        if (typeof b.enforce === 'boolean' && typeof b.dirs === 'number' && typeof b.files === 'number') {
          this.beatInfo = { enforce: b.enforce, dirs: b.dirs, files: b.files, names: b.names === true, namesWhy: typeof b.namesWhy === 'string' ? b.namesWhy : null };
        }
      }
      return;
    }
    if ((r as { name?: unknown }).name === 1) {
      const n = r as unknown as NameLine;
      if (typeof n.t !== 'number' || typeof n.path !== 'string' || typeof n.op !== 'string' || typeof n.pid !== 'number') return;
      const list = this.byName.get(n.path);
      if (list) list.push(n); else this.byName.set(n.path, [n]);
      return;
    }
    if (typeof r?.t !== 'number' || typeof r.dev !== 'number' || typeof r.ino !== 'number' || typeof r.pid !== 'number') return;
    const k = `${r.dev}:${r.ino}`;
    const list = this.byInode.get(k);
    if (list) list.push(r); else this.byInode.set(k, [r]);
    if (r.refused === true && r.t >= this.since && this.onRefused) this.onRefused(r);
  }

  private prune(): void {
    const cut = this.now() - JOIN_WINDOW_MS;
    for (const [k, list] of this.byInode) {
      const kept = list.filter((r) => r.t >= cut);
      if (kept.length === 0) this.byInode.delete(k); else if (kept.length !== list.length) this.byInode.set(k, kept);
    }
    const ncut = this.now() - NAME_WINDOW_MS;
    for (const [k, list] of this.byName) {
      const kept = list.filter((r) => r.t >= ncut && !r.used);
      if (kept.length === 0) this.byName.delete(k); else if (kept.length !== list.length) this.byName.set(k, kept);
    }
  }

  /**
   * Who did one of OPS to the name PATH, within NAME_WINDOW_MS before now: the newest such
   * record. Every matching record is then used up (this alert accounts for them), so a
   * later alert of the same path never takes an earlier actor. `waitMs`: how long to wait
   * for the record (the witness reads its event beside the guard, and may append a moment
   * after the guard has seen the change); 0 when the witness is not running.
   */
  lookupName(path: string, ops: readonly NameOp[], waitMs = 0): NameJoined | null {
    const deadline = this.now() + waitMs;
    for (;;) {
      this.catchUp();
      const cut = this.now() - NAME_WINDOW_MS;
      const list = (this.byName.get(path) ?? []).filter((r) => !r.used && r.t >= cut && ops.includes(r.op));
      if (list.length > 0) {
        for (const r of list) r.used = true;
        const last = list[list.length - 1]!;
        if ('gone' in last) {
          return { unknown: `the witness saw pid ${Number(last.pid)} ${OP_WORDS[last.op]} it, but that process had ${last.gone === 'reaped' ? 'exited and been reaped' : 'exited'} before the witness could read who it was (there is no permission event for this, so it is not held)` };
        }
        const others = new Set(list.filter((r) => r.pid !== last.pid).map((r) => r.pid)).size;
        const { t, name: _n, path: _p, ...w } = last as NameLine & Omit<Writer, 'time' | 'op'> & { used?: boolean };
        delete (w as { used?: boolean }).used;
        return { writer: { ...(w as Omit<Writer, 'time'>), time: new Date(t).toISOString() }, others };
      }
      if (this.now() >= deadline) return null;
      Atomics.wait(SLEEP, 0, 0, 5);
    }
  }

  /** The writer(s) of this inode within the window ending now: the newest, and how many other processes. */
  lookup(dev: number, ino: number): Joined | null {
    this.catchUp();
    const cut = this.now() - JOIN_WINDOW_MS;
    const list = (this.byInode.get(`${dev}:${ino}`) ?? []).filter((r) => r.t >= cut);
    if (list.length === 0) return null;
    const last = list[list.length - 1]!;
    const others = new Set(list.filter((r) => r.pid !== last.pid).map((r) => r.pid)).size;
    const { t, dev: _d, ino: _i, path: _p, ...w } = last;
    return { writer: { ...w, time: new Date(t).toISOString() }, others };
  }

  close(): void { if (this.fd >= 0) { try { closeSync(this.fd); } catch { /* closed */ } this.fd = -1; } }
}
