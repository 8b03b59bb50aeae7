/**
 * The approval flow against a real root (fast tier): proposals under "tty" and "owner-code",
 * answers (approve, deny, wrong and right codes), expiry on a given clock, staleness
 * recomputed at answer time, and forged pending records, each with its exact reply and the
 * files, pending records and alerts it must leave.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyChanges } from '../../src/changes/apply.js';
import { enc, MAX_CODE_ATTEMPTS, sweepPending } from '../../src/changes/approvals.js';
import { proposalSha } from '../../src/changes/pending.js';
import { osUser } from '../../src/store/history.js';
import type { PendingView, Reply } from '../../src/changes/protocol.js';
import type { TestRoot } from '../helpers/root.js';
import { b64, modeOf, op, roots, text, tomlWith, writer } from './in-process-root.js';

const R = roots();
after(() => R.cleanup());

const ORG = 'orgs/bookclub.toml';
const T0 = Date.parse('2026-12-01T12:00:00.000Z');
const TTL = 600;
const at = (ms: number) => () => ms;

const orgWith = (t: TestRoot, cap: number) => text(t.p(ORG)).replace(/hourly_cap = \d+/, `hourly_cap = ${cap}`);
const view = (r: Reply): PendingView => { assert.ok(r.pending && !Array.isArray(r.pending), JSON.stringify(r)); return r.pending as PendingView; };
const pendingFiles = (t: TestRoot) => (existsSync(t.p('snapshots/pending')) ? readdirSync(t.p('snapshots/pending')).sort() : []);
async function proposeCap(t: TestRoot, cap: number, extra: Record<string, unknown> = {}, now = T0) {
  return op(t, { action: 'propose', changes: [{ path: ORG, content_b64: b64(orgWith(t, cap)) }], command: 'edit orgs/bookclub.toml', ...extra } as never, { now: at(now) });
}
const answer = (t: TestRoot, id: string, extra: Record<string, unknown>, now = T0 + 1000, prepare = true) => op(t, { action: 'answer', id, answer: 'approve', ...extra } as never, { now: at(now), prepare });
/** Change the approved org behind the request's back (as another approved change would). */
function moveOn(t: TestRoot, content: Buffer | null) {
  const w = writer(t, { prepare: false });
  try { return applyChanges(w.env.ctx, [{ path: ORG, content }], 'apply', 'other').history; } finally { w.close(); }
}

describe('approval tty', () => {
  it('a proposal is a pending record (0600), nothing applied; its view says who, what, until when', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty', TTL) });
    const before = text(t.p(ORG));
    const { reply } = await proposeCap(t, 11);
    assert.equal(reply.ok, true);
    const v = view(reply);
    assert.match(v.id, /^[a-z0-9]{4,40}$/);
    assert.deepEqual({ ...v, summary: '', id: '' }, {
      id: '', approval: 'tty', paths: [ORG], command: 'edit orgs/bookclub.toml', user: osUser(), created: '2026-12-01T12:00:00.000Z',
      expires: '2026-12-01T12:10:00.000Z', proposal_sha: proposalSha(enc([{ path: ORG, content: Buffer.from(orgWith(t, 11)) }])), summary: '', attempts_left: MAX_CODE_ATTEMPTS, supersedes: null,
    });
    assert.match(v.summary, /- hourly_cap = 20\n {2}\+ hourly_cap = 11/);
    assert.equal(reply.also_pending, undefined);
    assert.deepEqual(pendingFiles(t), [`${v.id}.json`]);
    assert.equal(modeOf(t.p(`snapshots/pending/${v.id}.json`)), 0o600);
    assert.equal(text(t.p(ORG)), before, 'nothing applied');
  });

  it('the user is who warden sees; a different claim is kept beside it, escaped and cut', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty', TTL) });
    assert.equal(view((await proposeCap(t, 12, { user: osUser() })).reply).user, osUser());
    assert.equal(view((await proposeCap(t, 13, { user: 'mallory\n' })).reply).user, `${osUser()} (client said "mallory\\n")`);
    assert.equal(view((await proposeCap(t, 14, { user: 'x'.repeat(100) })).reply).user, `${osUser()} (client said "${'x'.repeat(64)}")`);
  });

  it('approve needs the terminal; then applies what was shown and removes the record', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty', TTL) });
    const id = view((await proposeCap(t, 15)).reply).id;
    const off = (await answer(t, id, {})).reply;
    assert.deepEqual(off, { ok: false, error: `request ${id} must be confirmed on a terminal: run 'warden approve ${id}' there`, exitCode: 2 });
    assert.deepEqual(pendingFiles(t), [`${id}.json`], 'still pending');
    const { reply } = await answer(t, id, { via: 'tty' });
    assert.equal(reply.ok, true, JSON.stringify(reply));
    assert.deepEqual(reply.applied?.paths, [ORG]);
    assert.equal(reply.applied?.generation, 2);
    assert.match(String(reply.applied?.commit), /^[0-9a-f]{40}$/);
    assert.equal(text(t.p(ORG)), orgWith(t, 15));
    assert.deepEqual(pendingFiles(t), []);
    const again = (await answer(t, id, { via: 'tty' })).reply;
    assert.deepEqual(again, { ok: false, error: `no pending approval ${id} (already answered, cancelled or expired?)`, exitCode: 1 });
  });

  it('deny removes the record and applies nothing', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty', TTL) });
    const before = text(t.p(ORG));
    const id = view((await proposeCap(t, 16)).reply).id;
    assert.deepEqual((await op(t, { action: 'answer', id, answer: 'deny' }, { now: at(T0 + 1) })).reply, { ok: true, denied: true });
    assert.deepEqual(pendingFiles(t), []);
    assert.equal(text(t.p(ORG)), before);
    assert.deepEqual((await op(t, { action: 'answer', id: 'NOT/AN/ID', answer: 'deny' })).reply, { ok: false, error: '"NOT/AN/ID" is not a pending approval id', exitCode: 1 });
  });

  it('an answer past the ttl (to a daemon that has not swept yet) is never applied: expired reply, approval-expired alert, record removed; at the ttl itself it still counts', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty', TTL) });
    const id = view((await proposeCap(t, 17)).reply).id;
    const late = await answer(t, id, { via: 'tty' }, T0 + TTL * 1000 + 1, false);
    assert.deepEqual(late.reply, { ok: false, expired: true, error: `approval ${id} expired at 2026-12-01T12:10:00.000Z; nothing was applied (reported as an approval-expired alert)`, exitCode: 1 });
    assert.equal(late.alerts.length, 1);
    const a = late.alerts[0]!;
    assert.equal(a.reason, 'approval-expired');
    assert.equal(a.path, ORG);
    assert.equal(a.detail, `approval ${id} for 'warden edit orgs/bookclub.toml' by ${osUser()} (${ORG}), requested 2026-12-01T12:00:00.000Z, expired unanswered at 2026-12-01T12:10:00.000Z; nothing was applied`);
    assert.equal(a.advice, `If the change is still wanted, propose it again (e.g. 'warden edit orgs/bookclub.toml').`);
    assert.deepEqual(pendingFiles(t), []);
    assert.equal(text(t.p(ORG)), orgWith(t, 20));
    const id2 = view((await proposeCap(t, 18)).reply).id;
    const edge = await answer(t, id2, { via: 'tty' }, T0 + TTL * 1000, false);
    assert.equal(edge.reply.ok, true, JSON.stringify(edge.reply));
  });

  it('show past the ttl expires it too; a writer start sweeps expired records and reports each', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty', TTL) });
    const a = view((await proposeCap(t, 19)).reply).id;
    const shown = await op(t, { action: 'show', id: a }, { now: at(T0 + TTL * 1000 + 5), prepare: false });
    assert.deepEqual(shown.reply, { ok: false, expired: true, error: `approval ${a} has expired; nothing was applied (reported as an approval-expired alert)`, exitCode: 1 });
    assert.equal(shown.alerts.filter((x) => x.reason === 'approval-expired').length, 1);
    const b = view((await proposeCap(t, 21, {}, T0)).reply).id;
    // Another file's request: a new proposal for the same file would supersede b.
    const c = view((await op(t, { action: 'propose', changes: [{ path: 'config/guests.toml', content_b64: b64('channels = []\nfolders = []\n') }] }, { now: at(T0 + 100_000) })).reply).id;
    // At T0 + ttl + 50 s, b has expired and c has not.
    const w = writer(t, { now: at(T0 + TTL * 1000 + 50_000), prepare: false });
    try {
      const atTtl = writer(t, { now: at(T0 + TTL * 1000), prepare: false });
      try { assert.equal(sweepPending(atTtl.env), 0, 'at its ttl a record is not yet expired'); } finally { atTtl.close(); }
      assert.equal(sweepPending(w.env), 1, 'one expired');
      assert.deepEqual(w.alerts.map((x) => [x.reason, x.detail?.split(' ')[1]]), [['approval-expired', b]]);
      assert.equal(sweepPending(w.env), 0);
    } finally { w.close(); }
    const d = view((await proposeCap(t, 37, {}, T0 + 100_000)).reply).id;
    // A writer start (prepareWriter) sweeps by itself.
    const late = writer(t, { now: at(T0 + 100_000 + TTL * 1000 + 1) });
    try { assert.deepEqual(late.alerts.map((x) => [x.reason, x.detail?.split(' ')[1]]).sort(), [['approval-expired', c], ['approval-expired', d]].sort()); } finally { late.close(); }
    assert.deepEqual(pendingFiles(t), []);
  });

  it('show and list: the views of what is pending', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty', TTL) });
    const a = view((await proposeCap(t, 23)).reply);
    const g = (await op(t, { action: 'propose', changes: [{ path: 'config/guests.toml', content_b64: b64('channels = []\nfolders = []\n') }] }, { now: at(T0) })).reply;
    const b = view(g);
    assert.equal(b.command, 'apply', 'the default command');
    const shown = (await op(t, { action: 'show', id: a.id }, { now: at(T0 + 1) })).reply;
    assert.deepEqual(shown, { ok: true, pending: a });
    const listed = (await op(t, { action: 'list' }, { now: at(T0 + 1) })).reply;
    assert.deepEqual(listed, { ok: true, pending: [a, b].sort((x, y) => (x.id < y.id ? -1 : 1)) });
    assert.deepEqual((await op(t, { action: 'show', id: 'zzzz9999' })).reply, { ok: false, error: 'no pending approval zzzz9999 (already answered, cancelled or expired?)', exitCode: 1 });
  });

  it('a second proposal for a path supersedes the request it covers whole, and names one that also changes other paths', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty', TTL) });
    const a = view((await proposeCap(t, 24)).reply).id;
    await op(t, { action: 'propose', changes: [{ path: 'config/guests.toml', content_b64: b64('channels = []\nfolders = []\n') }] }, { now: at(T0) });
    const second = (await proposeCap(t, 25)).reply;
    assert.deepEqual(second.superseded_requests, [a]);
    assert.equal(second.also_pending, undefined);
    assert.equal(view(second).supersedes, a);
    assert.deepEqual((await op(t, { action: 'show', id: a })).reply.ok, false, 'the superseded request is gone');
  });

  it('approved state moved on since the request: nothing applied, a fresh request against the new state', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty', TTL) });
    const id = view((await proposeCap(t, 26)).reply).id;
    const moved = orgWith(t, 30);
    await moveOn(t, Buffer.from(moved));
    const { reply } = await answer(t, id, { via: 'tty' });
    assert.equal(reply.ok, false);
    assert.equal(reply.stale, true);
    assert.equal(reply.superseded, id);
    assert.equal(reply.exitCode, 1);
    const next = view(reply);
    assert.equal(reply.error, `${ORG} changed since request ${id} was made; nothing was applied. Asking again: request ${next.id}`);
    assert.equal(next.supersedes, id);
    assert.match(next.summary, /- hourly_cap = 30\n {2}\+ hourly_cap = 26/, 'the diff against the state that would really change');
    assert.equal(text(t.p(ORG)), moved);
    assert.deepEqual(pendingFiles(t), [`${next.id}.json`]);
    const ok = (await answer(t, next.id, { via: 'tty', proposal_sha: next.proposal_sha })).reply;
    assert.equal(ok.ok, true, JSON.stringify(ok));
    assert.equal(text(t.p(ORG)), orgWith(t, 26));
  });

  it('show of a stale request replaces it before anyone is asked', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty', TTL) });
    const id = view((await proposeCap(t, 27)).reply).id;
    await moveOn(t, Buffer.from(orgWith(t, 31)));
    const { reply } = await op(t, { action: 'show', id }, { now: at(T0 + 1) });
    assert.equal(reply.stale, true);
    assert.equal(reply.superseded, id);
    assert.equal(view(reply).supersedes, id);
  });

  it('the proposal the person saw is not the one recorded: not applied, asked again', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty', TTL) });
    const id = view((await proposeCap(t, 28)).reply).id;
    const { reply } = await answer(t, id, { via: 'tty', proposal_sha: 'a'.repeat(64) });
    assert.equal(reply.stale, true);
    assert.match(String(reply.error), new RegExp(`^the proposal of request ${id} is not the one you were shown; nothing was applied\\. Asking again: request [a-z0-9]+$`));
    assert.equal(text(t.p(ORG)), orgWith(t, 20));
  });

  it('a stale request that is no longer valid against the new state: nothing applied, no new request', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty', TTL) });
    const id = view((await op(t, { action: 'propose', changes: [{ path: ORG, content_b64: null, keep: true, mode: 0o600 }] }, { now: at(T0) })).reply).id;
    await moveOn(t, null);
    const { reply } = await answer(t, id, { via: 'tty' });
    assert.equal(reply.ok, false);
    assert.equal(reply.stale, true);
    assert.equal(reply.error, `${ORG} changed since request ${id} was made; nothing was applied, and the change is no longer valid against the new state: ${ORG} is not in the baseline; give its content with --from`);
    assert.deepEqual(pendingFiles(t), []);
    assert.equal(existsSync(t.p(ORG)), false);
  });

  it('a sweep reports a forged record, and not one that vanished meanwhile (deleted from outside during the sweep)', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty', TTL) });
    const ids = [view((await proposeCap(t, 38)).reply).id, view((await proposeCap(t, 39)).reply).id].sort();
    writeFileSync(t.p(`snapshots/pending/${ids[0]}.json`), 'forged');
    const w = writer(t, { now: at(T0 + 1), prepare: false });
    try {
      const raise = w.env.raise;
      // The first report is the moment the second record goes (say, removed by hand).
      w.env.raise = (a) => { raise(a); rmSync(t.p(`snapshots/pending/${ids[1]}.json`), { force: true }); };
      assert.equal(sweepPending(w.env), 0);
      assert.deepEqual(w.alerts.map((a) => [a.reason, a.path]), [['baseline-tampered', `snapshots/pending/${ids[0]}.json`]]);
    } finally { w.close(); }
    assert.deepEqual(pendingFiles(t), []);
  });

  it('keys re-entered unchanged are kept with the request, and count when it is approved', async () => {
    const toml = tomlWith('tty', TTL) + '\n[credentials.groups.anthropic]\nkeys = ["api_key", "org_id"]\n';
    const t = R.make({ wardenToml: toml });
    writeFileSync(t.p('config/credentials.toml'), text(t.p('config/credentials.toml')) + 'org_id = "org-1"\n');
    const { initRoot } = await import('../../src/changes/init.js');
    await initRoot(t.root, { force: false });
    const next = b64(text(t.p('config/credentials.toml')).replace('sk-ant-EXAMPLE-not-a-real-key', 'sk-ant-NEW-0003'));
    const v = view((await op(t, { action: 'propose', changes: [{ path: 'config/credentials.toml', content_b64: next }], command: 'cred rotate anthropic', confirmed: ['anthropic.org_id'] }, { now: at(T0) })).reply);
    const ok = (await answer(t, v.id, { via: 'tty' })).reply;
    assert.equal(ok.ok, true, JSON.stringify(ok));
    assert.match(text(t.p('config/credentials.toml')), /sk-ant-NEW-0003/);
  });

  it('a forged pending record: refused, reported as baseline-tampered and removed', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty', TTL) });
    const id = view((await proposeCap(t, 29)).reply).id;
    const f = t.p(`snapshots/pending/${id}.json`);
    writeFileSync(f, readFileSync(f, 'utf8').replace('hourly_cap = 29', 'hourly_cap = 99'));
    writeFileSync(f, Buffer.concat([readFileSync(f), Buffer.from(' ')]));
    const { reply, alerts } = await op(t, { action: 'show', id }, { now: at(T0 + 1), prepare: false });
    assert.deepEqual(reply, { ok: false, error: `snapshots/pending/${id}.json was not written by warden (HMAC mismatch)`, exitCode: 1 });
    assert.deepEqual(alerts.map((a) => [a.reason, a.path, a.detail]), [['baseline-tampered', `snapshots/pending/${id}.json`, `snapshots/pending/${id}.json was not written by warden (HMAC mismatch); removed, never applied`]]);
    assert.deepEqual(pendingFiles(t), []);
    const id2 = view((await proposeCap(t, 32)).reply).id;
    writeFileSync(t.p(`snapshots/pending/${id2}.json`), 'junk');
    const ans = await answer(t, id2, { via: 'tty' }, T0 + 1000, false);
    assert.equal(ans.reply.error, `snapshots/pending/${id2}.json was not written by warden (HMAC mismatch)`);
    assert.equal(ans.alerts.filter((a) => a.reason === 'baseline-tampered').length, 1);
    assert.equal(text(t.p(ORG)), orgWith(t, 20));
  });
});

describe('approval owner-code', () => {
  function codeOf(t: TestRoot, id: string): string {
    const lines = readFileSync(t.p('snapshots/outbox/messages.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: string; kind: string; text: string; time: string });
    const m = lines.find((l) => l.id === `approval-${id}`);
    assert.ok(m, `a message for ${id}`);
    assert.equal(m.kind, 'owner-code');
    const code = /one-time code (\d{8}) approves request /.exec(m.text)?.[1];
    assert.ok(code, m.text);
    assert.equal(m.text, `warden: one-time code ${code} approves request ${id}: 'warden edit orgs/bookclub.toml' by ${osUser()} (${ORG}). It expires 2026-12-01T12:10:00.000Z. If you did not ask for this, do nothing: 'warden deny ${id}'.`);
    assert.equal(m.time, '2026-12-01T12:00:00.000Z');
    return code;
  }

  it('the code is queued for the owner; no code, a wrong code, then the right one (trimmed) applies', async () => {
    const t = await R.init({ wardenToml: tomlWith('owner-code', TTL) });
    const v = view((await proposeCap(t, 33)).reply);
    assert.equal(v.approval, 'owner-code');
    const code = codeOf(t, v.id);
    const none = (await answer(t, v.id, { via: 'tty' })).reply;
    assert.deepEqual(none, { ok: false, needCode: true, error: `request ${v.id} needs the one-time code queued for the owner's channels: 'warden approve ${v.id} --code CODE'`, exitCode: 2 });
    const blank = (await answer(t, v.id, { code: '   ' })).reply;
    assert.equal(blank.needCode, true);
    const wrong = String((Number(code) + 1) % 100_000_000).padStart(8, '0');
    const w1 = (await answer(t, v.id, { code: wrong })).reply;
    assert.deepEqual(w1, { ok: false, wrongCode: true, attempts_left: 2, error: `wrong code for request ${v.id}; 2 attempt(s) left`, exitCode: 1 });
    const shown = view((await op(t, { action: 'show', id: v.id }, { now: at(T0 + 1) })).reply);
    assert.equal(shown.attempts_left, 2, 'the attempt is recorded');
    const ok = (await answer(t, v.id, { code: ` ${code}\n` })).reply;
    assert.equal(ok.ok, true, JSON.stringify(ok));
    assert.equal(text(t.p(ORG)), orgWith(t, 33));
  });

  it(`${MAX_CODE_ATTEMPTS} wrong codes cancel the request and alert the owner`, async () => {
    const t = await R.init({ wardenToml: tomlWith('owner-code', TTL) });
    const v = view((await proposeCap(t, 34)).reply);
    const code = codeOf(t, v.id);
    const wrong = code === '00000000' ? '00000001' : '00000000';
    assert.equal((await answer(t, v.id, { code: wrong })).reply.attempts_left, 2);
    assert.equal((await answer(t, v.id, { code: wrong })).reply.attempts_left, 1);
    const last = await answer(t, v.id, { code: wrong });
    assert.deepEqual(last.reply, { ok: false, refused: true, error: `wrong code 3 times: request ${v.id} is cancelled and the owner was alerted; nothing was changed`, exitCode: 1 });
    assert.deepEqual(last.alerts.map((a) => [a.reason, a.path, a.action]), [['approval-refused', ORG, 'flagged']]);
    assert.equal(last.alerts[0]!.detail, `a wrong one-time code was given 3 times for approval ${v.id} ('warden edit orgs/bookclub.toml' by ${osUser()}); the change was cancelled, nothing was applied`);
    assert.deepEqual(pendingFiles(t), []);
    assert.equal((await answer(t, v.id, { code })).reply.ok, false, 'the right code is too late');
    assert.equal(text(t.p(ORG)), orgWith(t, 20));
  });

  it('the code message names every path of the request', async () => {
    const t = await R.init({ wardenToml: tomlWith('owner-code', TTL) });
    const v = view((await op(t, { action: 'propose', changes: [{ path: ORG, content_b64: b64(orgWith(t, 2)) }, { path: 'config/guests.toml', content_b64: b64('channels = []\nfolders = []\n') }] }, { now: at(T0) })).reply);
    const msg = readFileSync(t.p('snapshots/outbox/messages.jsonl'), 'utf8');
    assert.ok(msg.includes(`'warden apply' by ${osUser()} (${ORG}, config/guests.toml). It expires`), msg);
    assert.deepEqual(v.paths, [ORG, 'config/guests.toml']);
  });

  it('a record without a code HMAC accepts no code', async () => {
    const t = await R.init({ wardenToml: tomlWith('owner-code', TTL) });
    const v = view((await proposeCap(t, 35)).reply);
    const code = codeOf(t, v.id);
    const w = writer(t, { prepare: false });
    try {
      const { readPending, writePending } = await import('../../src/changes/pending.js');
      const r = readPending(w.loaded.store.fd, w.env.key, v.id);
      assert.ok(r.ok);
      delete r.rec.code_hmac;
      writePending(w.loaded.store.fd, w.env.key, r.rec);
    } finally { w.close(); }
    assert.equal((await answer(t, v.id, { code })).reply.wrongCode, true);
  });

  it('the code cannot be queued (the outbox is a link): nothing is requested', async () => {
    const t = await R.init({ wardenToml: tomlWith('owner-code', TTL) });
    rmSync(t.p('snapshots/outbox'), { recursive: true, force: true });
    mkdirSync(join(t.outside, 'box'));
    symlinkSync(join(t.outside, 'box'), t.p('snapshots/outbox'));
    const { reply } = await proposeCap(t, 36);
    assert.equal(reply.ok, false);
    assert.match(String(reply.error), /^cannot queue the one-time code for the owner in snapshots\/outbox \([A-Z]+\); nothing was requested or changed$/);
    assert.equal(reply.exitCode, 1);
    assert.deepEqual(pendingFiles(t), []);
    assert.deepEqual(readdirSync(join(t.outside, 'box')), []);
  });
});
