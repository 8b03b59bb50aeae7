import { randomBytes } from 'node:crypto';
import { appendFileAt, ensureDirBeneath, openRoot, readSmallAt, safeClose, walkDir } from '../fsx/beneath.js';
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

/** All alerts, oldest first. A torn or foreign line is skipped and counted, never fatal. */
export function readAlerts(root: string): { alerts: Alert[]; skipped: number } {
  // Read beneath the root without following links: alerts.jsonl could be swapped for a FIFO.
  const rootFd = openRoot(root);
  let raw: Buffer | null = null;
  try {
    const w = walkDir(rootFd, SNAPSHOTS);
    if (!w.ok) { safeClose(w.parentFd); return { alerts: [], skipped: 0 }; }
    try { raw = readSmallAt(w.fd, ALERTS_FILE.slice(SNAPSHOTS.length + 1), 512 * 1024 * 1024); } finally { safeClose(w.fd); }
  } finally {
    safeClose(rootFd);
  }
  if (!raw) return { alerts: [], skipped: 0 };
  const text = raw.toString('utf8');
  const alerts: Alert[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const a = JSON.parse(line) as Alert;
      if (typeof a.id === 'string' && typeof a.path === 'string') alerts.push(a); else skipped++;
    } catch { skipped++; }
  }
  return { alerts, skipped };
}
