import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { DISCORD_LIMIT, discordContent, formatAlerts, clipLines } from '../../src/notifier/format.js';
import { defaultNotifierStateDir, readDeliveryState } from '../../src/notifier/delivery-state.js';
import { appendOutboxMessage } from '../../src/store/outbox-messages.js';
import { readTokenFile } from '../../src/notifier/token-file.js';
import { alert, appendAlerts, fixture } from './helpers.js';

test('a storm over many long paths stays under 2000 chars and says what it left out', () => {
  const alerts = Array.from({ length: 300 }, (_, i) => alert({ path: `orgs/${'very-long-org-name-'.repeat(4)}${i}.toml` }));
  const c = discordContent(formatAlerts(alerts, DISCORD_LIMIT));
  assert.ok(c.length < 2000, String(c.length));
  assert.match(c, /warden: 300 alerts on 300 path\(s\)/);
  assert.match(c, /… \d+ more line\(s\) left out/);
  assert.match(c, /warden edit/);
});

test('a single huge alert is clipped with a count, and control characters are neutralised', () => {
  const a = alert({ path: 'orgs/evil\n@everyone\u0007.toml', detail: 'x'.repeat(5000) });
  const c = discordContent(formatAlerts([a], DISCORD_LIMIT));
  assert.ok(c.length <= 2000);
  assert.ok(!c.includes('\u0007') && !c.includes('\n@everyone') && c.includes('orgs/evil\\n@everyone\\x07.toml'), c);
  assert.ok(c.includes(a.id));
  const clipped = clipLines(Array.from({ length: 30 }, (_, i) => String(i).padEnd(100, '.')), 1000);
  assert.ok(clipped.length <= 1000 && /… \d+ more line\(s\) left out/.test(clipped), clipped);
});

test('credential alerts show keys and fingerprints only', () => {
  const fp = createHash('sha256').update('the-secret').digest('hex').slice(0, 12);
  const c = discordContent(formatAlerts([alert({ path: 'config/credentials.toml', reason: 'half-applied', credential_changes: [{ group: 'discord', key: 'token', before: fp, after: null }] })], DISCORD_LIMIT));
  assert.ok(c.includes(`discord.token (fingerprint ${fp} → absent)`));
  assert.match(c, /only half applied/);
});

test('defaultNotifierStateDir: embedded, $STATE_DIRECTORY, $XDG_STATE_HOME, ~/.local/state', () => {
  const fx = fixture();
  try {
    const tag = createHash('sha256').update(realpathSync(fx.root)).digest('hex').slice(0, 16);
    assert.equal(defaultNotifierStateDir(fx.root, true), join(fx.root, 'snapshots/notify'));
    assert.equal(defaultNotifierStateDir(fx.root, false, { STATE_DIRECTORY: '/var/lib/warden-notify:/other' }), '/var/lib/warden-notify');
    assert.equal(defaultNotifierStateDir(fx.root, false, { XDG_STATE_HOME: '/x/state' }), `/x/state/warden/notify/${tag}`);
    assert.equal(defaultNotifierStateDir(fx.root, false, {}), join(homedir(), '.local/state/warden/notify', tag));
  } finally { fx.cleanup(); }
});

test('readDeliveryState without a state file: every item listed, no channels, depth 0', () => {
  const fx = fixture();
  try {
    appendAlerts(fx.root, [alert({ id: 'a1' }), alert({ id: 'a2' })]);
    const r = readDeliveryState(fx.root, fx.stateDir);
    assert.equal(r.stateFound, false);
    assert.deepEqual(Object.keys(r.alerts), ['a1', 'a2']);
    assert.equal(r.outboxDepth, 0);
    assert.equal(r.lastDeliveryError, null);
  } finally { fx.cleanup(); }
});

test('appendOutboxMessage: dir 0700, file 0600, one fsynced JSON line each, no symlink following', () => {
  const fx = fixture();
  try {
    const time = new Date().toISOString();
    appendOutboxMessage(fx.root, { id: 'm1', time, kind: 'owner-code', text: 'code 1' });
    appendOutboxMessage(fx.root, { id: 'm2', time, kind: 'owner-code', text: 'code "2"\nline' });
    const f = join(fx.root, 'snapshots/outbox/messages.jsonl');
    assert.equal(statSync(join(fx.root, 'snapshots/outbox')).mode & 0o777, 0o700);
    assert.equal(statSync(f).mode & 0o777, 0o600);
    const lines = readFileSync(f, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { id: string; text: string });
    assert.deepEqual(lines.map((l) => l.id), ['m1', 'm2']);
    assert.equal(lines[1]!.text, 'code "2"\nline');
    const fx2 = fixture();
    try {
      mkdirSync(join(fx2.root, 'snapshots/outbox'), { recursive: true });
      const { symlinkSync } = require_fs();
      symlinkSync(join(fx2.dir, 'elsewhere'), join(fx2.root, 'snapshots/outbox/messages.jsonl'));
      assert.throws(() => appendOutboxMessage(fx2.root, { id: 'm3', time, kind: 'owner-code', text: 'x' }), /ELOOP/);
    } finally { fx2.cleanup(); }
  } finally { fx.cleanup(); }
});

import * as fsAll from 'node:fs';
function require_fs() { return fsAll; }

test('token file: refused when group/other-accessible, inside the root, or empty', () => {
  const fx = fixture();
  try {
    assert.equal(readTokenFile(fx.tokenFile, fx.root).length > 10, true);
    fsAll.chmodSync(fx.tokenFile, 0o640);
    assert.throws(() => readTokenFile(fx.tokenFile, fx.root), (e: Error) => e.message.includes(fx.tokenFile) && /mode 0640/.test(e.message));
    const inside = join(fx.root, 'token');
    writeFileSync(inside, 'abc', { mode: 0o600 });
    assert.throws(() => readTokenFile(inside, fx.root), /inside the root/);
    const empty = join(fx.dir, 'empty-token');
    writeFileSync(empty, '\n', { mode: 0o600 });
    assert.throws(() => readTokenFile(empty, fx.root), /exactly one token/);
  } finally { fx.cleanup(); }
});
