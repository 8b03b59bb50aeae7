/**
 * Alerts as structured journal entries (docs/CONTRACT.md §Alerts): the real guard, with a stand-in for
 * journald's native socket (a datagram listener, notify-listener.ts), sends each alert
 * with MESSAGE_ID per reason, PRIORITY and the WARDEN_* fields; the stderr line is not
 * written twice; and when the socket goes away the line goes to stderr instead.
 * The real journald (journalctl WARDEN_PATH=…) is checked by test/systemd/run.sh.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, rmSync } from 'node:fs';
import { loadUnixDgram } from '../../src/daemon/sd-notify.js';
import { MESSAGE_IDS, alertJournalFields, encodeJournalEntry } from '../../src/store/journal-entry.js';
import { rootId } from '../../src/store/location.js';
import type { Alert } from '../../src/store/alert-types.js';
import { testWorld, waitFor } from '../helpers/root.js';
import { python3Available, startNotifyListener } from './notify-listener.js';

const skip = !python3Available() ? 'python3 is not installed' : loadUnixDgram() ? false : 'unix-dgram is not installed';
const world = testWorld();
after(() => world.cleanup());

/** The NAME=value fields of a datagram (values without newlines, as an alert's are). */
function fields(m: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of m.split('\n')) { const i = line.indexOf('='); if (i > 0) out[line.slice(0, i)] = line.slice(i + 1); }
  return out;
}

test('encoding: NAME=value, and the length-prefixed form for a value with a newline', () => {
  const b = encodeJournalEntry([['MESSAGE', 'one line'], ['WARDEN_PATH', 'a\nb']]);
  const len = Buffer.alloc(8); len.writeBigUInt64LE(3n);
  assert.deepEqual(b, Buffer.concat([Buffer.from('MESSAGE=one line\nWARDEN_PATH\n'), len, Buffer.from('a\nb\n')]));
  assert.throws(() => encodeJournalEntry([['lower', 'x']]), /invalid journal field name/);
});

test('every reason has its own 128-bit MESSAGE_ID', () => {
  const ids = Object.values(MESSAGE_IDS);
  assert.ok(ids.every((id) => /^[0-9a-f]{32}$/.test(id)));
  assert.equal(new Set(ids).size, ids.length);
  const a = { id: 'x1', time: '', path: 'orgs/x.toml', action: 'flagged', reason: 'baseline-tampered', before: null, after: null, quarantine: null, advice: '' } as Alert;
  const f = Object.fromEntries(alertJournalFields(a, '/r', 'abc', 'm'));
  assert.equal(f.PRIORITY, '2');
  assert.equal(f.MESSAGE_ID, MESSAGE_IDS['baseline-tampered']);
  assert.deepEqual(JSON.parse(f.WARDEN_ALERT!), a);
});

test('the guard sends each alert to the native socket as a structured entry, once', { skip }, async () => {
  const l = await startNotifyListener();
  try {
    const t = world.root({ init: true });
    const d = await world.daemon(t, ['--guard'], { WARDEN_JOURNAL_SOCKET: l.socketPath, JOURNAL_STREAM: '1:1' });
    appendFileSync(t.p('config/conditions.toml'), '# injected\n');
    const m = fields(await l.waitFor((x) => fields(x).WARDEN_PATH === 'config/conditions.toml', 10_000));
    assert.equal(m.WARDEN_ACTION, 'reverted');
    assert.equal(m.WARDEN_REASON, 'content');
    assert.equal(m.MESSAGE_ID, MESSAGE_IDS.content);
    assert.equal(m.PRIORITY, '4');
    assert.equal(m.SYSLOG_IDENTIFIER, 'warden');
    assert.equal(m.WARDEN_ROOT, t.root);
    assert.equal(m.WARDEN_ROOT_ID, rootId(t.root));
    assert.match(m.WARDEN_ALERT_ID ?? '', /\S/);
    assert.match(m.MESSAGE ?? '', /^warden: reverted config\/conditions\.toml: content;/);
    const alert = JSON.parse(m.WARDEN_ALERT!) as Alert;
    assert.equal(alert.id, m.WARDEN_ALERT_ID);
    // The entry carries the line: stderr (also the journal under systemd) does not repeat it.
    assert.doesNotMatch(d.stderr(), /reverted config\/conditions\.toml/);

    // The socket goes away: the alert line goes to stderr instead, and the failure is said.
    await l.close();
    rmSync(l.socketPath, { force: true });
    appendFileSync(t.p('config/conditions.toml'), '# again\n');
    await waitFor(() => /reverted config\/conditions\.toml/.test(d.stderr()), 10_000, 'the stderr line as a fallback');
    assert.match(d.stderr(), /cannot write alerts to the journal's native socket/);
  } finally {
    await l.close();
  }
});

test('not under systemd (no JOURNAL_STREAM): the stderr line only', { skip }, async () => {
  const t = world.root({ init: true });
  const d = await world.daemon(t, ['--guard'], { JOURNAL_STREAM: '' });
  appendFileSync(t.p('config/guests.toml'), '# injected\n');
  await waitFor(() => /reverted config\/guests\.toml: content/.test(d.stderr()), 10_000, 'the stderr journal line');
});
