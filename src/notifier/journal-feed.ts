/**
 * Reading warden's alerts back from the system journal (the entries the guard writes,
 * store/journal-entry.ts), for the owner's desktop unit (desktop-feed.ts). Pure.
 *
 * Any local user can write a journal entry with any WARDEN_* field it likes; what it cannot
 * forge are journald's trusted fields (underscore-prefixed, filled in by journald from the
 * sender's credentials and cgroup). An entry is taken only when `_SYSTEMD_UNIT` is the
 * guard's system unit and `_UID` the guard's account: a user unit shows up as
 * `_SYSTEMD_USER_UNIT` with `_SYSTEMD_UNIT=user@UID.service`, never as warden-guard.service.
 */
import type { Alert } from '../store/alert-types.js';
import { ALERT_FIELD, ROOT_ID_FIELD } from '../store/journal-entry.js';

export interface FeedSource {
  /** The guard's system unit, e.g. warden-guard.service. */
  unit: string;
  /** The guard's uid. */
  uid: number;
  /** The root's identity (store/location.ts rootId). */
  rootId: string;
}

/** journalctl's arguments: follow the guard's entries for this root, as JSON, after a cursor (or from now). */
export function journalctlArgs(src: FeedSource, cursor: string | null): string[] {
  return ['--follow', '--output=json', '--all', '--no-pager', '--quiet',
    ...(cursor ? [`--after-cursor=${cursor}`] : ['--lines=0']),
    `_SYSTEMD_UNIT=${src.unit}`, `_UID=${src.uid}`, `${ROOT_ID_FIELD}=${src.rootId}`];
}

export interface FeedEntry { cursor: string; alert: Alert | null }

/** One line of `journalctl -o json`: its cursor, and its alert when it is a genuine one for this root. */
export function parseFeedLine(line: string, src: FeedSource): FeedEntry | null {
  let e: Record<string, unknown>;
  try { e = JSON.parse(line) as Record<string, unknown>; } catch { return null; }
  if (!e || typeof e !== 'object' || typeof e.__CURSOR !== 'string') return null;
  const cursor = e.__CURSOR;
  const genuine = e._SYSTEMD_UNIT === src.unit && e._UID === String(src.uid) && e[ROOT_ID_FIELD] === src.rootId;
  const raw = e[ALERT_FIELD];
  if (!genuine || typeof raw !== 'string') return { cursor, alert: null };
  try {
    const a = JSON.parse(raw) as Alert;
    const ok = a && typeof a === 'object' && typeof a.id === 'string' && typeof a.path === 'string'
      && typeof a.action === 'string' && typeof a.reason === 'string';
    return { cursor, alert: ok ? a : null };
  } catch {
    return { cursor, alert: null };
  }
}

/** The journalctl hint that means "you see only your own journal". */
export function noSystemJournal(stderr: string): boolean {
  return /not seeing messages from other users and the system|insufficient permissions/i.test(stderr);
}
