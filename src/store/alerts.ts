import { randomBytes } from 'node:crypto';
import { appendFileAt, ensureDirBeneath, openRoot, readRangeAt, safeClose, withDir } from '../fsx/beneath.js';
import type { Alert } from './alert-types.js';
import { ALERTS_FILE, SNAPSHOTS } from './layout.js';

let seq = 0;
/** Sortable, short and unique within a storm: base36 ms time, a counter, random bits. */
export function newAlertId(now = Date.now()): string {
  seq = (seq + 1) % 1296;
  return `${now.toString(36)}${seq.toString(36).padStart(2, '0')}-${randomBytes(2).toString('hex')}`;
}

/** Append and fsync one alert before anyone is told about it (SPEC §6). */
export function appendAlert(rootFd: number, alert: Alert): void {
  const fd = ensureDirBeneath(rootFd, SNAPSHOTS);
  try {
    appendFileAt(fd, 'alerts.jsonl', Buffer.from(JSON.stringify(alert) + '\n'));
  } finally {
    safeClose(fd);
  }
}

const ALERTS_NAME = ALERTS_FILE.slice(SNAPSHOTS.length + 1);
const CHUNK = 1 << 20;

export interface AlertsRead {
  alerts: Alert[];
  /** Lines that were not alerts (torn by a crash mid-append, or foreign): skipped, never fatal. */
  skipped: number;
  /** Where the next read starts: just after the last complete line. */
  offset: number;
}

function parseLines(text: string, into: AlertsRead): void {
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const a = JSON.parse(line) as Alert;
      if (a && typeof a.id === 'string' && typeof a.path === 'string') into.alerts.push(a); else into.skipped++;
    } catch { into.skipped++; }
  }
}

/** Run fn with the snapshots/ directory, beneath the root without following links; null if absent. */
function inSnapshots<T>(root: string, fn: (dirFd: number) => T): T | null {
  const rootFd = openRoot(root);
  try { return withDir(rootFd, SNAPSHOTS, fn, () => null); } finally { safeClose(rootFd); }
}

/**
 * The alerts appended since `offset` (0: all), oldest first, read in 1 MiB pieces: memory
 * follows what is returned, not the file's size. A torn last line is left for the next read.
 */
export function readAlertsFrom(root: string, offset = 0): AlertsRead {
  const out: AlertsRead = { alerts: [], skipped: 0, offset };
  inSnapshots(root, (dirFd) => {
    let carry: Buffer = Buffer.alloc(0);
    let pos = offset;
    for (;;) {
      const r = readRangeAt(dirFd, ALERTS_NAME, pos, CHUNK);
      if (!r || r.bytes.length === 0) break;
      pos += r.bytes.length;
      const data = carry.length ? Buffer.concat([carry, r.bytes]) : r.bytes;
      const nl = data.lastIndexOf(0x0a);
      if (nl < 0) { carry = data; continue; }
      parseLines(data.subarray(0, nl).toString('utf8'), out);
      out.offset += nl + 1;
      carry = Buffer.from(data.subarray(nl + 1));
    }
  });
  return out;
}

/** All alerts, oldest first (see readAlertsFrom). */
export function readAlerts(root: string): { alerts: Alert[]; skipped: number } {
  const r = readAlertsFrom(root, 0);
  return { alerts: r.alerts, skipped: r.skipped };
}

/** The newest `n` alerts, oldest first, read backwards from the end of the file. */
export function lastAlerts(root: string, n: number): Alert[] {
  return inSnapshots(root, (dirFd) => {
    const found: Alert[] = [];
    const st = readRangeAt(dirFd, ALERTS_NAME, 0, 0);
    if (!st) return found;
    let end = st.size;
    let tail: Buffer = Buffer.alloc(0);
    while (end > 0 && found.length < n) {
      const start = Math.max(0, end - CHUNK);
      const r = readRangeAt(dirFd, ALERTS_NAME, start, end - start);
      if (!r) break;
      const data = Buffer.concat([r.bytes, tail]);
      // Everything after the first newline is whole lines (unless start is 0: then all is).
      const first = start === 0 ? -1 : data.indexOf(0x0a);
      if (first < 0 && start > 0) { tail = data; end = start; continue; } // one line longer than a piece
      const whole = data.subarray(first + 1);
      const lines = whole.toString('utf8').split('\n').filter((l) => l.trim());
      for (let i = lines.length - 1; i >= 0 && found.length < n; i--) {
        const tmp: AlertsRead = { alerts: [], skipped: 0, offset: 0 };
        parseLines(lines[i]!, tmp);
        if (tmp.alerts[0]) found.push(tmp.alerts[0]);
      }
      tail = Buffer.from(data.subarray(0, first + 1));
      end = start;
    }
    return found.reverse();
  }) ?? [];
}
