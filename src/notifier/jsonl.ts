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

  /** Every complete new line since the last call, parsed. */
  readNew(): unknown[] {
    const fd = openNoFollow(this.path);
    if (fd === null) return [];
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) return [];
      if (st.ino !== this.ino || st.size < this.offset) { this.ino = st.ino; this.offset = 0; }
      const out: unknown[] = [];
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
        for (const line of data.subarray(0, lastNl).toString('utf8').split('\n')) this.parse(line, out);
        // Invariant: `data` starts at this.offset; only complete lines are consumed.
        this.offset += lastNl + 1;
        carry = data.subarray(lastNl + 1);
      }
      return out;
    } finally {
      closeSync(fd);
    }
  }

  private parse(line: string, out: unknown[]): void {
    if (!line.trim()) return;
    try {
      const v: unknown = JSON.parse(line);
      if (v && typeof v === 'object' && !Array.isArray(v)) out.push(v); else this.malformed++;
    } catch { this.malformed++; }
  }
}

/** The whole file, parsed; [] when it does not exist. */
export function readJsonl(path: string): { records: unknown[]; malformed: number } {
  const t = new JsonlTail(path);
  const records = t.readNew();
  return { records, malformed: t.malformed };
}
