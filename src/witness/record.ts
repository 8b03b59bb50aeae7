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
import type { Writer } from '../store/alert-types.js';

export const RECORD_NAME = 'record.jsonl';
export const WITNESS_STATE_NAME = 'warden-witness';
/** A record older than this is never joined to an alert (inode numbers are reused). */
export const JOIN_WINDOW_MS = 10 * 60_000;
/** Rotated (to record.jsonl.1) at start when larger. */
const ROTATE_BYTES = 16 * 1024 * 1024;

export interface RecordLine extends Omit<Writer, 'time'> { t: number; dev: number; ino: number; path: string }

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
export interface BeatInfo { enforce: boolean; dirs: number; files: number }

export function beatLine(now = Date.now(), info?: BeatInfo): string { return JSON.stringify({ t: now, hb: 1, pid: process.pid, ...(info ?? {}) }) + '\n'; }

export interface Joined { writer: Writer; others: number }

/** Reads the record from where it last stopped; holds the lines of the join window, by device and inode. */
export class RecordReader {
  private fd = -1;
  private offset = 0;
  private partial = '';
  private readonly byInode = new Map<string, RecordLine[]>();
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
        if (typeof b.enforce === 'boolean' && typeof b.dirs === 'number' && typeof b.files === 'number') this.beatInfo = { enforce: b.enforce, dirs: b.dirs, files: b.files };
      }
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
