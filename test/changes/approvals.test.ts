/**
 * Approvals (docs/CONTRACT.md §Changes) through the real CLI and daemon: tty (on a pseudo-terminal made by
 * python3's pty module), owner-code (the code is read from snapshots/outbox/messages.jsonl),
 * three wrong codes, deny, a stale request recomputed and asked again, an expired request
 * reported after a daemon restart, and the pending state surviving restarts.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeInitRoot, readAlertsOf, startDaemon, waitFor, fileSha, treeSnapshot, type Daemon, type TestRoot } from '../helpers/root.js';
import { ptyCli } from '../helpers/pty.js';
import { capProposal, discordPair, gitLog, outboxCodes, run, wardenToml } from './helpers.js';

const ORG = 'orgs/bookclub.toml';
let t: TestRoot;
let d: Daemon | null = null;
const secrets: string[] = [];

const setup = (approval: string, ttl?: number): void => { t = makeInitRoot({ wardenToml: wardenToml({ approval, ...(ttl ? { ttl } : {}) }) }); };
const proposal = (cap: number): string => capProposal(t, cap, ORG);
const GUESTS = 'config/guests.toml';
const guestsProposal = (): string => { const p = join(t.base, 'guests-next.toml'); writeFileSync(p, `${readFileSync(t.p(GUESTS), 'utf8')}\n# reviewed\n`); return p; };

const pty = (answers: [string, string][], args: string[], env: NodeJS.ProcessEnv = {}) => ptyCli(t, answers, args, env);

const pendingId = (stdout: string): string => /request ([a-z0-9]+)/.exec(stdout)?.[1] ?? '';

afterEach(async () => {
  if (d) await d.stop();
  d = null;
  const everything = [readAlertsOf(t).map((a) => JSON.stringify(a)).join('\n'), gitLog(t)].join('\n');
  for (const s of secrets) assert.ok(!everything.includes(s), 'no credential value leaked');
  secrets.length = 0;
  t.cleanup();
});

describe('a pending request not written by warden', () => {
  it('is refused for its HMAC, named as such; never applied', async () => {
    setup('tty');
    d = await startDaemon(t);
    const before = fileSha(t.p(ORG));
    const s = await run(t, ['apply', ORG, '--from', proposal(41)]);
    assert.equal(s.code, 0, s.stderr);
    const id = pendingId(s.stdout);
    const file = t.p(`snapshots/pending/${id}.json`);
    // Forge it: the same record with another command line, its HMAC left as it was.
    writeFileSync(file, readFileSync(file, 'utf8').replace(/"command":"[^"]*"/, '"command":"forged"'));
    const a = await run(t, ['approve', id]);
    assert.notEqual(a.code, 0, a.stdout);
    assert.match(a.stdout + a.stderr, new RegExp(`snapshots/pending/${id}\\.json was not written by warden \\(HMAC mismatch\\)`));
    assert.equal(fileSha(t.p(ORG)), before, 'nothing applied');
    // Reported at once (not at the next expiry sweep, up to a minute away) and set aside.
    const flagged = await waitFor(() => readAlertsOf(t).find((x) => x.path === `snapshots/pending/${id}.json`), 5_000, 'the alert for the forged request');
    assert.equal(flagged.reason, 'baseline-tampered', JSON.stringify(flagged));
    assert.match(flagged.detail ?? '', /HMAC mismatch.*removed, never applied/);
    assert.ok(!existsSync(file), 'the forged record is removed');
  });
});

describe('tty approval (pseudo-terminal)', () => {
  it('yes applies, no withdraws, no terminal leaves it pending', async () => {
    setup('tty');
    d = await startDaemon(t);
    let r = pty([['Apply request [a-z0-9]+\\? \\[y/N\\] ', 'y\r']], ['apply', ORG, '--from', proposal(31)]);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /\+ hourly_cap = 31/);
    assert.match(readFileSync(t.p(ORG), 'utf8'), /hourly_cap = 31/);
    const before = fileSha(t.p(ORG));
    r = pty([['\\[y/N\\] ', 'n\r']], ['apply', ORG, '--from', proposal(32)]);
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /not approved/);
    assert.equal(fileSha(t.p(ORG)), before);
    assert.deepEqual(readdirSync(t.p('snapshots/pending')), [], 'a refused request is withdrawn');
    // Without a terminal (a script, the agent) nothing is applied: the request waits on disk.
    const s = await run(t, ['apply', ORG, '--from', proposal(33)]);
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stdout, /pending: request/);
    assert.equal(fileSha(t.p(ORG)), before);
    const id = pendingId(s.stdout);
    assert.equal(statSync(t.p(`snapshots/pending/${id}.json`)).mode & 0o777, 0o600);
    // `approve` without a terminal cannot confirm it…
    const a = await run(t, ['approve', id]);
    assert.equal(fileSha(t.p(ORG)), before, a.stdout);
    // …on a terminal it can.
    r = pty([['\\[y/N\\] ', 'y\r']], ['approve', id]);
    assert.equal(r.code, 0, r.out);
    assert.match(readFileSync(t.p(ORG), 'utf8'), /hourly_cap = 33/);
  });

  it('cred set on a terminal: hidden prompts, the value is never echoed', async () => {
    setup('tty');
    const v = discordPair('4711');
    secrets.push(v.token, v.application_id);
    const r = pty([
      ['new value for discord\\.token \\(hidden\\): ', `${v.token}\r`], ['again, to confirm discord\\.token \\(hidden\\): ', `${v.token}\r`],
      ['new value for discord\\.application_id \\(hidden\\): ', `${v.application_id}\r`], ['again, to confirm discord\\.application_id \\(hidden\\): ', `${v.application_id}\r`],
      ['\\[y/N\\] ', 'y\r'],
    ], ['cred', 'set', 'discord.token', 'discord.application_id']);
    assert.equal(r.code, 0, r.out);
    assert.ok(!r.out.includes(v.token) && !r.out.includes(v.application_id), 'nothing echoed on the terminal');
    assert.match(r.out, /~ discord\.token {2}[0-9a-f]{12} → [0-9a-f]{12}/);
    assert.ok(readFileSync(t.p('config/credentials.toml'), 'utf8').includes(v.token));
  });
});

describe('owner-code approval', () => {
  it('the code reaches the outbox; a wrong code is refused; the right one applies', async () => {
    setup('owner-code');
    d = await startDaemon(t);
    const before = fileSha(t.p(ORG));
    const s = await run(t, ['apply', ORG, '--from', proposal(41)]);
    assert.equal(s.code, 0, s.stderr);
    const id = pendingId(s.stdout);
    assert.ok(id);
    const msg = outboxCodes(t).find((m) => m.request === id);
    assert.ok(msg?.code, 'a one-time code was queued for the owner');
    assert.ok(!s.stdout.includes(msg.code) && !s.stderr.includes(msg.code), 'the code is not shown to the proposer');
    const wrong = await run(t, ['approve', id, '--code', '00000000'.replace(/0$/, msg.code.endsWith('1') ? '2' : '1')]);
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /wrong code .* 2 attempt\(s\) left/);
    assert.equal(fileSha(t.p(ORG)), before);
    const ok = await run(t, ['approve', id, '--code', msg.code]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(readFileSync(t.p(ORG), 'utf8'), /hourly_cap = 41/);
    assert.match(gitLog(t), /command: warden apply orgs\/bookclub\.toml/);
    const again = await run(t, ['approve', id, '--code', msg.code]);
    assert.equal(again.code, 1, 'a request is applied once');
  });

  it('three wrong codes cancel the request and raise approval-refused (daemon stopped: under the lock)', async () => {
    setup('owner-code');
    const before = fileSha(t.p(ORG));
    const s = await run(t, ['apply', ORG, '--from', proposal(42)]);
    const id = pendingId(s.stdout);
    const code = outboxCodes(t).find((m) => m.request === id)!.code;
    const bad = code === '11111111' ? '22222222' : '11111111';
    for (let i = 0; i < 3; i++) assert.equal((await run(t, ['approve', id, '--code', bad])).code, 1);
    const a = readAlertsOf(t).find((x) => x.reason === 'approval-refused');
    assert.ok(a, 'approval-refused alert');
    assert.equal(a.path, ORG);
    const late = await run(t, ['approve', id, '--code', code]);
    assert.equal(late.code, 1, 'cancelled: even the right code does nothing now');
    assert.equal(fileSha(t.p(ORG)), before);
  });

  it('snapshots/outbox swapped for a link outside the root (daemon stopped): no code written through it, no request left', async () => {
    setup('owner-code');
    const before = fileSha(t.p(ORG));
    mkdirSync(join(t.outside, 'outbox'));
    writeFileSync(join(t.outside, 'outbox', 'messages.jsonl'), '');
    rmSync(t.p('snapshots/outbox'), { recursive: true, force: true });
    symlinkSync(join(t.outside, 'outbox'), t.p('snapshots/outbox'));
    const outside = treeSnapshot(t.outside);
    const s = await run(t, ['apply', ORG, '--from', proposal(44)]);
    assert.equal(s.code, 1, s.stdout + s.stderr);
    assert.match(s.stderr, /cannot queue the one-time code .*snapshots\/outbox.*nothing was requested/);
    assert.deepEqual(treeSnapshot(t.outside), outside, 'nothing written outside the root');
    assert.equal(readFileSync(join(t.outside, 'outbox', 'messages.jsonl'), 'utf8'), '', 'the code did not reach the attacker');
    assert.deepEqual(readdirSync(t.p('snapshots/pending')).filter((f) => f.endsWith('.json')), [], 'the unanswerable request was withdrawn');
    assert.equal(fileSha(t.p(ORG)), before);
  });

  it('snapshots/outbox swapped for a link while the guard runs: the link is quarantined, never followed; the code goes to the real outbox', async () => {
    setup('owner-code');
    d = await startDaemon(t);
    mkdirSync(join(t.outside, 'outbox'));
    writeFileSync(join(t.outside, 'outbox', 'messages.jsonl'), '');
    rmSync(t.p('snapshots/outbox'), { recursive: true, force: true });
    symlinkSync(join(t.outside, 'outbox'), t.p('snapshots/outbox'));
    const outside = treeSnapshot(t.outside);
    await waitFor(() => readAlertsOf(t).some((a) => a.reason === 'baseline-tampered' && a.path === 'snapshots/outbox'), 10_000, 'the planted link reported');
    assert.ok(lstatSync(t.p('snapshots/outbox')).isDirectory(), 'recreated as a directory');
    const s = await run(t, ['apply', ORG, '--from', proposal(44)]);
    const id = pendingId(s.stdout);
    assert.ok(outboxCodes(t).some((m) => m.request === id), 'the code is in the real outbox');
    assert.deepEqual(treeSnapshot(t.outside), outside, 'nothing written outside the root');
    assert.equal(readFileSync(join(t.outside, 'outbox', 'messages.jsonl'), 'utf8'), '', 'the code did not reach the attacker');
  });

  it('deny drops the request', async () => {
    setup('owner-code');
    const before = fileSha(t.p(ORG));
    const id = pendingId((await run(t, ['apply', ORG, '--from', proposal(43)])).stdout);
    const code = outboxCodes(t).find((m) => m.request === id)!.code;
    assert.equal((await run(t, ['deny', id])).code, 0);
    assert.equal((await run(t, ['approve', id, '--code', code])).code, 1);
    assert.equal(fileSha(t.p(ORG)), before);
  });

  it('a stale request is recomputed: nothing applied, asked again against the new state', async () => {
    setup('owner-code');
    d = await startDaemon(t);
    // The first request also changes another file, so the second (ORG alone) does not supersede it.
    const first = pendingId((await run(t, ['apply', ORG, '--from', proposal(51), GUESTS, '--from', guestsProposal()])).stdout);
    const code1 = outboxCodes(t).find((m) => m.request === first)!.code;
    const second = pendingId((await run(t, ['apply', ORG, '--from', proposal(52)])).stdout);
    const code2 = outboxCodes(t).find((m) => m.request === second)!.code;
    assert.equal((await run(t, ['approve', second, '--code', code2])).code, 0);
    assert.match(readFileSync(t.p(ORG), 'utf8'), /hourly_cap = 52/);
    // The first request was made against the old file: answering it applies nothing and asks again.
    const r = await run(t, ['approve', first, '--code', code1]);
    assert.match(r.stderr, /changed since request .* nothing was applied/);
    assert.match(readFileSync(t.p(ORG), 'utf8'), /hourly_cap = 52/);
    const third = /Asking again: request ([a-z0-9]+)/.exec(r.stderr)?.[1];
    assert.ok(third && third !== first);
    assert.match(r.stdout, /- hourly_cap = 52/, 'the new question shows the diff against the new state');
    const code3 = outboxCodes(t).find((m) => m.request === third)!.code;
    assert.equal((await run(t, ['approve', third, '--code', code3])).code, 0);
    assert.match(readFileSync(t.p(ORG), 'utf8'), /hourly_cap = 51/);
  });

  it('pending survives a restart; an expired one is reported after a restart and never applied', async () => {
    setup('owner-code', 3);
    d = await startDaemon(t);
    const before = fileSha(t.p(ORG));
    const s = await run(t, ['apply', ORG, '--from', proposal(61)]);
    const id = pendingId(s.stdout);
    const code = outboxCodes(t).find((m) => m.request === id)!.code;
    const expires = Date.parse(/expires (\S+)/.exec(s.stdout)![1]!);
    await d.stop();
    d = null;
    const listed = await run(t, ['approve', '--json']);
    assert.ok((JSON.parse(listed.stdout) as { id: string }[]).some((p) => p.id === id), 'still pending on disk');
    await waitFor(() => Date.now() > expires + 50, 20_000, 'the ttl to pass');
    d = await startDaemon(t);
    await waitFor(() => readAlertsOf(t).some((a) => a.reason === 'approval-expired'), 10_000, 'approval-expired alert');
    const a = readAlertsOf(t).find((x) => x.reason === 'approval-expired')!;
    assert.equal(a.path, ORG);
    assert.match(a.detail ?? '', new RegExp(id));
    assert.ok(!outboxCodes(t).some((m) => m.code === code), 'the expired request\'s code is blanked in the outbox');
    const late = await run(t, ['approve', id, '--code', code]);
    assert.equal(late.code, 1);
    assert.equal(fileSha(t.p(ORG)), before);
  });
});
