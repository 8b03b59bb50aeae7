/**
 * Incremental, read-only reading of an append-only JSONL file. No network imports.
 * The file may not exist yet, may end in a torn line (a writer mid-append), or may be
 * replaced or truncated (then we start again from 0; callers dedup by id).
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { errnoCode } from '../common/errors.js';

const CHUNK = 1 << 20;

function openNoFollow(path: string): number | null {
  try {
    // O_NOFOLLOW: a symlink swapped in for the outbox is not followed (and not our file).
    return openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR') return null;
    throw err;
  }
}

export class JsonlTail {
  private ino = -1;
  private offset = 0;
  /** Lines that were not JSON objects; counted, never fatal. */
  malformed = 0;

  constructor(readonly path: string) {}

  /** Restart from the beginning on the next read (e.g. after a config reload). */
  rewind(): void { this.ino = -1; this.offset = 0; }

  /** Continue at `offset` of the file with inode `ino` (another file: from its start). */
  seek(ino: number, offset: number): void { this.ino = ino; this.offset = offset; }

  /** The file being read (-1 before the first read) and where the next read starts. */
  position(): { ino: number; offset: number } { return { ino: this.ino, offset: this.offset }; }

  /** Every complete new line since the last call, parsed. */
  readNew(): unknown[] { return this.readNewEntries().map((e) => e.value); }

  /**
   * Like readNew, with the byte offset just after each record's line: a reader that has
   * dealt with every record up to there can resume at that offset (a watermark).
   * A malformed line yields no entry; it is counted.
   */
  readNewEntries(): { value: unknown; end: number; ino: number }[] {
    const fd = openNoFollow(this.path);
    if (fd === null) return [];
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return [];
      if (st.ino !== this.ino || st.size < this.offset) { this.ino = st.ino; this.offset = 0; }
      const out: { value: unknown; end: number; ino: number }[] = [];
      let carry = Buffer.alloc(0);
      let pos = this.offset;
      while (pos < st.size) {
        const buf = Buffer.alloc(Math.min(CHUNK, st.size - pos));
        const n = readSync(fd, buf, 0, buf.length, pos);
        if (n <= 0) break;
        pos += n;
        const data = carry.length ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
        const lastNl = data.lastIndexOf(0x0a);
        if (lastNl < 0) { carry = data; continue; }
        // Walk the newlines in bytes (not decoded text) so `end` is an exact file offset.
        for (let from = 0; from <= lastNl;) {
          const nl = data.indexOf(0x0a, from);
          const v = this.parse(data.subarray(from, nl).toString('utf8'));
          if (v !== undefined) out.push({ value: v, end: this.offset + nl + 1, ino: st.ino });
          from = nl + 1;
        }
        // Invariant: `data` starts at this.offset; only complete lines are consumed.
        this.offset += lastNl + 1;
        carry = data.subarray(lastNl + 1);
      }
      return out;
    } finally {
      closeSync(fd);
    }
  }

  private parse(line: string): unknown {
    if (!line.trim()) return undefined;
    try {
      const v: unknown = JSON.parse(line);
      if (v && typeof v === 'object' && !Array.isArray(v)) return v;
      this.malformed++;
    } catch { this.malformed++; }
    return undefined;
  }
}
