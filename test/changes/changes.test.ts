/**
 * Sanctioned changes through the real CLI and daemon: edit (scripted $EDITOR), apply, rm,
 * cred set/rotate/list, the bad-input cases of the credential commands, accept from quarantine, and a live
 * reload of warden.toml. Approval is "none" here; approvals.test.ts covers the others.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync, chmodSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import { cli, makeRoot, readAlertsOf, startDaemon, waitFor, fileSha, type Daemon, type TestRoot, type CliResult } from '../helpers/root.js';
import { assertNoSecretLeaked, discordPair, gitLog, makeTwoFileRoot, run, wardenToml } from './helpers.js';

const ORG = 'orgs/bookclub.toml';
let t: TestRoot;
let d: Daemon | null = null;
const outputs: CliResult[] = [];
const secrets: string[] = [];

async function w(args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  const r = await run(t, args, opts);
  outputs.push(r);
  return r;
}

/** `verify --json` says every protected file matches the baseline (exit 0, no drift). */
function assertClean(v: CliResult): void {
  assert.equal(v.code, 0, `verify found drift: ${v.stdout}${v.stderr}`);
  const doc = JSON.parse(v.stdout) as { clean: boolean; checked: number; drift: unknown[] };
  assert.deepEqual(doc.drift, []);
  assert.equal(doc.clean, true);
  assert.ok(doc.checked > 0, 'verify checked something');
}

function setup(opts: { twoFiles?: boolean } = {}): void {
  t = opts.twoFiles ? makeTwoFileRoot() : makeRoot({ wardenToml: wardenToml() });
  const init = cli(t, ['init']);
  assert.equal(init.code, 0, init.stderr);
}

function editorScript(body: string): string {
  const p = join(t.base, `editor-${outputs.length}-${Math.random().toString(36).slice(2)}.sh`);
  writeFileSync(p, `#!/bin/sh\nset -e\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

afterEach(async () => {
  if (d) { await d.stop(); }
  assertNoSecretLeaked(t, secrets, [...outputs.map((o) => o.stdout + o.stderr), d?.stdout() ?? '', d?.stderr() ?? '']);
  assert.equal(existsSync(t.p('snapshots/journal/intent')), false, 'no journal left behind');
  d = null;
  outputs.length = 0;
  secrets.length = 0;
  t.cleanup();
});

describe('cred', () => {
  it('set with the daemon running: values from stdin, comments kept, 0600, history has fingerprints only', async () => {
    setup();
    d = await startDaemon(t);
    const v = discordPair('1234');
    secrets.push(v.token, v.application_id, 'sk-ant-EXAMPLE-not-a-real-key');
    const before = readFileSync(t.p('config/credentials.toml'), 'utf8');
    const modeBefore = statSync(t.p('config/credentials.toml')).mode & 0o777;
    const r = await w(['cred', 'set', 'discord.token', 'discord.application_id'], { input: `${v.token}\n${v.application_id}\n` });
    assert.equal(r.code, 0, r.stderr);
    const after = readFileSync(t.p('config/credentials.toml'), 'utf8');
    assert.ok(after.includes(`token = "${v.token}"`) && after.includes(`application_id = "${v.application_id}"`));
    // Everything but the two values is byte for byte what it was.
    assert.equal(after.replace(v.token, 'T').replace(v.application_id, 'A'), before.replace(/token = "[^"]*"/, 'token = "T"').replace(/application_id = "[^"]*"/, 'application_id = "A"'));
    assert.equal(statSync(t.p('config/credentials.toml')).mode & 0o777, modeBefore, 'the approved mode is kept');
    const list = await w(['cred', 'list', '--json']);
    const rows = JSON.parse(list.stdout) as { group: string; key: string; fingerprint: string }[];
    assert.ok(rows.some((x) => x.group === 'discord' && x.key === 'token' && /^[0-9a-f]{12}$/.test(x.fingerprint)));
    assert.match(gitLog(t), /command: warden cred set discord\.token discord\.application_id/);
    assert.match(gitLog(t), /user: /);
    // The daemon did not fight its own write, and the baseline holds the new file.
    assertClean(await w(['verify', '--json']));
    assert.equal(readAlertsOf(t).length, 0, 'no alert for a sanctioned change');
  });

  it('refuses a value in argv, without echoing it', async () => {
    setup();
    const before = fileSha(t.p('config/credentials.toml'));
    secrets.push('SUPERSECRET-in-argv');
    const r = await w(['cred', 'set', 'discord.token=SUPERSECRET-in-argv']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /Never put a credential on the command line/);
    assert.match(r.stderr, /hidden prompt/);
    const r2 = await w(['cred', 'set', 'SUPERSECRET-in-argv']);
    assert.equal(r2.code, 2);
    assert.equal(fileSha(t.p('config/credentials.toml')), before);
  });

  it('refuses a half-applied change, naming the keys that must come along', async () => {
    setup();
    const before = fileSha(t.p('config/credentials.toml'));
    const r = await w(['cred', 'set', 'discord.token'], { input: 'whatever-token\n' });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /half-applied/);
    assert.match(r.stderr, /must come along: discord\.application_id/);
    assert.equal(fileSha(t.p('config/credentials.toml')), before);
  });

  it('stdin closed early changes nothing', async () => {
    setup();
    const before = fileSha(t.p('config/credentials.toml'));
    const v = discordPair('77');
    secrets.push(v.token);
    for (const input of [`${v.token}\n`, `${v.token}\n1111`, '']) {
      const r = await w(['cred', 'rotate', 'discord'], { input });
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /stdin ended before the value/);
    }
    assert.equal(fileSha(t.p('config/credentials.toml')), before);
  });

  it('the discord-token check is enforced', async () => {
    setup();
    const before = fileSha(t.p('config/credentials.toml'));
    secrets.push('bm90LXRoZS1pZA.x.y-secret');
    const r = await w(['cred', 'rotate', 'discord'], { input: 'bm90LXRoZS1pZA.x.y-secret\n999999999999999999\n' });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /discord-token/);
    assert.equal(fileSha(t.p('config/credentials.toml')), before);
  });

  it('rotate across two files (daemon stopped): one transaction, one history commit', async () => {
    setup({ twoFiles: true });
    const v = discordPair('555');
    secrets.push(v.token, v.application_id);
    const r = await w(['cred', 'rotate', 'discord'], { input: `${v.token}\n${v.application_id}\n` });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(readFileSync(t.p('config/credentials.toml'), 'utf8').includes(v.token));
    assert.ok(readFileSync(t.p('config/discord-app.toml'), 'utf8').includes(v.application_id));
    assert.match(readFileSync(t.p('config/discord-app.toml'), 'utf8'), /^# the application id of the bot/);
    assert.deepEqual(readdirSync(t.p('snapshots/journal')), [], 'journal removed');
    const log = gitLog(t);
    assert.match(log, /paths: config\/credentials\.toml, config\/discord-app\.toml/);
    d = await startDaemon(t);
    assert.equal(readAlertsOf(t).length, 0, 'the daemon accepts the rotated set as approved');
  });

  it('rotate across two files with the daemon running', async () => {
    setup({ twoFiles: true });
    d = await startDaemon(t);
    const v = discordPair('556');
    secrets.push(v.token, v.application_id);
    const r = await w(['cred', 'rotate', 'discord'], { input: `${v.token}\n${v.application_id}\n` });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(readFileSync(t.p('config/discord-app.toml'), 'utf8').includes(v.application_id));
    // A half edit by hand is reverted as half-applied.
    writeFileSync(t.p('config/discord-app.toml'), '[discord]\napplication_id = "999999999999999999"\n');
    await waitFor(() => readAlertsOf(t).some((a) => a.path === 'config/discord-app.toml'), 10_000, 'revert');
    await waitFor(() => readFileSync(t.p('config/discord-app.toml'), 'utf8').includes(v.application_id), 10_000, 'restored');
  });
});

describe('edit', () => {
  it('a scripted $EDITOR edit is validated, applied through the daemon and committed', async () => {
    setup();
    d = await startDaemon(t);
    const ed = editorScript(`sed -i 's/hourly_cap = 20/hourly_cap = 7/' "$1"`);
    const r = await w(['edit', ORG], { env: { EDITOR: ed, VISUAL: '' } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /- hourly_cap = 20/);
    assert.match(r.stdout, /\+ hourly_cap = 7/);
    assert.match(readFileSync(t.p(ORG), 'utf8'), /hourly_cap = 7/);
    assert.match(gitLog(t), /command: warden edit orgs\/bookclub\.toml/);
    assert.equal(readAlertsOf(t).length, 0);
  });

  it('invalid content is never installed: located errors, then re-edit or abandon', async () => {
    setup();
    const before = fileSha(t.p(ORG));
    const counter = join(t.base, 'count');
    const orig = join(t.base, 'orig.toml');
    writeFileSync(orig, readFileSync(t.p(ORG)));
    const ed = editorScript(`n=$(cat "${counter}" 2>/dev/null || echo 0); echo $((n+1)) > "${counter}"
if [ "$n" = 0 ]; then printf 'members = ["1"\\nhourly_cap = 3\\n' > "$1"; else sed 's/hourly_cap = 20/hourly_cap = 9/' "${orig}" > "$1"; fi`);
    // First answer "e": the editor runs again on the same copy and the second version is valid.
    const r = await w(['edit', ORG], { env: { EDITOR: ed }, input: 'e\n' });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /orgs\/bookclub\.toml:\d+:\d+/, 'a TOML error with line and column');
    assert.match(readFileSync(t.p(ORG), 'utf8'), /hourly_cap = 9/);
    assert.equal(readFileSync(counter, 'utf8').trim(), '2');
    // Abandon: nothing changes.
    const mid = fileSha(t.p(ORG));
    const ed2 = editorScript(`printf 'hourly_cap = -5\\nbogus = 1\\n' > "$1"`);
    const r2 = await w(['edit', ORG], { env: { EDITOR: ed2 }, input: 'a\n' });
    assert.equal(r2.code, 1);
    assert.match(r2.stderr, /bogus|hourly_cap/);
    assert.match(r2.stderr, /abandoned/);
    assert.equal(fileSha(t.p(ORG)), mid);
    assert.notEqual(mid, before);
  });

  it('an editor that exits non-zero changes nothing', async () => {
    setup();
    const before = fileSha(t.p(ORG));
    const ed = editorScript(`echo 'members = []' > "$1"; exit 3`);
    const r = await w(['edit', ORG], { env: { EDITOR: ed } });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /exited with status 3; nothing was changed/);
    assert.equal(fileSha(t.p(ORG)), before);
  });

  it('the private copy is 0600 in a 0700 directory outside the root, and removed afterwards', async () => {
    setup();
    const seen = join(t.base, 'seen');
    const ed = editorScript(`stat -c '%a' "$1" > "${seen}"; stat -c '%a' "$(dirname "$1")" >> "${seen}"; echo "$1" >> "${seen}"`);
    const r = await w(['edit', ORG], { env: { EDITOR: ed } });
    assert.equal(r.code, 0, r.stderr);
    const [fmode, dmode, path] = readFileSync(seen, 'utf8').trim().split('\n');
    assert.equal(fmode, '600');
    assert.equal(dmode, '700');
    assert.ok(!path!.startsWith(t.root));
    assert.equal(existsSync(path!), false);
  });

  it('credentials: the diff shows fingerprints, never values', async () => {
    setup();
    const v = discordPair('9090');
    secrets.push(v.token, v.application_id);
    const ed = editorScript(`sed -i -e 's|^token = .*|token = "${v.token}"|' -e 's|^application_id = .*|application_id = "${v.application_id}"|' "$1"`);
    const r = await w(['edit', 'config/credentials.toml'], { env: { EDITOR: ed } });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /~ discord\.token {2}[0-9a-f]{12} → [0-9a-f]{12}/);
    assert.ok(readFileSync(t.p('config/credentials.toml'), 'utf8').includes(v.token));
  });

  it('warden.toml: the daemon reloads it live', async () => {
    setup();
    writeFileSync(t.p('config/settings.json'), '{"a": 1}\n');
    d = await startDaemon(t);
    const ed = editorScript(`printf '\\n[[protect]]\\npath = "config/settings.json"\\n' >> "$1"`);
    const r = await w(['edit', 'config/warden.toml'], { env: { EDITOR: ed } });
    assert.equal(r.code, 0, r.stderr);
    writeFileSync(t.p('config/settings.json'), '{"a": 2}\n');
    await waitFor(() => readFileSync(t.p('config/settings.json'), 'utf8') === '{"a": 1}\n' && readAlertsOf(t).some((a) => a.path === 'config/settings.json'), 10_000, 'newly protected file reverted');
  });
});

describe('apply, rm, accept', () => {
  it('apply --from: valid, invalid (located), cross-file (channel bound twice)', async () => {
    setup();
    d = await startDaemon(t);
    const good = join(t.base, 'good.toml');
    writeFileSync(good, 'members = ["222222222222222222"]\nchannels = []\nfolders = []\ncommands = []\nhourly_cap = 5\n');
    let r = await w(['apply', 'orgs/chess.toml', '--from', good]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(t.p('orgs/chess.toml'), 'utf8'), readFileSync(good, 'utf8'));
    const bad = join(t.base, 'bad.toml');
    writeFileSync(bad, 'members = [\n');
    r = await w(['apply', ORG, '--from', bad]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /orgs\/bookclub\.toml:\d+:\d+/);
    const bookclub = readFileSync(t.p(ORG), 'utf8');
    const channel = /channels = \["(\d+)"/.exec(bookclub)?.[1];
    assert.ok(channel, 'the example org binds a channel');
    writeFileSync(good, `members = []\nchannels = ["${channel}"]\nfolders = []\ncommands = []\nhourly_cap = 5\n`);
    r = await w(['apply', 'orgs/chess.toml', '--from', '-'], { input: readFileSync(good, 'utf8') });
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /bound/i);
    assert.equal(readAlertsOf(t).length, 0);
  });

  it('rm removes an org file; config files cannot be removed', async () => {
    setup();
    d = await startDaemon(t);
    let r = await w(['rm', ORG]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(existsSync(t.p(ORG)), false);
    assert.match(gitLog(t), /command: warden rm orgs\/bookclub\.toml/);
    r = await w(['rm', 'config/conditions.toml']);
    assert.equal(r.code, 1);
    assert.ok(existsSync(t.p('config/conditions.toml')));
    assertClean(await w(['verify', '--json']));
    assert.equal(readAlertsOf(t).length, 0);
  });

  it('accept proposes the quarantined content of an alert again', async () => {
    setup();
    d = await startDaemon(t);
    const wanted = readFileSync(t.p(ORG), 'utf8').replace('hourly_cap = 20', 'hourly_cap = 11');
    writeFileSync(t.p(ORG), wanted);
    let alert;
    await waitFor(() => { alert = readAlertsOf(t).find((a) => a.path === ORG); return !!alert && !readFileSync(t.p(ORG), 'utf8').includes('= 11'); }, 10_000, 'revert');
    const r = await w(['accept', alert!.id]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(t.p(ORG), 'utf8'), wanted);
    assert.match(gitLog(t), /command: warden accept/);
    // A symlink's quarantine cannot be accepted.
    const r2 = await w(['accept', 'no-such-alert']);
    assert.equal(r2.code, 1);
    assert.ok(lstatSync(t.p(ORG)).isFile());
  });
});
