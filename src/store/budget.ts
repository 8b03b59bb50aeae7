/**
 * The store's size budget (docs/CONTRACT.md §Store budget), the pure part: which quarantine
 * entries to prune, and the record each pruned content leaves behind. The I/O is prune.ts.
 */

/**
 * One entry of quarantine/: its name (an alert id), what it costs on disk, and how much of
 * that is held rather than kept: an object moved there whole (a directory, link, FIFO) and
 * anything in it that is not a regular file of warden's. Pruning never frees held bytes.
 */
export interface QuarantineEntry { name: string; cost: number; held: number }

/**
 * What a pruned content was, one JSON line each in the store's pruned.jsonl (appended and
 * fsynced before the content is removed): the alert line that kept it stays as it was.
 */
export interface PruneRecord {
  /** The alert id (the name of the quarantine entry). */
  id: string;
  /** The name the content had in the entry (the rejected file's name; the id itself for a flat entry). */
  name: string;
  /** When it was pruned (ISO 8601). */
  time: string;
  size: number;
  /** sha256 of the content as it was pruned; null when it could not be read. */
  sha256: string | null;
}

/** An alert id (alerts.ts newAlertId): base-36 milliseconds and a sequence, a dash, 4 hex digits. */
const ALERT_ID = /^[0-9a-z]{8,14}-[0-9a-f]{4}$/;

/** Only entries named like an alert are warden's quarantine entries; anything else is never pruned. */
export function isEntryName(name: string): boolean {
  return ALERT_ID.test(name);
}

/** Oldest first: an id starts with its time in base 36 (fixed width for decades), so by length, then text. */
export function oldestFirst(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}

/** What the budget weighs: the store's use less what is held (a rename moved those bytes; it added none). */
export function weighed(used: number, entries: readonly QuarantineEntry[]): number {
  return used - entries.reduce((n, e) => n + e.held, 0);
}

/**
 * The entries to prune, oldest first, until what the budget weighs is at most `budget`:
 * never a newer one before an older one. `entries` is oldest first. An entry that is all
 * held frees nothing and is passed over, so no kept content goes for bytes pruning cannot free.
 */
export function planPrune(entries: readonly QuarantineEntry[], used: number, budget: number): QuarantineEntry[] {
  const out: QuarantineEntry[] = [];
  let left = weighed(used, entries);
  for (const e of entries) {
    if (left <= budget) break;
    const frees = e.cost - e.held;
    if (frees <= 0) continue;
    out.push(e);
    left -= frees;
  }
  return out;
}

export function prunedLine(r: PruneRecord): string {
  return JSON.stringify(r) + '\n';
}

/** The records of pruned.jsonl by alert id (the last one of an id wins); damaged lines are skipped. */
export function parsePruned(text: string): Map<string, PruneRecord> {
  const out = new Map<string, PruneRecord>();
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    let v: unknown;
    try { v = JSON.parse(line); } catch { continue; }
    const r = v as Partial<PruneRecord> | null;
    if (!r || typeof r.id !== 'string' || typeof r.time !== 'string' || typeof r.size !== 'number' || typeof r.name !== 'string') continue;
    out.set(r.id, { id: r.id, name: r.name, time: r.time, size: r.size, sha256: typeof r.sha256 === 'string' ? r.sha256 : null });
  }
  return out;
}

/** How an alert's kept content reads once pruned. */
export function prunedNote(r: PruneRecord): string {
  return `content pruned at ${r.time}, ${r.size} bytes, sha256 ${r.sha256 ?? 'unknown'}`;
}

/** 512 MiB, 1.5 KiB, 300 B. */
export function sizeText(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return i === 0 ? `${n} B` : `${v >= 100 || Number.isInteger(v) ? Math.round(v) : v.toFixed(1)} ${units[i]}`;
}

/** The one notice when pruning starts (the owner is told once, not per entry). */
export function pruningNotice(used: number, budget: number, entries: number, bytes: number): string {
  return `the store reached its size budget (store_max_bytes = ${budget}, ${sizeText(budget)}; ${sizeText(used)} used): `
    + `the oldest quarantined content is pruned first from now on (now ${entries} entr${entries === 1 ? 'y' : 'ies'}, ${sizeText(bytes)}); `
    + `each alert line stays and 'warden alerts' says what was pruned (when, size, sha256)`;
}
