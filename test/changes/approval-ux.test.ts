/**
 * Approvals as a person meets them (docs/CONTRACT.md §Changes): owner-code without a channel that
 * can carry the code is a configuration error; "queued", not "sent", while no notifier
 * runs; staleness decided before the question; each message once; the hidden prompt
 * switched to no-echo before it is printed (a value typed or pasted the instant the
 * prompt appears never reaches the screen). Real CLI and daemon; a pty for the prompts.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { DiscordEmulator } from '../helpers/discord-emulator.js';
import { TOKEN } from '../notifier/helpers.js';
import { join } from 'node:path';
import { cli, makeInitRoot, makeRoot, startDaemon, fileSha, waitFor, type Daemon, type TestRoot } from '../helpers/root.js';
import { ptyCli } from '../helpers/pty.js';
import { capProposal, discordPair, outboxCodes, run, wardenToml } from './helpers.js';

const ORG = 'orgs/bookclub.toml';
let t: TestRoot;
let d: Daemon | null = null;

const setup = (approval: string): void => { t = makeInitRoot({ wardenToml: wardenToml({ approval }) }); };
const proposal = (cap: number): string => capProposal(t, cap, ORG);

const pty = (answers: [string, string][], args: string[]) => ptyCli(t, answers, args);

const count = (s: string, re: RegExp): number => (s.match(new RegExp(re.source, 'g')) ?? []).length;

afterEach(async () => {
  if (d) await d.stop();
  d = null;
  t.cleanup();
});

describe('owner-code needs a channel that can carry the code', () => {
  it('without [notify.discord] it is a configuration error naming the key: init refuses, and so does a change to it', () => {
    t = makeRoot({ wardenToml: wardenToml().replace('approval = "none"', 'approval = "owner-code"') });
    const r = cli(t, ['init']);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, /approval.*owner-code.*\[notify\.discord\]/s);
    assert.match(r.stderr, /config\/warden\.toml:1:1/, 'the error names the file, line and column of the key');
    t.cleanup();
    setup('none');
    const next = join(t.base, 'warden.toml');
    writeFileSync(next, readFileSync(t.p('config/warden.toml'), 'utf8').replace('approval = "none"', 'approval = "owner-code"'));
    const before = fileSha(t.p('config/warden.toml'));
    const a = cli(t, ['apply', 'config/warden.toml', '--from', next]);
    assert.equal(a.code, 1, a.stderr);
    assert.match(a.stderr, /key approval|approval.*needs a channel/);
    assert.equal(fileSha(t.p('config/warden.toml')), before);
  });

  it('says "queued", not "sent", while no notifier is running', async () => {
    setup('owner-code');
    d = await startDaemon(t); // --guard: no notifier in this process, none elsewhere
    const s = await run(t, ['apply', ORG, '--from', proposal(41)]);
    assert.equal(s.code, 0, s.stderr);
    assert.match(s.stdout, /queued for the owner's Discord/);
    assert.match(s.stdout, /no notifier is running/);
    assert.doesNotMatch(s.stdout + s.stderr, /sent to|went to/);
    assert.ok(outboxCodes(t).length === 1, 'the code is in the outbox');
  });
});

describe('"sent" only when a notifier is running', () => {
  it('with the embedded notifier and a Discord channel it says "sent", and the DM carries the code', async () => {
    const emu = new DiscordEmulator(TOKEN);
    await emu.start();
    try {
      const tokenFile = join(tmpdir(), `warden-i14-token-${process.pid}`);
      writeFileSync(tokenFile, TOKEN + '\n', { mode: 0o600 });
      t = makeRoot({ wardenToml: wardenToml({ approval: 'owner-code', extra: `\n[notify]\nmin_interval_seconds = 0\n\n[notify.discord]\ntoken_file = "${tokenFile}"\napi = "${emu.api}"\n` }) });
      assert.equal(cli(t, ['init']).code, 0);
      d = await startDaemon(t, []); // guard + notifier in one process
      await waitFor(() => existsSync(t.p('snapshots/notify/delivery-state.json')), 10_000, 'the notifier state');
      const s = await run(t, ['apply', ORG, '--from', proposal(45)]);
      assert.equal(s.code, 0, s.stderr);
      assert.match(s.stdout, /sent to the owner's Discord/);
      const id = /request ([a-z0-9]+)/.exec(s.stdout)?.[1] ?? '';
      await waitFor(() => emu.messages.some((m) => m.content.includes(id)), 10_000, 'the code delivered');
      rmSync(tokenFile, { force: true });
    } finally { await emu.stop(); }
  });
});

describe('each message once', () => {
  it('a wrong code prints its refusal once', async () => {
    setup('owner-code');
    const s = await run(t, ['apply', ORG, '--from', proposal(42)]);
    const id = /request ([a-z0-9]+)/.exec(s.stdout)?.[1] ?? '';
    const code = outboxCodes(t).find((m) => m.request === id)!.code;
    const bad = code === '11111111' ? '22222222' : '11111111';
    const r = await run(t, ['approve', id, '--code', bad]);
    assert.equal(r.code, 1);
    assert.equal(count(r.stderr, /wrong code for request/), 1, r.stderr);
  });
});

describe('staleness is decided before asking', () => {
  it('a tty request made stale by a later change is replaced before the y/N question, which shows the diff against the new state', async () => {
    setup('tty');
    d = await startDaemon(t);
    // It also changes another file, so the next proposal for ORG alone does not supersede it.
    const guests = join(t.base, 'guests-next.toml');
    writeFileSync(guests, `${readFileSync(t.p('config/guests.toml'), 'utf8')}\n# reviewed\n`);
    const s = await run(t, ['apply', ORG, '--from', proposal(31), 'config/guests.toml', '--from', guests]);
    const first = /request ([a-z0-9]+)/.exec(s.stdout)?.[1] ?? '';
    assert.ok(first);
    const b = pty([['\\[y/N\\] ', 'y\r']], ['apply', ORG, '--from', proposal(32)]);
    assert.equal(b.code, 0, b.out);
    const r = pty([['Apply request [a-z0-9]+\\? \\[y/N\\] ', 'y\r']], ['approve', first]);
    assert.equal(r.code, 0, r.out);
    assert.doesNotMatch(r.out, new RegExp(`Apply request ${first}\\?`), 'never asked about the stale request');
    assert.match(r.out, new RegExp(`changed since request ${first} was made; nothing was applied\\. Asking again: request [a-z0-9]+`));
    assert.equal(count(r.out, /\[y\/N\]/), 1, 'asked once');
    assert.match(r.out, /- hourly_cap = 32/);
    assert.match(readFileSync(t.p(ORG), 'utf8'), /hourly_cap = 31/);
  });
});

describe('the hidden prompt', () => {
  it('a value typed the instant the prompt appears, and a paste of every answer at once, never reach the screen', () => {
    setup('none');
    const v = discordPair('8642');
    // Every answer pasted in one write at the first prompt: the terminal is already in
    // no-echo mode, and stays so between the prompts.
    const r = pty([['new value for discord\\.token \\(hidden\\): ', `${v.token}\r${v.token}\r${v.application_id}\r${v.application_id}\r`]],
      ['cred', 'set', 'discord.token', 'discord.application_id']);
    assert.equal(r.code, 0, r.out);
    assert.ok(!r.out.includes(v.token) && !r.out.includes(v.application_id), `nothing echoed:\n${r.out}`);
    assert.ok(readFileSync(t.p('config/credentials.toml'), 'utf8').includes(v.token));
    // And typed answer by answer, each the instant its prompt appears.
    const w = discordPair('8643');
    const r2 = pty([
      ['new value for discord\\.token \\(hidden\\): ', `${w.token}\r`], ['again, to confirm discord\\.token \\(hidden\\): ', `${w.token}\r`],
      ['new value for discord\\.application_id \\(hidden\\): ', `${w.application_id}\r`], ['again, to confirm discord\\.application_id \\(hidden\\): ', `${w.application_id}\r`],
    ], ['cred', 'set', 'discord.token', 'discord.application_id']);
    assert.equal(r2.code, 0, r2.out);
    assert.ok(!r2.out.includes(w.token) && !r2.out.includes(w.application_id), `nothing echoed:\n${r2.out}`);
  });
});
