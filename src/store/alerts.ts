import { randomBytes } from 'node:crypto';
import { WardenError, errnoCode } from '../common/errors.js';
import { appendFileAt, readSmallAt } from '../fsx/beneath.js';
import type { Alert } from './alert-types.js';
import { ALERTS_FILE } from './layout.js';
import { NotInitialised, Store, type StoreFd } from './store.js';

let seq = 0;
/** Sortable, short and unique within a storm: base36 ms time, a counter, random bits. */
export function newAlertId(now = Date.now()): string {
  seq = (seq + 1) % 1296;
  return `${now.toString(36)}${seq.toString(36).padStart(2, '0')}-${randomBytes(2).toString('hex')}`;
}

/** Append and fsync one alert before anyone is told about it (SPEC §6). */
export function appendAlert(storeFd: StoreFd, alert: Alert): void {
  appendFileAt(storeFd, ALERTS_FILE, Buffer.from(JSON.stringify(alert) + '\n'));
}

/** Parse alerts.jsonl bytes. A torn or foreign line is skipped and counted, never fatal. */
export function parseAlerts(raw: Buffer | null): { alerts: Alert[]; skipped: number } {
  if (!raw) return { alerts: [], skipped: 0 };
  const alerts: Alert[] = [];
  let skipped = 0;
  for (const line of raw.toString('utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const a = JSON.parse(line) as Alert;
      if (typeof a.id === 'string' && typeof a.path === 'string') alerts.push(a); else skipped++;
    } catch { skipped++; }
  }
  return { alerts, skipped };
}

/**
 * All alerts of an open store, oldest first. Never follows a link or opens a FIFO; a store
 * whose alerts.jsonl is not a regular file is damage, said in plain words, never a crash.
 */
export function readStoreAlerts(storeFd: StoreFd, where: string): { alerts: Alert[]; skipped: number } {
  let raw: Buffer | null;
  try { raw = readSmallAt(storeFd, ALERTS_FILE, 512 * 1024 * 1024); }
  catch (err) {
    const code = errnoCode(err);
    const what = code === 'EINVAL' ? 'is not a regular file (the store is damaged; the running guard moves it into quarantine and recreates it)' : `cannot be read (${code ?? String(err)})`;
    throw new WardenError(`${where}/${ALERTS_FILE} ${what}`);
  }
  return parseAlerts(raw);
}

/** All alerts of a root, oldest first ([] before init). */
export function readAlerts(root: string): { alerts: Alert[]; skipped: number } {
  let store: Store;
  try { store = Store.open(root); }
  catch (err) {
    if (err instanceof NotInitialised) return { alerts: [], skipped: 0 };
    throw err;
  }
  try { return readStoreAlerts(store.fd, store.dir); } finally { store.close(); }
}
