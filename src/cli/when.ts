/**
 * Time windows as journalctl takes them: an ISO time (2026-12-01T09:00Z, 2026-12-01), an
 * age (30s, 10m, 2h, 7d, 1w), or a word: now, today, yesterday, tomorrow (midnight, local
 * time). Pure: `now` is given.
 */
import { EXIT, WardenError } from '../common/errors.js';

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 };

function midnight(now: number, days: number): number {
  const d = new Date(now);
  d.setHours(0, 0, 0, 0);
  d.setDate(d.getDate() + days);
  return d.getTime();
}

/** Milliseconds since the epoch; `flag` names the option in the error (`--since`). */
export function parseWhen(v: string, flag: string, now = Date.now()): number {
  const s = v.trim();
  const age = /^(\d+)\s*([smhdw])$/.exec(s);
  if (age) return now - Number(age[1]) * UNITS[age[2]!]!;
  const word = s.toLowerCase();
  if (word === 'now') return now;
  if (word === 'today') return midnight(now, 0);
  if (word === 'yesterday') return midnight(now, -1);
  if (word === 'tomorrow') return midnight(now, 1);
  const t = /^\d{4}-\d\d-\d\d/.test(s) ? Date.parse(s) : Number.NaN;
  if (Number.isNaN(t)) throw new WardenError(`${flag} ${JSON.stringify(v)}: give an ISO time (2026-12-01T09:00Z, 2026-12-01), today, yesterday, now or an age (30s, 10m, 2h, 7d)`, EXIT.usage);
  return t;
}

/** A window from --since/--until option values (either may be absent): a predicate on ISO or git dates. */
export function windowOf(values: Record<string, unknown>, now = Date.now()): (time: string) => boolean {
  const since = typeof values.since === 'string' ? parseWhen(values.since, '--since', now) : null;
  const until = typeof values.until === 'string' ? parseWhen(values.until, '--until', now) : null;
  if (since !== null && until !== null && until < since) throw new WardenError(`--until is before --since: the window is empty`, EXIT.usage);
  return (time) => {
    const t = Date.parse(time);
    return (since === null || t >= since) && (until === null || t < until);
  };
}

/** `-n N`: a positive whole number. */
export function parseCount(v: unknown, flag: string): number | null {
  if (v === undefined) return null;
  const s = String(v).trim();
  if (!/^\d+$/.test(s) || Number(s) < 1) throw new WardenError(`${flag} ${JSON.stringify(String(v))}: give a whole number of entries, 1 or more`, EXIT.usage);
  return Number(s);
}
