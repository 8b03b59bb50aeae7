/**
 * Where alerts go: alerts.jsonl first (append + fsync, docs/CONTRACT.md §Alerts), then the journal line and
 * the callback. An alert that cannot be appended yet (disk full) is kept in memory, written
 * first on the next alert and on every rescan, never dropped.
 *
 * Storms fold: per reason, the first FULL_PER_WINDOW alerts of a FOLD_WINDOW_MS
 * window are written one by one; the rest of that window become one alert with `count`
 * (how many it stands for) and a sample of paths, written when the window closes. So a
 * storm of 371,000 new files costs a few hundred lines, and every revert is still counted.
 * Every quarantine folder stays named by an alert line (docs/CONTRACT.md §Revert): a folded alert lists, by
 * id, path and folder, each alert it stands for that kept something (`folded`); one that
 * reaches FOLD_LISTED of them is written at once and the window goes on in a new one, so no
 * line grows without bound (the quarantine quota keeps such lines few).
 */
import { errnoCode } from '../common/errors.js';
import { grantLines } from '../grants/lines.js';
import { escapeText, nameText } from '../common/escape.js';
import type { Alert, AlertReason, FoldedAlert } from '../store/alert-types.js';
import { appendAlert, newAlertId } from '../store/alerts.js';
import { ALERT_PRIORITY } from '../store/journal-entry.js';
import { ALERTS_FILE } from '../store/layout.js';
import type { Store } from '../store/store.js';
import { adviceFor } from './classify.js';
import { describeBy, isWriter } from '../store/writer-words.js';

export const FOLD_WINDOW_MS = 10_000;
export const FULL_PER_WINDOW = 100;
const SAMPLE_PATHS = 10;
/** At most this many folded alerts with a quarantine folder are listed in one line. */
export const FOLD_LISTED = 500;

interface Fold { first: Alert; count: number; paths: Set<string>; notKept: number; listed: FoldedAlert[] }

export class AlertSink {
  private readonly unwritten: Alert[] = [];
  count = 0;
  private windowStart = 0;
  private readonly perReason = new Map<string, number>();
  private readonly folds = new Map<string, Fold>();
  private foldTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: Store,
    /** The journal line of each alert, with the alert itself (the daemon sends it as a structured entry). */
    private readonly log: (line: string, alert?: Alert) => void,
    private readonly onAlert: (a: Alert) => void,
    /** Repair a damaged layout entry (a directory at alerts.jsonl); true when it did. */
    private readonly repair: (name: string) => boolean = () => false,
    private readonly now: () => number = Date.now,
    /** An alert could not be appended and is kept in memory (owed.ts writes it when there is room). */
    private readonly keptBack: () => void = () => {},
  ) {}

  /** Durable first, then the journal line and the callback; folded when its reason storms. */
  record(alert: Alert, notKept = false): void {
    this.count++;
    const t = this.now();
    if (t - this.windowStart >= FOLD_WINDOW_MS) { this.closeWindow(); this.windowStart = t; }
    const key = `${alert.action}/${alert.reason}`;
    const n = this.perReason.get(key) ?? 0;
    this.perReason.set(key, n + 1);
    if (n < FULL_PER_WINDOW) { this.write(alert); return; }
    let f = this.folds.get(key);
    if (!f) { f = { first: alert, count: 0, paths: new Set(), notKept: 0, listed: [] }; this.folds.set(key, f); }
    f.count++;
    if (notKept) f.notKept++;
    if (f.paths.size < SAMPLE_PATHS) f.paths.add(alert.path);
    if (alert.quarantine) f.listed.push({ id: alert.id, path: alert.path, quarantine: alert.quarantine });
    if (f.listed.length >= FOLD_LISTED) { this.folds.delete(key); this.writeFold(f); }
    if (!this.foldTimer) {
      this.foldTimer = setTimeout(() => { this.foldTimer = null; this.closeWindow(); }, Math.max(10, this.windowStart + FOLD_WINDOW_MS - t));
      this.foldTimer.unref?.();
    }
  }

  /** Write one alert per folded reason of the window that ends. */
  closeWindow(): void {
    if (this.foldTimer) { clearTimeout(this.foldTimer); this.foldTimer = null; }
    const folds = [...this.folds.values()];
    this.folds.clear();
    this.perReason.clear();
    this.windowStart = this.now();
    for (const f of folds) this.writeFold(f);
  }

  /** One folded alert: a fresh id of its own, the count, sample paths and every kept folder. */
  private writeFold(f: Fold): void {
    const paths = [...f.paths];
    const more = f.count - paths.length;
    const kept = f.notKept ? `; ${f.notKept} of them not kept in quarantine (quarantine quota reached)` : '';
    // The first alert's own findings (credential keys, grants, who) are not the fold's: `warden diff ID` of each says them.
    const { credential_changes: _c, by: _b, grants: _g, grants_summary: _gs, grants_left_off: _gl, also, ...first } = f.first;
    this.write({
      ...first, ...(also ? { also } : {}), id: newAlertId(), time: new Date().toISOString(), count: f.count,
      path: commonDir(paths), before: null, after: null, quarantine: null,
      ...(f.listed.length ? { folded: f.listed } : {}),
      detail: `${f.count} more ${f.first.reason} alert(s) folded into this one (storm; more than ${FULL_PER_WINDOW} in ${FOLD_WINDOW_MS / 1000} s): ${paths.join(', ')}${more > 0 ? ` and ${more} more` : ''}${kept}`,
      // The first folded alert's advice names its own id, which has no line of its own.
      advice: f.listed.length
        ? `Each alert folded here that kept content is listed with its own id and quarantine folder ('warden alerts' shows them): 'warden diff ID' shows what it rejected, 'warden accept ID' proposes it again.`
        : `The alerts folded here kept no content. See 'warden alerts' and 'warden why ${commonDir(paths)}'.`,
    });
  }

  private write(alert: Alert): void {
    this.unwritten.push(alert);
    try {
      this.flushOrRepair();
    } catch (err) {
      this.log(`<2>warden: cannot append to ${this.store.label(ALERTS_FILE)} (${errnoCode(err) ?? err}); alert ${alert.id} kept in memory and retried`);
      this.keptBack();
    }
    this.log(journalLine(alert), alert);
    this.onAlert(alert);
  }

  /** alerts.jsonl that is not a file (say a directory was planted there) is moved aside and recreated. */
  private flushOrRepair(): void {
    try {
      this.flush();
    } catch (err) {
      if (!this.repair(ALERTS_FILE)) throw err;
      this.flush();
    }
  }

  /** An alert that reverts nothing: tamper, a degraded watcher. */
  flag(reason: AlertReason, path: string, detail: string): void {
    const id = newAlertId();
    this.record({
      id, time: new Date().toISOString(), path, action: 'flagged', reason, before: null, after: null,
      quarantine: null, detail, advice: adviceFor(path, reason, id, null),
    });
  }

  /** Alerts that could not be appended yet. */
  pending(): number {
    return this.unwritten.length;
  }

  /** Write what is waiting; throws when the store still refuses (the caller logs). */
  flush(): void {
    while (this.unwritten.length) {
      appendAlert(this.store.fd, this.unwritten[0] as Alert);
      this.unwritten.shift();
    }
  }

  /** At stop: write what is folded, then say which alerts never became durable. */
  reportUnwritten(): void {
    try { this.closeWindow(); } catch { /* kept in unwritten */ }
    if (this.unwritten.length) this.log(`<2>warden: ${this.unwritten.length} alert(s) could not be written to ${this.store.label(ALERTS_FILE)}: ${this.unwritten.map((a) => a.id).join(', ')}`);
  }
}

function commonDir(paths: string[]): string {
  if (paths.length === 0) return '.';
  let prefix = paths[0]!.split('/').slice(0, -1);
  for (const p of paths.slice(1)) {
    const parts = p.split('/').slice(0, -1);
    let i = 0;
    while (i < prefix.length && prefix[i] === parts[i]) i++;
    prefix = prefix.slice(0, i);
  }
  return paths.length === 1 ? paths[0]! : (prefix.join('/') || '.');
}

/** sd-daemon style: "<N>" priority prefix, picked up by journald from stderr. One line: every field is escaped. */
export function journalLine(a: Alert): string {
  return escapeText(rawJournalLine(a));
}

function rawJournalLine(a: Alert): string {
  const keys = a.credential_changes?.length ? ` keys: ${a.credential_changes.map((c) => `${c.group}.${c.key} ${c.before ?? '-'}→${c.after ?? '-'}`).join(', ')};` : '';
  const extra = a.also?.length ? ` (+${a.also.join(', ')})` : '';
  const count = a.count && a.count > 1 ? ` (${a.count} alerts folded)` : '';
  const detail = a.detail ? ` ${a.detail}.` : '';
  const by = isWriter(a.by) ? ` ${describeBy(a.by)}.` : '';
  const granted = Array.isArray(a.grants) && a.grants.length ? ` It granted: ${grantLines({ grants: a.grants, left_off: a.grants_left_off }, 2).join('; ')}.` : '';
  return `<${ALERT_PRIORITY[a.action] ?? 4}>warden: ${a.action} ${nameText(a.path)}: ${a.reason}${extra}${count};${keys} alert ${a.id}.${granted}${by}${detail} ${a.advice}`;
}
