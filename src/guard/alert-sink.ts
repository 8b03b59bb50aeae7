/**
 * Where alerts go: alerts.jsonl first (append + fsync, SPEC §6), then the journal line and
 * the callback. An alert that cannot be appended yet (disk full) is kept in memory, written
 * first on the next alert and on every rescan, never dropped.
 */
import { errnoCode } from '../common/errors.js';
import { escapeText } from '../common/escape.js';
import type { Alert, AlertReason } from '../store/alert-types.js';
import { appendAlert, newAlertId } from '../store/alerts.js';
import { adviceFor } from './classify.js';

export class AlertSink {
  private readonly unwritten: Alert[] = [];
  count = 0;

  constructor(
    private readonly rootFd: number,
    private readonly log: (line: string) => void,
    private readonly onAlert: (a: Alert) => void,
  ) {}

  /** Durable first, then the journal line and the callback. */
  record(alert: Alert): void {
    this.count++;
    try {
      this.flush();
      appendAlert(this.rootFd, alert);
    } catch (err) {
      this.unwritten.push(alert);
      this.log(`<2>warden: cannot append to snapshots/alerts.jsonl (${errnoCode(err) ?? err}); alert ${alert.id} kept in memory and retried`);
    }
    this.log(journalLine(alert));
    this.onAlert(alert);
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
      appendAlert(this.rootFd, this.unwritten[0] as Alert);
      this.unwritten.shift();
    }
  }

  /** At stop: say which alerts never became durable. */
  reportUnwritten(): void {
    if (this.unwritten.length) this.log(`<2>warden: ${this.unwritten.length} alert(s) could not be written to snapshots/alerts.jsonl: ${this.unwritten.map((a) => a.id).join(', ')}`);
  }
}

const PRIORITY: Record<Alert['action'], number> = { reverted: 4, removed: 4, 'revert-failed': 3, flagged: 2 };

/** sd-daemon style: "<N>" priority prefix, picked up by journald from stderr. One line: every field is escaped. */
export function journalLine(a: Alert): string {
  return escapeText(rawJournalLine(a));
}

function rawJournalLine(a: Alert): string {
  const keys = a.credential_changes?.length ? ` keys: ${a.credential_changes.map((c) => `${c.group}.${c.key} ${c.before ?? '-'}→${c.after ?? '-'}`).join(', ')};` : '';
  const extra = a.also?.length ? ` (+${a.also.join(', ')})` : '';
  const count = a.count && a.count > 1 ? ` (${a.count} alerts folded)` : '';
  const detail = a.detail ? ` ${a.detail}.` : '';
  return `<${PRIORITY[a.action] ?? 4}>warden: ${a.action} ${a.path}: ${a.reason}${extra}${count};${keys} alert ${a.id}.${detail} ${a.advice}`;
}
