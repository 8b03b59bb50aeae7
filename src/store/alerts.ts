import { randomBytes } from 'node:crypto';
import { readPruned } from './prune.js';
import type { PruneRecord } from './budget.js';
import { WardenError, errnoCode } from '../common/errors.js';
import { appendFileAt, readRangeAt } from '../fsx/beneath.js';
import type { Alert } from './alert-types.js';
import { ALERTS_FILE } from './layout.js';
import { NotInitialised, Store, type StoreFd } from './store.js';

let seq = 0;
/** Sortable, short and unique within a storm: base36 ms time, a counter, random bits. */
export function newAlertId(now = Date.now()): string {
  seq = (seq + 1) % 1296;
  return `${now.toString(36)}${seq.toString(36).padStart(2, '0')}-${randomBytes(2).toString('hex')}`;
}

/** Append and fsync one alert before anyone is told about it (docs/CONTRACT.md §Alerts). */
export function appendAlert(storeFd: StoreFd, alert: Alert): void {
  appendFileAt(storeFd, ALERTS_FILE, Buffer.from(JSON.stringify(alert) + '\n'));
}

/**
 * The alert with this id: a line of its own, or one a folded alert lists (docs/CONTRACT.md §Revert: every
 * quarantine folder is named by an alert line). A folded member is the folded alert with
 * the member's id, path and quarantine, and `folded_into` naming the line.
 */
export function findAlert(alerts: readonly Alert[], id: string): Alert | undefined {
  for (let i = alerts.length - 1; i >= 0; i--) {
    const a = alerts[i] as Alert;
    if (a.id === id) return a;
    const m = Array.isArray(a.folded) ? a.folded.find((f) => f && f.id === id) : undefined;
    if (m) {
      const { folded: _f, count: _c, ...rest } = a;
      return { ...rest, id: m.id, path: m.path, quarantine: m.quarantine, folded_into: a.id };
    }
  }
  return undefined;
}

const CHUNK = 1 << 20;

export interface AlertsRead {
  alerts: Alert[];
  /** Lines that were not alerts (torn by a crash mid-append, or foreign): skipped, never fatal. */
  skipped: number;
  /** Where the next read starts: just after the last complete line. */
  offset: number;
}

function parseLines(text: string, into: { alerts: Alert[]; skipped: number }): void {
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const a = JSON.parse(line) as Alert;
      if (a && typeof a.id === 'string' && typeof a.path === 'string') into.alerts.push(a); else into.skipped++;
    } catch { into.skipped++; }
  }
}

/**
 * Read a range of alerts.jsonl. Never follows a link or opens a FIFO; a store whose
 * alerts.jsonl is not a regular file is damage, said in plain words, never a crash.
 */
function range(storeFd: StoreFd, where: string, pos: number, len: number): { bytes: Buffer; size: number } | null {
  try { return readRangeAt(storeFd, ALERTS_FILE, pos, len); }
  catch (err) {
    const code = errnoCode(err);
    const what = code === 'EINVAL' ? 'is not a regular file (the store is damaged; the running guard moves it into quarantine and recreates it)' : `cannot be read (${code ?? String(err)})`;
    throw new WardenError(`${where}/${ALERTS_FILE} ${what}`);
  }
}

/** Run fn with the root's store; null before init. */
/** What the store budget pruned, by alert id (docs/CONTRACT.md §Store budget); empty before init. */
export function prunedOf(root: string): Map<string, PruneRecord> {
  return withStore(root, (s) => readPruned(s.fd)) ?? new Map();
}

function withStore<T>(root: string, fn: (store: Store) => T): T | null {
  let store: Store;
  try { store = Store.open(root); }
  catch (err) { if (err instanceof NotInitialised) return null; throw err; }
  try { return fn(store); } finally { store.close(); }
}

/**
 * The alerts of an open store appended since `offset` (0: all), oldest first, read in 1 MiB
 * pieces: memory follows what is returned, not the file's size. A torn last line is left
 * for the next read.
 */
export function readStoreAlertsFrom(storeFd: StoreFd, where: string, offset = 0): AlertsRead {
  const out: AlertsRead = { alerts: [], skipped: 0, offset };
  let carry: Buffer = Buffer.alloc(0);
  let pos = offset;
  for (;;) {
    const r = range(storeFd, where, pos, CHUNK);
    if (!r || r.bytes.length === 0) break;
    pos += r.bytes.length;
    const data = carry.length ? Buffer.concat([carry, r.bytes]) : r.bytes;
    const nl = data.lastIndexOf(0x0a);
    if (nl < 0) { carry = data; continue; }
    parseLines(data.subarray(0, nl).toString('utf8'), out);
    out.offset += nl + 1;
    carry = Buffer.from(data.subarray(nl + 1));
  }
  return out;
}

/** All alerts of an open store, oldest first. */
export function readStoreAlerts(storeFd: StoreFd, where: string): { alerts: Alert[]; skipped: number } {
  const r = readStoreAlertsFrom(storeFd, where, 0);
  return { alerts: r.alerts, skipped: r.skipped };
}

/** The root's alerts since `offset`, oldest first (nothing before init). */
export function readAlertsFrom(root: string, offset = 0): AlertsRead {
  return withStore(root, (s) => readStoreAlertsFrom(s.fd, s.dir, offset)) ?? { alerts: [], skipped: 0, offset };
}

/** All alerts of a root, oldest first ([] before init). */
export function readAlerts(root: string): { alerts: Alert[]; skipped: number } {
  const r = readAlertsFrom(root, 0);
  return { alerts: r.alerts, skipped: r.skipped };
}

/** The newest `n` alerts, oldest first, read backwards from the end of the file. */
export function lastAlerts(root: string, n: number): Alert[] {
  return withStore(root, (store) => {
    const found: Alert[] = [];
    const st = range(store.fd, store.dir, 0, 0);
    if (!st) return found;
    let end = st.size;
    let tail: Buffer = Buffer.alloc(0);
    while (end > 0 && found.length < n) {
      const start = Math.max(0, end - CHUNK);
      const r = range(store.fd, store.dir, start, end - start);
      if (!r) break;
      const data = Buffer.concat([r.bytes, tail]);
      // Everything after the first newline is whole lines (unless start is 0: then all is).
      const first = start === 0 ? -1 : data.indexOf(0x0a);
      if (first < 0 && start > 0) { tail = data; end = start; continue; } // one line longer than a piece
      const whole = data.subarray(first + 1);
      const lines = whole.toString('utf8').split('\n').filter((l) => l.trim());
      for (let i = lines.length - 1; i >= 0 && found.length < n; i--) {
        const tmp = { alerts: [] as Alert[], skipped: 0 };
        parseLines(lines[i]!, tmp);
        if (tmp.alerts[0]) found.push(tmp.alerts[0]);
      }
      tail = Buffer.from(data.subarray(0, first + 1));
      end = start;
    }
    return found.reverse();
  }) ?? [];
}
