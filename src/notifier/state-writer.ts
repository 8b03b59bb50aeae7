/**
 * Writes the notifier's delivery state incrementally. Each write appends one line to
 * delivery-state.log: the changes since the last write (a diff of the state against what
 * was last written), so a delivery costs the same few hundred bytes however much state is
 * in flight. When the log outgrows max(compactBytes, 2 × the last snapshot) it is folded
 * into delivery-state.json (atomic replace, then the log is removed), so the snapshot's
 * bytes amortise to at most half a record per write. Writes are coalesced (a write in
 * progress absorbs every change made meanwhile; the last write carries the newest state).
 *
 * Crash safety: a kill during an append leaves a torn last line, which loadState skips
 * (that write's deliveries are sent again: at-least-once, as before). A kill during a
 * compaction leaves either the old snapshot and the whole log, or the new snapshot (whose
 * log_seq says which records it holds) and a log whose records are all skipped: nothing is
 * lost and nothing is applied twice. An error is reported once.
 */
import {
  appendStateLog, loadState, removeStateLog, saveStateFile, type NotifierStateFile, type StateOp,
} from './delivery-state.js';

export interface StateWriterOptions {
  /** The log may grow to this many bytes (or twice the snapshot, if larger) before it is compacted. */
  compactBytes?: number;
}

const DEFAULT_COMPACT_BYTES = 256 * 1024;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The changes that turn `from` into `to`: keys removed, added or changed, as deep as both sides are objects. Pure. */
export function diffState(from: unknown, to: unknown, path: string[] = [], out: StateOp[] = []): StateOp[] {
  if (!isObject(from) || !isObject(to)) {
    if (JSON.stringify(from) !== JSON.stringify(to)) out.push(to === undefined ? [path] : [path, to]);
    return out;
  }
  for (const k of Object.keys(from)) if (!Object.hasOwn(to, k) || to[k] === undefined) { if (from[k] !== undefined) out.push([[...path, k]]); }
  for (const [k, v] of Object.entries(to)) {
    if (v === undefined) continue;
    if (!Object.hasOwn(from, k) || from[k] === undefined) out.push([[...path, k], v]);
    else diffState(from[k], v, [...path, k], out);
  }
  return out;
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

export class StateWriter {
  private writing: Promise<void> | null = null;
  private dirty = false;
  private complained = false;
  /** The state as the files hold it now (snapshot + log), or null before the first compaction. */
  private written: NotifierStateFile | null = null;
  private seq = 0;
  private logBytes = 0;
  private snapshotBytes = 0;
  /** load() found no snapshot: a log there is from an unknown past and goes before the first snapshot is written. */
  private orphanLog = true;
  /** Compact at the next write: at start, at stop, and after an append failed part-way. */
  private compactNext = true;
  private readonly compactBytes: number;

  constructor(
    private readonly stateDir: string,
    private readonly root: string,
    private readonly state: () => NotifierStateFile,
    private readonly log: (line: string) => void,
    opts: StateWriterOptions = {},
  ) {
    this.compactBytes = opts.compactBytes ?? DEFAULT_COMPACT_BYTES;
  }

  /** The state the files hold (snapshot with the log replayed), or null; the first save() compacts it. */
  load(): NotifierStateFile | null {
    const l = loadState(this.stateDir, this.root);
    this.orphanLog = !l;
    if (!l) return null;
    if (l.skipped) this.log(`notify: ignored ${l.skipped} incomplete or damaged line(s) in the delivery log of ${this.stateDir} (their deliveries may be sent again)`);
    this.seq = l.seq;
    this.logBytes = l.logBytes;
    return l.state;
  }

  /** Something changed that must reach the files; resolves once a write including it is done. */
  save(): Promise<void> {
    this.dirty = true;
    if (!this.writing) {
      this.writing = (async () => {
        while (this.dirty) {
          this.dirty = false;
          const st = this.state();
          st.updated = new Date().toISOString();
          try { await this.write(st); } catch (err) {
            if (!this.complained) this.log(`notify: cannot write delivery state in ${this.stateDir}: ${(err as Error).message}`);
            this.complained = true;
          }
        }
        this.writing = null;
      })();
    }
    return this.writing;
  }

  /** Fold the log into the snapshot at the next write and make that write now (e.g. at stop). */
  compact(): Promise<void> {
    this.compactNext = true;
    return this.save();
  }

  /** A change that may wait for the next write (the tick flushes it). */
  mark(): void { this.dirty = true; }

  /** Unwritten changes and no write running: the caller should save(). */
  get pending(): boolean { return this.dirty && !this.writing; }

  private async write(st: NotifierStateFile): Promise<void> {
    const now = clone(st);
    delete now.log_seq; // the snapshot's own bookkeeping, never a change to log
    if (!this.compactNext && this.written) {
      const ops = diffState(this.written, now);
      if (ops.length === 0) return;
      const line = Buffer.from(JSON.stringify({ seq: this.seq + 1, ops }) + '\n');
      try { appendStateLog(this.stateDir, this.root, line, this.logBytes === 0); } catch (err) {
        // Part of the line may be in the log: never append after it; the next write compacts.
        this.compactNext = true;
        throw err;
      }
      this.seq++;
      this.logBytes += line.length;
      this.written = now;
      if (this.logBytes <= Math.max(this.compactBytes, 2 * this.snapshotBytes)) return;
    }
    // Compaction: the snapshot takes in every record so far, then the log goes.
    this.compactNext = true;
    if (this.orphanLog) { removeStateLog(this.stateDir, this.root); this.orphanLog = false; }
    const snapshot = { ...now, log_seq: this.seq };
    await saveStateFile(this.stateDir, snapshot, this.root);
    this.snapshotBytes = JSON.stringify(snapshot).length + 1;
    removeStateLog(this.stateDir, this.root);
    this.logBytes = 0;
    this.written = now;
    this.compactNext = false;
  }
}
