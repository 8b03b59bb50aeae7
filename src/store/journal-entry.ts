/**
 * An alert as a structured journal entry (docs/CONTRACT.md §Alerts): the fields the guard sends to
 * journald's native socket, and their encoding (systemd's native journal protocol). Pure.
 *
 * The same field names are read back by the owner's desktop feed (notifier/journal-feed.ts)
 * and by anything that forwards the journal (journal-remote, a log shipper): docs/NOTIFY.md
 * lists them, and the MESSAGE_ID of each reason, which never change.
 */
import { escapeText } from '../common/escape.js';
import type { Alert, AlertReason } from './alert-types.js';

/** One fixed 128-bit MESSAGE_ID per reason (journalctl MESSAGE_ID=…; `journalctl --catalog` style). */
export const MESSAGE_IDS: Readonly<Record<AlertReason, string>> = {
  content: 'fc34d4f1a04e4d1d9cdd6c8daea956d8',
  emptied: 'c7e595b8bc0248d59a4fa5f548db1364',
  deleted: 'cc26d7c1b9914134a992e6ae79c1ea13',
  mode: 'f5338b454c954cf294efc376a064acfb',
  owner: '1727bbf25ac541c89951684e1358bbee',
  symlink: '5beecdf39e704a16ab6129a9c2a4ecef',
  'not-regular': 'd1c0552a5b9c4d099c9a465a4623c391',
  'too-large': '4232503748f44332af2f2df55784410d',
  'unexpected-file': 'f5bab8649c1b4942b0f053d767fe64bd',
  'half-applied': '1806e3e4977f4abbabad03af8c83d5bf',
  'changed-while-stopped': '4773f2a35f5449fca633db1c56ef45bb',
  'baseline-tampered': '495598a584d94c98ae43407a55ff7d3a',
  'revert-failed': '9719765190004d78b1dcdbb3920115e8',
  'approval-expired': 'd17f36f51647499683179b9c73b7b3c8',
  'watch-degraded': 'abda3070cb2e470f834394d8d1b7e759',
  'approval-refused': 'b2ebec455aa14d17816109f4942cf3c5',
  'root-replaced': 'f2bc44ced77d4b13b15fd31d56a185a9',
  'dir-replaced': '1f49a929fe4a61e1b97ffd3e65ec15d8',
  refused: 'f198e8e35446422e8ac6dbadc1c82ee2',
  acl: 'a42f614cd63c4c7d83195e9a2dec39a0',
  xattr: 'c1a01b2437f94e1ba39726195b340daf',
  'store-budget': '407c968f69974a3282a7d8f7c41a0bfa',
  'runtime-write': 'ca22d1ae74e04354a35f31ab18de4fb5',
};

/** syslog priority of an alert: a revert is a warning, a failed one an error, a tamper critical, a runtime's own write accepted info. */
export const ALERT_PRIORITY: Readonly<Record<Alert['action'], number>> = { reverted: 4, removed: 4, 'revert-failed': 3, flagged: 2, noted: 6 };

/** SYSLOG_IDENTIFIER of every alert entry. */
export const JOURNAL_IDENTIFIER = 'warden';
/** The field that carries the whole alert record as JSON (what a forwarder or the desktop feed reads). */
export const ALERT_FIELD = 'WARDEN_ALERT';
export const ROOT_ID_FIELD = 'WARDEN_ROOT_ID';

/**
 * The entry's fields. `message` is the human line (the stderr journal line, without its
 * `<N>` prefix). An alert never holds a credential value (only key names and
 * fingerprints), so neither does its entry.
 */
export function alertJournalFields(a: Alert, root: string, rootId: string, message: string): [string, string][] {
  const fields: [string, string][] = [
    ['MESSAGE', message],
    ['MESSAGE_ID', MESSAGE_IDS[a.reason] ?? MESSAGE_IDS['revert-failed']],
    ['PRIORITY', String(ALERT_PRIORITY[a.action] ?? 4)],
    ['SYSLOG_IDENTIFIER', JOURNAL_IDENTIFIER],
    ['WARDEN_ALERT_ID', a.id],
    // Escaped as everywhere it is shown (a name may hold bytes that are not UTF-8, a newline,
    // ESC); the exact name is in WARDEN_ALERT's JSON.
    ['WARDEN_PATH', escapeText(a.path)],
    ['WARDEN_REASON', a.reason],
    ['WARDEN_ACTION', a.action],
    ['WARDEN_ROOT', root],
    [ROOT_ID_FIELD, rootId],
  ];
  if (a.count && a.count > 1) fields.push(['WARDEN_COUNT', String(a.count)]);
  if (a.quarantine) fields.push(['WARDEN_QUARANTINE', escapeText(a.quarantine)]);
  fields.push([ALERT_FIELD, JSON.stringify(a)]);
  return fields;
}

const FIELD_NAME = /^[A-Z0-9][A-Z0-9_]{0,63}$/;

/**
 * systemd's native protocol: `NAME=value\n` per field, or, for a value holding a newline
 * (or any byte that could confuse a reader), `NAME\n` + the value's length as a 64-bit
 * little-endian integer + the value + `\n`.
 */
export function encodeJournalEntry(fields: [string, string][]): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of fields) {
    if (!FIELD_NAME.test(name)) throw new Error(`invalid journal field name ${JSON.stringify(name)}`);
    const v = Buffer.from(value, 'utf8');
    if (!/[\n\0]/.test(value)) { parts.push(Buffer.from(`${name}=`), v, Buffer.from('\n')); continue; }
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(v.length));
    parts.push(Buffer.from(`${name}\n`), len, v, Buffer.from('\n'));
  }
  return Buffer.concat(parts);
}
