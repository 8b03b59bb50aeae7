import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { startNotifier, readDeliveryState, type NotifierHandle } from '../../src/notifier/index.js';
import { appendOutboxMessage } from '../../src/store/outbox-messages.js';
import { DiscordEmulator } from '../helpers/discord-emulator.js';
import { waitFor } from '../helpers/wait-for.js';
import { OWNER, TOKEN, alert, appendAlerts, config, countIn, fixture, idsIn, type Fixture } from './helpers.js';

const FAST = { pollMs: 50, backoffBaseMs: 100, backoffCapMs: 400 };

async function setup(notify: Record<string, unknown> = {}, timing = FAST) {
  const fx = fixture();
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  const logs: string[] = [];
  const n = await startNotifier({ root: fx.root, stateDir: fx.stateDir, config: config(fx, emu.api, notify), log: (l) => logs.push(l), timing });
  return { fx, emu, n, logs, async done() { await n.stop(); await emu.stop(); fx.cleanup(); } };
}

function delivered(fx: Fixture, id: string): boolean {
  return readDeliveryState(fx.root, fx.stateDir).alerts[id]?.discord?.state === 'delivered';
}

test('one alert gives one DM, with what/where/why/when/how and the alert id', async () => {
  const t = await setup();
  try {
    const a = alert({ also: ['mode'] });
    appendAlerts(t.fx.root, [a]);
    await waitFor(() => t.emu.messages.length >= 1, 20_000, 'first DM');
    const dm = t.emu.requests.find((r) => r.path === '/api/v10/users/@me/channels');
    assert.deepEqual(JSON.parse(dm!.body), { recipient_id: OWNER });
    const [m] = t.emu.messages;
    assert.equal(m!.path, `/api/v10/channels/dm${OWNER}/messages`);
    const body = JSON.parse(m!.body) as { content: string; allowed_mentions: unknown };
    assert.deepEqual(body.allowed_mentions, { parse: [] });
    assert.ok(body.content.length < 2000);
    for (const s of ['config/conditions.toml', 'reverted', 'reason: content', 'also: mode', a.time, a.id, 'warden edit', `warden accept ${a.id}`]) {
      assert.ok(body.content.includes(s), `message mentions ${s}:\n${body.content}`);
    }
    assert.equal(countIn(body.content), 1);
    await waitFor(() => delivered(t.fx, a.id), 20_000, 'state says delivered');
    // A second alert proves nothing else was queued for the first: exactly two messages.
    const b = alert();
    appendAlerts(t.fx.root, [b]);
    await waitFor(() => t.emu.messages.length >= 2, 20_000, 'second DM');
    // The emulator sees the request before the notifier records the answer: wait for that.
    await waitFor(() => delivered(t.fx, b.id), 20_000, 'second alert recorded as delivered');
    assert.deepEqual(t.emu.messages.map((x) => idsIn(x.content)), [[a.id], [b.id]]);
    assert.equal(t.emu.requests.filter((r) => r.path.endsWith('/users/@me/channels')).length, 1, 'DM channel created once');
    assert.equal(t.n.status().outboxDepth, 0);
    assert.equal(t.n.status().channels.discord?.status, 'ok');
  } finally { await t.done(); }
});

test('a storm of 500 alerts folds to at most one message per interval, with the right count', async () => {
  const t = await setup({ min_interval_seconds: 1 });
  try {
    const all: string[] = [];
    for (let i = 0; i < 50; i++) {
      const batch = Array.from({ length: 10 }, (_, j) => alert({ path: `orgs/org${j % 3}.toml`, reason: j % 2 ? 'content' : 'emptied' }));
      all.push(...batch.map((a) => a.id));
      appendAlerts(t.fx.root, batch);
      await new Promise((r) => setImmediate(r));
    }
    await waitFor(() => t.emu.messages.reduce((s, m) => s + countIn(m.content), 0) >= 500, 30_000, 'counts add up to 500');
    const msgs = t.emu.messages;
    assert.equal(msgs.reduce((s, m) => s + countIn(m.content), 0), 500, 'no alert counted twice');
    for (let i = 1; i < msgs.length; i++) {
      assert.ok(msgs[i]!.time - msgs[i - 1]!.time >= 990, `message ${i} came ${msgs[i]!.time - msgs[i - 1]!.time} ms after the previous one`);
    }
    for (const m of msgs) {
      assert.ok(m.content.length <= 2000, `length ${m.content.length}`);
      if (countIn(m.content) > 1) assert.match(m.content, /orgs\/org0\.toml`: reverted (\d+ times|twice|once) — (each time )?(it was emptied|its content was changed directly)/);
    }
    const big = msgs.find((m) => countIn(m.content) > 100)!;
    assert.match(big.content, /\(\+\d+ more: `warden alerts`\)/, 'clipped id list says how many were left out');
    await waitFor(() => all.every((id) => delivered(t.fx, id)), 20_000, 'all 500 recorded as delivered');
    assert.ok(msgs.length <= 5, `${msgs.length} messages for a storm`);
  } finally { await t.done(); }
});

test('Discord down (refused, then 500) and back: every alert delivered once it returns, none twice', async () => {
  const t = await setup();
  try {
    const first = alert();
    appendAlerts(t.fx.root, [first]);
    await waitFor(() => delivered(t.fx, first.id), 20_000, 'first alert delivered');
    await t.emu.stop();
    const down = Array.from({ length: 6 }, () => alert());
    appendAlerts(t.fx.root, down.slice(0, 3));
    await waitFor(() => {
      const s = readDeliveryState(t.fx.root, t.fx.stateDir);
      return s.alerts[down[0]!.id]?.discord?.state === 'failed' && s.channels.discord?.status === 'backoff' && /cannot reach Discord/.test(s.lastDeliveryError?.message ?? '');
    }, 20_000, 'connection refused recorded as failed + backoff');
    assert.ok(t.n.status().outboxDepth >= 3);
    await t.emu.start(); // same port
    t.emu.mode = '500';
    appendAlerts(t.fx.root, down.slice(3));
    await waitFor(() => t.emu.requests.some((r) => r.status === 500), 20_000, 'a 500 was served');
    await waitFor(() => /HTTP 500/.test(readDeliveryState(t.fx.root, t.fx.stateDir).lastDeliveryError?.message ?? ''), 20_000, '500 in status');
    t.emu.mode = 'ok';
    await waitFor(() => down.every((a) => delivered(t.fx, a.id)), 20_000, 'all delivered after recovery');
    const seen = t.emu.messages.flatMap((m) => idsIn(m.content));
    assert.deepEqual([...seen].sort(), [first, ...down].map((a) => a.id).sort(), 'each id in exactly one delivered message');
    const st = readDeliveryState(t.fx.root, t.fx.stateDir);
    assert.equal(st.outboxDepth, 0);
    assert.equal(st.lastDeliveryError, null, 'recovered: no current error');
    assert.ok(t.logs.filter((l) => /discord: backoff/.test(l)).length <= 2, `outage logged once, not per attempt:\n${t.logs.join('\n')}`);
  } finally { await t.done(); }
});

test('a 429 is honoured: the next message request comes after the reset', async () => {
  const t = await setup();
  try {
    t.emu.rateLimitNext = 1;
    t.emu.rateLimitResetAfter = 1.2;
    const a = alert();
    appendAlerts(t.fx.root, [a]);
    await waitFor(() => readDeliveryState(t.fx.root, t.fx.stateDir).channels.discord?.status === 'rate-limited', 20_000, 'rate-limited status');
    await waitFor(() => delivered(t.fx, a.id), 20_000, 'delivered after the reset');
    const posts = t.emu.requests.filter((r) => r.path.endsWith('/messages'));
    assert.equal(posts.length, 2, 'one 429, then one success: no hammering');
    assert.equal(posts[0]!.status, 429);
    assert.ok(posts[1]!.time - posts[0]!.time >= 1200, `retried after ${posts[1]!.time - posts[0]!.time} ms`);
  } finally { await t.done(); }
});

test('no secret value appears in any request body', async () => {
  const t = await setup();
  try {
    const secrets = ['sk-ant-SECRET-api-key-0123456789', 'MTIz.Zm9v.discord-bot-SECRET-value', 'hunter2-SECRET'];
    const fp = (v: string) => createHash('sha256').update(v).digest('hex').slice(0, 12);
    const a = alert({
      path: 'config/credentials.toml', reason: 'half-applied', detail: 'group discord: token changed, application_id did not',
      credential_changes: [
        { group: 'anthropic', key: 'api_key', before: fp(secrets[0]!), after: fp(secrets[2]!) },
        { group: 'discord', key: 'token', before: fp(secrets[1]!), after: null },
      ],
    });
    appendAlerts(t.fx.root, [a, alert({ path: 'config/credentials.toml', reason: 'content', credential_changes: [{ group: 'anthropic', key: 'api_key', before: null, after: fp(secrets[0]!) }] })]);
    appendOutboxMessage(t.fx.root, { id: 'code1', time: new Date().toISOString(), kind: 'owner-code', text: 'Approval code for warden edit config/conditions.toml: 493-117' });
    await waitFor(() => t.emu.messages.length >= 2 && readDeliveryState(t.fx.root, t.fx.stateDir).outboxDepth === 0, 20_000, 'all delivered');
    // As Discord shows it: names are markdown-escaped (api\_key reads api_key).
    const all = t.emu.messages.map((m) => m.content).join('\n').replace(/\\([!-/:-@[-`{-~])/g, '$1');
    assert.ok(all.includes('anthropic.api_key') && all.includes(fp(secrets[0]!)), 'keys and fingerprints are named');
    for (const r of t.emu.requests) {
      for (const s of [...secrets, TOKEN]) assert.ok(!r.body.includes(s), `request body to ${r.path} leaks a secret`);
    }
    assert.ok(t.emu.requests.every((r) => r.auth === `Bot ${TOKEN}`), 'the token only travels in the Authorization header');
  } finally { await t.done(); }
});

test('owner codes go out individually, without waiting for the storm interval', async () => {
  const t = await setup({ min_interval_seconds: 3600 });
  try {
    appendAlerts(t.fx.root, [alert()]);
    await waitFor(() => t.emu.messages.length === 1, 20_000, 'alert DM');
    appendAlerts(t.fx.root, [alert()]); // held back by the 1 h interval
    const time = new Date().toISOString();
    appendOutboxMessage(t.fx.root, { id: 'c1', time, kind: 'owner-code', text: 'warden approval code: 111-222' });
    appendOutboxMessage(t.fx.root, { id: 'c2', time, kind: 'owner-code', text: 'warden approval code: 333-444' });
    await waitFor(() => t.emu.messages.length === 3, 20_000, 'two code DMs');
    const texts = t.emu.messages.slice(1).map((m) => m.content);
    assert.ok(texts[0]!.includes('111-222') && !texts[0]!.includes('333-444'));
    assert.ok(texts[1]!.includes('333-444'));
    const st = await waitFor(() => {
      const s = readDeliveryState(t.fx.root, t.fx.stateDir);
      return s.messages.c2?.discord?.state === 'delivered' ? s : null;
    }, 20_000, 'state records both codes');
    assert.equal(st.messages.c1?.discord?.state, 'delivered');
    assert.equal(st.outboxDepth, 1, 'the second alert still waits for the interval');
    assert.ok(!JSON.stringify(st).includes('111-222'), 'the report never carries the code');
  } finally { await t.done(); }
});

test('401 is a clear status error with a long backoff, not a tight loop', async () => {
  const t = await setup({}, { ...FAST, longBackoffMs: 60_000 } as typeof FAST);
  try {
    t.emu.mode = '401';
    appendAlerts(t.fx.root, [alert()]);
    const st = await waitFor(() => {
      const s = readDeliveryState(t.fx.root, t.fx.stateDir);
      return s.channels.discord?.status === 'auth-failed' ? s : null;
    }, 20_000, 'auth-failed');
    assert.match(st.lastDeliveryError!.message, new RegExp(`HTTP 401.*${t.fx.tokenFile.replace(/[.]/g, '\\.')}`));
    assert.ok(Date.parse(st.channels.discord!.next_attempt!) - Date.now() > 50_000, 'next attempt a minute away');
    assert.equal(t.emu.requests.length, 1);
    assert.equal(t.logs.filter((l) => l.includes('auth-failed')).length, 1);
  } finally { await t.done(); }
});

test('a token file readable by others is refused, naming the file; nothing is sent', async () => {
  const t = await setup();
  try {
    chmodSync(t.fx.tokenFile, 0o644);
    appendAlerts(t.fx.root, [alert()]);
    const st = await waitFor(() => {
      const s = readDeliveryState(t.fx.root, t.fx.stateDir);
      return s.channels.discord?.status === 'config' ? s : null;
    }, 20_000, 'config error');
    assert.ok(st.lastDeliveryError!.message.includes(t.fx.tokenFile));
    assert.match(st.lastDeliveryError!.message, /group or others.*chmod 600/);
    assert.equal(t.emu.requests.length, 0);
    // Fixing the file and reloading delivers at once (no hour-long wait).
    chmodSync(t.fx.tokenFile, 0o600);
    t.n.reload(config(t.fx, t.emu.api));
    await waitFor(() => t.emu.messages.length === 1, 20_000, 'delivered after reload');
  } finally { await t.done(); }
});

test('the notifier writes only in its state directory, and tolerates a missing outbox', async () => {
  const fx = fixture();
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  let n: NotifierHandle | undefined;
  try {
    // No snapshots/outbox/ at all (the guard creates it with the first owner code).
    const logs: string[] = [];
    n = await startNotifier({ root: fx.root, stateDir: fx.stateDir, config: config(fx, emu.api), log: (m: string) => { logs.push(m); }, timing: FAST });
    writeFileSync(join(fx.root, 'snapshots', 'alerts.jsonl'), 'not json\n{"id":"x1","path":"p","time":"t","action":"flagged","reason":"content","advice":"a"}\n{"partial');
    await waitFor(() => emu.messages.length === 1, 20_000, 'the valid alert is sent');
    assert.equal(n.status().malformedLines, 1);
    // The emulator has the message a moment before the notifier reads the reply and records the delivery.
    await waitFor(() => n!.status().outboxDepth === 0, 10_000, 'the delivery recorded, nothing left owed');
    assert.deepEqual(logs.filter((m) => /cannot read|ENOENT/i.test(m)), [], 'a missing outbox is not an error');
    const { readdirSync } = await import('node:fs');
    assert.deepEqual(readdirSync(join(fx.root, 'snapshots')).sort(), ['alerts.jsonl'], 'the notifier created nothing in the root');
    const { statSync } = await import('node:fs');
    assert.equal(statSync(join(fx.stateDir, 'delivery-state.json')).mode & 0o777, 0o600);
  } finally { await n?.stop(); await emu.stop(); fx.cleanup(); }
});

test('liveness: a quiet warden still says it is alive every liveness_hours', async () => {
  const t = await setup({ liveness_hours: 0.0005 }); // 1.8 s
  try {
    await waitFor(() => t.emu.messages.length >= 1, 20_000, 'liveness message');
    assert.match(t.emu.messages[0]!.content, /warden is alive/);
    assert.ok(t.emu.messages[0]!.time - Date.parse(readDeliveryState(t.fx.root, t.fx.stateDir).notifier!.started) >= 1700);
    assert.ok(readDeliveryState(t.fx.root, t.fx.stateDir).outboxDepth === 0);
  } finally { await t.done(); }
});
