/**
 * Grants said in the owner's words where the owner reads them (docs/PROFILES.md, "Grants in
 * alerts, diffs and prompts"): an alert of a direct edit, `warden alerts --json`, `warden
 * diff`, `warden why`, the approval prompt of `warden apply`, and the Discord message;
 * credential values only as fingerprints; markdown in a key or value literal on Discord;
 * a file with thousands of changes gives a bounded list with "and N more".
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, readAlertsOf, testWorld, waitFor, type TestRoot } from '../helpers/root.js';
import { DiscordEmulator } from '../helpers/discord-emulator.js';
import { TOKEN, alert } from '../notifier/helpers.js';
import { capProposal, outboxCodes, wardenToml } from '../changes/helpers.js';
import { classicRootProfile, levelRootProfile, loadProfiles, profileShape, rulesAt, shippedProfile } from '../../src/profiles/index.js';
import { classifyWrite, compareTexts, grantLines, grantsAt } from '../../src/grants/index.js';
import { formatAlerts, formatOwnerMessage, discordContent } from '../../src/notifier/format.js';
import { parseToml } from '../../src/toml/index.js';
import type { Alert } from '../../src/store/alert-types.js';

const world = testWorld();
after(() => world.cleanup());

const ORG = 'orgs/bookclub.toml';
const GUESTS = 'config/guests.toml';
const CRED = 'config/credentials.toml';
const fp = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 12);

async function alertFor(t: TestRoot, path: string): Promise<Alert> {
  return waitFor(() => readAlertsOf(t).find((a) => a.path === path && a.action === 'reverted'), 15_000, `an alert for ${path}`);
}

describe('which profile rules apply to a path of a root (pure)', () => {
  const rp = classicRootProfile('/srv/a[1]/root')!;
  it('the example root is the warden-example profile, matched whatever the root path holds', () => {
    assert.ok(rp, 'the shipped warden-example profile loads');
    assert.deepEqual(rulesAt(rp, ORG)?.rules.map((r) => r.rule.key), ['members', 'channels', 'folders', 'commands', 'hourly_cap']);
    assert.deepEqual(rulesAt(rp, GUESTS)?.rules.map((r) => r.rule.key), ['channels', 'folders']);
    assert.ok(rulesAt(rp, 'config/warden.toml')?.rules.some((r) => r.rule.key === 'owner'));
    assert.deepEqual(rulesAt(rp, CRED)?.credentials.map((c) => c.group), ['credentials']);
    for (const p of ['orgs/sub/x.toml', 'notes.txt', '../orgs/x.toml', '/etc/passwd', '.', '']) assert.equal(rulesAt(rp, p), undefined, p);
  });

  it('another root passes its own profile and places (a root inside the home directory)', () => {
    const claude = loadProfiles().profiles.find((p) => p.data.name === 'claude-code')!.data;
    const r = { profile: claude, places: { root: '/home/u/.claude', home: '/home/u' } };
    assert.ok(rulesAt(r, 'settings.json')?.rules.some((x) => x.rule.key === 'permissions.allow'));
    assert.deepEqual(levelRootProfile(claude, 'user', '/home/u/.claude/', '.claude')?.places, r.places);
    const proj = levelRootProfile(claude, 'project', '/srv/a[1]', '')!;
    assert.ok(rulesAt(proj, '.claude/settings.local.json')?.rules.some((x) => x.rule.key === 'permissions.allow'));
    assert.ok(rulesAt(proj, '.mcp.json'));
    assert.equal(levelRootProfile(claude, 'user', '/home/u/.codex', '.claude'), undefined);
  });

  it('the guard reads each shipped profile without the schema library, to the same facts', () => {
    for (const p of loadProfiles().profiles) {
      const light = shippedProfile(p.data.name);
      assert.ok(light, p.data.name);
      assert.deepEqual(JSON.parse(JSON.stringify({ ...light, validator: [] })), JSON.parse(JSON.stringify({ ...p.data, validator: [] })), p.data.name);
    }
    const t = parseToml('name = "x"\nruntime = "y"\nfiles = "nope"\n', 'x.toml');
    assert.ok(t.ok && profileShape(t.value) === null, 'a profile of another shape gives no facts');
  });

  it('a change with thousands of entries is a bounded list, the rest counted', () => {
    const many = Array.from({ length: 3000 }, (_, i) => `"${String(i).padStart(18, '9')}"`).join(', ');
    const before = Buffer.from('members = []\nhourly_cap = 1\n');
    const g = grantsAt(rp, ORG, before, Buffer.from(`members = [${many}]\nhourly_cap = 1\n`))!;
    assert.equal(g.grants.length, 50);
    assert.equal(g.left_off, 2950);
    assert.deepEqual(grantLines(g, 3).slice(-1), ['and 2997 more']);
    const huge = grantsAt(rp, ORG, before, Buffer.from(`members = [${many}, ${many.replace(/"9/g, '"7')}, ${many.replace(/"9/g, '"6')}, ${many.replace(/"9/g, '"5')}, ${many.replace(/"9/g, '"4')}]\n`))!;
    assert.deepEqual([huge.grants.length, huge.summary], [0, 'not compared key by key: over 262144 bytes']);
    const broken = grantsAt(rp, CRED, Buffer.from('[a]\nk = "v"\n'), Buffer.from('[a]\nk = "sk-secret-in-a-broken-line\n'), { secret: true })!;
    assert.match(broken.summary, /^not compared key by key: the new version does not parse \(line 2, column \d+\)$/);
  });
});

describe('a credential file whose keys are "**": every key on its own', () => {
  it("Claude Code's token refresh is per key, and its own write", () => {
    const claude = loadProfiles().profiles.find((p) => p.data.name === 'claude-code')!.data;
    const r = { profile: claude, places: { root: '/home/u/.claude', home: '/home/u' } };
    const doc = (t: string) => Buffer.from(JSON.stringify({ claudeAiOauth: { accessToken: `a-${t}`, refreshToken: `r-${t}`, expiresAt: 1, scopes: ['x'] } }));
    const g = grantsAt(r, '.credentials.json', doc('one'), doc('two'))!;
    assert.deepEqual(g.grants.map((x) => [x.key, x.credential, x.old, x.new]), [
      ['claudeAiOauth.accessToken', 'claude-oauth', fp('a-one'), fp('a-two')],
      ['claudeAiOauth.refreshToken', 'claude-oauth', fp('r-one'), fp('r-two')],
    ]);
    const f = rulesAt(r, '.credentials.json')!;
    const c = compareTexts('/home/u/.claude/.credentials.json', 'json', doc('one').toString(), doc('two').toString(), f);
    assert.ok(c.ok && classifyWrite(c.comparison.changes, f).kind === 'own');
  });
});

describe('a direct edit of an org file: the alert names what it granted', () => {
  it('alerts.jsonl, alerts --json, the journal line, diff and why say members + "agent" and hourly_cap: 20 → 666', async () => {
    const t = world.root({ init: true });
    const d = await world.daemon(t);
    const text = readFileSync(t.p(ORG), 'utf8').replace('members = ["222222222222222222", "333333333333333333"]', 'members = ["222222222222222222", "333333333333333333", "agent"]').replace('hourly_cap = 20', 'hourly_cap = 666');
    writeFileSync(t.p(ORG), text);
    const a = await alertFor(t, ORG);
    const words = (a.grants ?? []).map((g) => g.words);
    assert.ok(words.includes('members + "agent"'), JSON.stringify(a));
    assert.ok(words.includes('hourly_cap: 20 → 666'), JSON.stringify(a));
    const m = a.grants!.find((g) => g.key === 'members')!;
    assert.deepEqual([m.path, m.change, m.grant, m.new], [ORG, 'widened', true, 'agent']);
    assert.match(a.grants_summary ?? '', /grant/);
    await waitFor(() => d.stderr().includes(`alert ${a.id}`), 5000, 'the journal line');
    assert.match(d.stderr(), /; alert [a-z0-9-]+\. It granted: grant members \+ "agent"; grant hourly_cap: 20 → 666\. /);

    const j = JSON.parse(cli(t, ['alerts', '--json']).stdout) as Alert[];
    assert.deepEqual(j.find((x) => x.id === a.id)?.grants, a.grants);
    const list = cli(t, ['alerts']);
    assert.match(list.stdout, /grant members \+ "agent"/);

    const diff = cli(t, ['diff', a.id]);
    assert.equal(diff.code, 0, diff.stderr);
    assert.match(diff.stdout, /what it granted or took away: .*grant/);
    assert.match(diff.stdout, /grant members \+ "agent"/);
    assert.match(diff.stdout, /grant hourly_cap: 20 → 666/);
    const dj = JSON.parse(cli(t, ['diff', a.id, '--json']).stdout) as { grants: { words: string }[] };
    assert.ok(dj.grants.some((g) => g.words === 'members + "agent"'));

    const why = cli(t, ['why', ORG]);
    assert.equal(why.code, 0, why.stderr);
    assert.match(why.stdout, /grant members \+ "agent"/);
    assert.match(why.stdout, /grant hourly_cap: 20 → 666/);
  });

  it('a rejected file with thousands of new members: a capped list in the alert, "and N more" in why', async () => {
    const t = world.root({ init: true });
    await world.daemon(t);
    const many = Array.from({ length: 3000 }, (_, i) => `"${String(i).padStart(18, '8')}"`).join(', ');
    writeFileSync(t.p(ORG), readFileSync(t.p(ORG), 'utf8').replace(/^members = .*$/m, `members = [${many}]`));
    const a = await alertFor(t, ORG);
    // 3000 members added, the 2 approved ones gone: 3002 changes.
    assert.equal(a.grants?.length, 50);
    assert.equal(a.grants_left_off, 2952);
    assert.ok(JSON.stringify(a).length < 32_000, `alert line of ${JSON.stringify(a).length} characters`);
    assert.match(cli(t, ['why', ORG]).stdout, /and 2992 more/);
  });
});

describe('a credential change: fingerprints, never the value', () => {
  it('the alert, alerts --json, diff and why show the new value\'s fingerprint and neither value', async () => {
    const t = world.root({ init: true });
    await world.daemon(t);
    const oldValue = 'sk-ant-EXAMPLE-not-a-real-key';
    const newValue = 'sk-ant-STOLEN-by-the-agent-0123456789';
    writeFileSync(t.p(CRED), readFileSync(t.p(CRED), 'utf8').replace(oldValue, newValue));
    const a = await alertFor(t, CRED);
    const g = a.grants?.find((x) => x.key === 'anthropic.api_key');
    assert.ok(g, JSON.stringify(a));
    assert.deepEqual([g.credential, g.old, g.new], ['credentials', fp(oldValue), fp(newValue)]);
    assert.match(g.words, new RegExp(`${fp(oldValue)} → ${fp(newValue)}`));
    const outs = [readFileSync(t.p('snapshots/alerts.jsonl'), 'utf8'), cli(t, ['alerts', '--json']).stdout, cli(t, ['alerts']).stdout,
      cli(t, ['diff', a.id]).stdout, cli(t, ['diff', a.id, '--json']).stdout, cli(t, ['why', CRED]).stdout];
    assert.match(outs[3]!, new RegExp(fp(newValue)));
    for (const o of outs) for (const v of [oldValue, newValue]) assert.ok(!o.includes(v), `a credential value in: ${o.slice(0, 400)}`);
  });
});

describe('the approval prompt names the grants', () => {
  it('apply of guests.toml (approval none) prints the grant with the diff', () => {
    const t = world.root({ init: true });
    const f = join(t.base, 'guests.toml');
    writeFileSync(f, readFileSync(t.p(GUESTS), 'utf8').replace('channels = ["555555555555555555"]', 'channels = ["555555555555555555", "666666666666666666"]'));
    const r = cli(t, ['apply', GUESTS, '--from', f]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /what it grants or takes away: 1 grant widened/);
    assert.match(r.stdout, /grant channels \+ "666666666666666666"/);
  });

  it('apply of an org file left pending (approval tty, no terminal): the prompt and --json carry the grants', () => {
    const t = world.root({ init: true, wardenToml: wardenToml({ approval: 'tty' }) });
    const f = join(t.base, 'org.toml');
    writeFileSync(f, readFileSync(t.p(ORG), 'utf8').replace('hourly_cap = 20', 'hourly_cap = 10').replace('commands = ["ls", "cat"]', 'commands = ["ls"]'));
    const r = cli(t, ['apply', ORG, '--from', f]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /grant hourly_cap: 20 → 10/);
    assert.match(r.stdout, /grant commands - "cat"/);
    const list = JSON.parse(cli(t, ['approve', '--json']).stdout) as { grants?: { words: string }[] }[];
    assert.ok(list[0]?.grants?.some((g) => g.words === 'commands - "cat"'), JSON.stringify(list));
    assert.match(cli(t, ['approve']).stdout, /\n {4}grant commands - "cat"\n {4}grant hourly_cap: 20 → 10\n/);
  });
});

describe("the owner's message of a request awaiting a one-time code", () => {
  it('names each grant with its file, credential values as fingerprints', () => {
    const t = world.root({ init: true, wardenToml: wardenToml({ approval: 'owner-code' }) });
    const r = cli(t, ['apply', ORG, '--from', capProposal(t, 41, ORG), '--json']);
    assert.equal(r.code, 0, r.stderr);
    const id = (JSON.parse(r.stdout) as { pending: { id: string; grants?: { words: string }[] } }).pending.id;
    const m = outboxCodes(t).find((x) => x.request === id)!;
    assert.match(m.text, /\nWhat it grants or takes away:\norgs\/bookclub\.toml: grant hourly_cap: 20 → 41$/);
  });
});

describe('on Discord, a key or value from the agent\'s file is literal text', () => {
  const MARKED = '**boss** ||x|| [y](http://e.x) @everyone';

  it('the alert message of a direct edit escapes the markdown in the new member', async () => {
    const emu = new DiscordEmulator(TOKEN);
    await emu.start();
    const tokenFile = join(tmpdir(), `warden-grants-token-${process.pid}`);
    try {
      writeFileSync(tokenFile, TOKEN + '\n', { mode: 0o600 });
      const t = world.root({ wardenToml: wardenToml({ extra: `\n[notify]\nmin_interval_seconds = 0\n\n[notify.discord]\ntoken_file = "${tokenFile}"\napi = "${emu.api}"\n` }) });
      assert.equal(cli(t, ['init']).code, 0);
      await world.daemon(t, []);
      await waitFor(() => existsSync(t.p('snapshots/notify/delivery-state.json')), 10_000, 'the notifier state');
      writeFileSync(t.p(ORG), readFileSync(t.p(ORG), 'utf8').replace('members = ["222222222222222222"', `members = [${JSON.stringify(MARKED)}, "222222222222222222"`));
      const m = await waitFor(() => emu.messages.find((x) => x.content.includes('What it granted')), 15_000, 'the alert on Discord');
      assert.match(m.content, /members \+ "\\\*\\\*boss\\\*\\\* \\\|\\\|x\\\|\\\| \\\[y\\\]\\\(http\\:\/\/e\.x\\\) \\@everyone"/, m.content);
      assert.ok(!m.content.includes('**boss**') && !m.content.includes('||x||') && !m.content.includes('[y](http'), m.content);
    } finally {
      await emu.stop();
      rmSync(tokenFile, { force: true });
    }
  });

  it('a storm folded into one message still says what each path granted, literal', () => {
    const g = grantsAt(classicRootProfile('/r'), ORG, Buffer.from('members = []\n'), Buffer.from(`members = [${JSON.stringify(MARKED)}]\nhourly_cap = 9\n`))!;
    const a = alert({ path: ORG, grants: g.grants, grants_summary: g.summary });
    const c = discordContent(formatAlerts([a, alert({ path: GUESTS })], 2000, 'discord'));
    assert.match(c, /it granted: grant members \+ "\\\*\\\*boss\\\*\\\*[^\n]*; grant hourly\\_cap = 9$/m, c);
    assert.ok(!c.includes('**boss**'), c);
  });

  it('the owner\'s message of a pending request: the same words, literal', () => {
    const g = grantsAt(classicRootProfile('/r'), ORG, Buffer.from('members = []\n'), Buffer.from(`members = [${JSON.stringify(MARKED)}]\n`))!;
    const text = `warden: one-time code 12345678 approves request abc\nWhat it grants or takes away:\n${grantLines(g).map((l) => `${ORG}: ${l}`).join('\n')}`;
    const c = discordContent(formatOwnerMessage(text, 2000, 'discord'));
    assert.match(c, /grant members \+ "\\\*\\\*boss\\\*\\\*/);
    assert.ok(!c.includes('**boss**'), c);
  });
});
