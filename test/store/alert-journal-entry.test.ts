/**
 * An alert as a systemd journal entry (src/store/journal-entry.ts): the published MESSAGE_IDs,
 * the fields in order with their priority, and the native protocol's encoding. Pure: in
 * `npm run mutate -- store` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import assert from 'node:assert/strict';
import type { Alert } from '../../src/store/alert-types.js';
import { ALERT_FIELD, ALERT_PRIORITY, MESSAGE_IDS, ROOT_ID_FIELD, alertJournalFields, encodeJournalEntry } from '../../src/store/journal-entry.js';

describe('an alert as a journal entry', () => {
  const alert = (o: Partial<Alert> = {}): Alert => ({ id: 'a1', time: 't', path: 'orgs/x.toml', action: 'reverted', reason: 'content', before: null, after: null, quarantine: null, advice: 'a', ...o });
  const f = (a: Alert) => Object.fromEntries(alertJournalFields(a, '/root', 'rid', 'the line'));
  it("each reason's MESSAGE_ID is the one docs/NOTIFY.md publishes (they never change)", () => {
    const doc = readFileSync(new URL('../../../docs/NOTIFY.md', import.meta.url), 'utf8');
    const published = Object.fromEntries([...doc.matchAll(/^\| `([a-z-]+)` \| `([0-9a-f]{32})` \|$/gm)].map((m) => [m[1], m[2]]));
    assert.deepEqual({ ...MESSAGE_IDS }, published);
  });
  it('the fields, in order, with the priority of its action', () => {
    assert.deepEqual(alertJournalFields(alert(), '/root', 'rid', 'the line'), [
      ['MESSAGE', 'the line'], ['MESSAGE_ID', MESSAGE_IDS.content], ['PRIORITY', '4'], ['SYSLOG_IDENTIFIER', 'warden'], ['WARDEN_ALERT_ID', 'a1'],
      ['WARDEN_PATH', 'orgs/x.toml'], ['WARDEN_REASON', 'content'], ['WARDEN_ACTION', 'reverted'], ['WARDEN_ROOT', '/root'], ['WARDEN_ROOT_ID', 'rid'],
      ['WARDEN_ALERT', JSON.stringify(alert())],
    ]);
    assert.equal(ROOT_ID_FIELD, 'WARDEN_ROOT_ID');
    assert.equal(ALERT_FIELD, 'WARDEN_ALERT');
    assert.deepEqual({ ...ALERT_PRIORITY }, { reverted: 4, removed: 4, 'revert-failed': 3, flagged: 2, noted: 6 });
    assert.equal(f(alert({ action: 'revert-failed', reason: 'revert-failed' })).PRIORITY, '3');
    assert.equal(f(alert({ action: 'removed', reason: 'unexpected-file' })).PRIORITY, '4');
    assert.equal(f(alert({ action: 'flagged', reason: 'baseline-tampered' })).PRIORITY, '2');
    // An action or reason this release does not know (an alert line of a newer one): still an entry.
    const odd = f(alert({ action: 'other' as Alert['action'], reason: 'other' as Alert['reason'] }));
    assert.equal(odd.PRIORITY, '4');
    assert.equal(odd.MESSAGE_ID, MESSAGE_IDS['revert-failed']);
  });
  it('a folded alert carries its count (only above one), a quarantine its escaped name', () => {
    assert.equal(f(alert({ count: 5 })).WARDEN_COUNT, '5');
    assert.equal(f(alert({ count: 1 })).WARDEN_COUNT, undefined);
    assert.equal(f(alert()).WARDEN_QUARANTINE, undefined);
    const q = f(alert({ quarantine: 'q/\u001bx\ny', path: 'a\nb' }));
    assert.equal(q.WARDEN_QUARANTINE, 'q/\\ex\\ny');
    assert.equal(q.WARDEN_PATH, 'a\\nb');
    assert.equal(JSON.parse(q.WARDEN_ALERT!).path, 'a\nb', 'the exact name is in the JSON');
  });
  it('encoding: plain NAME=value, length-prefixed for a newline or a NUL, field names checked', () => {
    assert.deepEqual(encodeJournalEntry([['A', 'x'], ['B_2', '']]), Buffer.from('A=x\nB_2=\n'));
    const len = (n: number) => { const b = Buffer.alloc(8); b.writeBigUInt64LE(BigInt(n)); return b; };
    assert.deepEqual(encodeJournalEntry([['N', 'a\0b']]), Buffer.concat([Buffer.from('N\n'), len(3), Buffer.from('a\0b\n')]));
    assert.deepEqual(encodeJournalEntry([['U', 'é\n']]), Buffer.concat([Buffer.from('U\n'), len(3), Buffer.from('é\n\n')]), 'the length is in bytes');
    assert.deepEqual(encodeJournalEntry([]), Buffer.alloc(0));
    for (const name of ['lower', '_X', 'A-B', 'A B', '', 'Ä', `A${'B'.repeat(64)}`, 'A\n']) assert.throws(() => encodeJournalEntry([[name, 'v']]), /invalid journal field name/, name);
    for (const name of ['9A', 'A', `A${'B'.repeat(63)}`]) assert.doesNotThrow(() => encodeJournalEntry([[name, 'v']]), name);
  });
});
