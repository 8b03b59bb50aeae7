/**
 * Credential groups as real owners meet them (docs/CONTRACT.md §Credentials): a Discord token reset
 * (new token, same application_id) through `cred rotate`, `cred set` and `edit`; a group
 * without a check changing whole, with values re-entered unchanged counting as
 * confirmed; refusals that name the keys and never suggest the command just refused; a
 * mistyped key refused with "did you mean". Real CLI and daemon, approval "none".
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, makeRoot, readAlertsOf, startDaemon, fileSha, type CliResult, type Daemon, type TestRoot } from '../helpers/root.js';
import { assertNoSecretLeaked, discordPair, gitLog, run, wardenToml } from './helpers.js';

const CRED = 'config/credentials.toml';
const APP_ID = '111111111111111111'; // the example root's application_id
let t: TestRoot;
let d: Daemon | null = null;
const outputs: CliResult[] = [];
const secrets: string[] = [];

async function w(args: string[], input = ''): Promise<CliResult> {
  const r = await run(t, args, { input });
  outputs.push(r);
  return r;
}

/** A root whose credentials also hold a [mail] group with no check: user and password change together. */
async function setup(): Promise<void> {
  t = makeRoot({ wardenToml: wardenToml() });
  writeFileSync(t.p(CRED), readFileSync(t.p(CRED), 'utf8') + '\n[mail]\nuser = "bot@example.org"\npassword = "mail-pass-OLD-value"\n');
  chmodSync(t.p(CRED), 0o600);
  secrets.push('mail-pass-OLD-value');
  const init = cli(t, ['init']);
  assert.equal(init.code, 0, init.stderr);
  d = await startDaemon(t);
}

/** A new token for the SAME application id: what Discord's "Reset Token" hands out. */
function resetToken(seed: string): string {
  const tok = `${Buffer.from(APP_ID).toString('base64')}.${seed}.reset-${seed}-secret`;
  secrets.push(tok);
  return tok;
}

afterEach(async () => {
  if (d) await d.stop();
  assertNoSecretLeaked(t, secrets, [...outputs.map((o) => o.stdout + o.stderr), d?.stderr() ?? '']);
  d = null;
  outputs.length = 0;
  secrets.length = 0;
  t.cleanup();
});

describe('a Discord token reset (new token, same application_id) is a consistent change', () => {
  it('cred rotate discord, re-entering the unchanged application_id', async () => {
    await setup();
    const tok = resetToken('R1');
    const r = await w(['cred', 'rotate', 'discord'], `${tok}\n${APP_ID}\n`);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /~ discord\.token {2}[0-9a-f]{12} → [0-9a-f]{12}/);
    const text = readFileSync(t.p(CRED), 'utf8');
    assert.ok(text.includes(`token = "${tok}"`) && text.includes(`application_id = "${APP_ID}"`));
    assert.match(gitLog(t), /command: warden cred rotate discord/);
    assert.equal(readAlertsOf(t).length, 0, 'the daemon did not fight the change');
  });

  it('cred set discord.token alone', async () => {
    await setup();
    const tok = resetToken('R2');
    const r = await w(['cred', 'set', 'discord.token'], `${tok}\n`);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(readFileSync(t.p(CRED), 'utf8').includes(tok));
  });

  it('warden edit config/credentials.toml with the new token', async () => {
    await setup();
    const tok = resetToken('R3');
    const ed = join(t.base, 'editor.sh');
    writeFileSync(ed, `#!/bin/sh\nsed -i 's|^token = .*|token = "${tok}"|' "$1"\n`, { mode: 0o755 });
    const r = await run(t, ['edit', CRED], { env: { EDITOR: ed } });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(readFileSync(t.p(CRED), 'utf8').includes(tok));
  });
});

describe('refusals', () => {
  it('a token that does not match the application_id: names the keys, never suggests the refused command', async () => {
    await setup();
    const before = fileSha(t.p(CRED));
    const v = discordPair('9090');
    secrets.push(v.token);
    const r = await w(['cred', 'rotate', 'discord'], `${v.token}\n${APP_ID}\n`);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /check "discord-token" fails/);
    assert.match(r.stderr, /discord\.token/);
    assert.match(r.stderr, /discord\.application_id/);
    assert.doesNotMatch(r.stderr, /'warden cred rotate discord'/, 'the refusal does not suggest the command just refused');
    assert.equal(fileSha(t.p(CRED)), before);
  });

  it('a group without a check: half a group is refused before any value is asked for, naming the key', async () => {
    await setup();
    const before = fileSha(t.p(CRED));
    const r = await w(['cred', 'set', 'mail.password'], '');
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /must come along: mail\.user/);
    assert.doesNotMatch(r.stderr, /stdin ended/, 'refused before reading any value');
    assert.doesNotMatch(r.stderr, /'warden cred set mail\.password'/);
    assert.match(r.stderr, /'warden cred rotate mail'/);
    assert.equal(fileSha(t.p(CRED)), before);
  });

  it('a group without a check: apply of the file with one of its two keys changed alone is refused, nothing changed, nothing recorded', async () => {
    await setup();
    const before = fileSha(t.p(CRED));
    const gen = JSON.parse(cli(t, ['status', '--json']).stdout).generation;
    secrets.push('mail-pass-HALF-value');
    const next = readFileSync(t.p(CRED), 'utf8').replace('password = "mail-pass-OLD-value"', 'password = "mail-pass-HALF-value"');
    const r = await w(['apply', CRED, '--from', '-'], next);
    assert.notEqual(r.code, 0, `refused: ${r.stdout}${r.stderr}`);
    assert.match(r.stderr, /half-applied: .*mail.*password.* would change but .*user.* would not; keys of group mail change together, so these must come along/);
    assert.equal(fileSha(t.p(CRED)), before, 'the file is as approved');
    assert.equal(JSON.parse(cli(t, ['status', '--json']).stdout).generation, gen, 'no new generation');
  });

  it('cred rotate of a group without a check accepts a value re-entered unchanged (confirmed)', async () => {
    await setup();
    secrets.push('mail-pass-NEW-value');
    const r = await w(['cred', 'rotate', 'mail'], 'bot@example.org\nmail-pass-NEW-value\n');
    assert.equal(r.code, 0, r.stderr);
    const text = readFileSync(t.p(CRED), 'utf8');
    assert.ok(text.includes('password = "mail-pass-NEW-value"') && text.includes('user = "bot@example.org"'));
  });

  it('a mistyped key (discord.tokn) is refused with "did you mean discord.token", before any value is read', async () => {
    await setup();
    const before = fileSha(t.p(CRED));
    const r = await w(['cred', 'set', 'discord.tokn'], 'some-value-that-is-never-read\n');
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /did you mean discord\.token\?/);
    assert.equal(fileSha(t.p(CRED)), before);
    assert.doesNotMatch(readFileSync(t.p(CRED), 'utf8'), /tokn/);
    const g = await w(['cred', 'rotate', 'discrod'], '');
    assert.equal(g.code, 1);
    assert.match(g.stderr, /did you mean discord\?/);
  });

  it('--new adds a key on purpose', async () => {
    await setup();
    secrets.push('slack-token-value-1');
    const refused = await w(['cred', 'set', 'slack.token'], 'slack-token-value-1\n');
    assert.equal(refused.code, 1, 'a new group is not made by accident');
    assert.match(refused.stderr, /no credential group "slack"/);
    const r = await w(['cred', 'set', '--new', 'slack.token'], 'slack-token-value-1\n');
    assert.equal(r.code, 0, r.stderr);
    assert.match(readFileSync(t.p(CRED), 'utf8'), /\[slack\]\ntoken = "slack-token-value-1"/);
  });
});
