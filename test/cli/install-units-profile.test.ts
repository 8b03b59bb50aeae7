/**
 * `warden install-units --profile NAME --user USER` (docs/DEPLOY.md, "An agent that runs as
 * you"): the units for a runtime's root in the owner's home, run as warden's own account,
 * with owner-code recorded at init. The owner is a temporary account of a passwd file under
 * --prefix (as --desktop-user reads it), so no account is made on this machine.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseProfileRootRecord } from '../../src/config/profile-root.js';
import { profileSettingsOf } from '../../src/cli/profile-settings.js';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = join(REPO, 'dist', 'src', 'cli', 'main.js');
const OWNER_UID = 54329;
const TOKEN = 'MTAx.fake-bot-token.never-in-argv';

function warden(args: string[], o: { input?: string; env?: NodeJS.ProcessEnv } = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', input: o.input ?? '', env: { ...process.env, ...(o.env ?? {}) } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Fixture { dir: string; prefix: string; home: string; token: string }

/** A home for `owner` with the runtime's user files, a passwd naming it, and a token file outside the home. */
function fixture(): Fixture {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'warden-units-profile-')));
  const prefix = join(dir, 'prefix');
  const home = join(dir, 'home', 'owner');
  mkdirSync(join(prefix, 'etc'), { recursive: true });
  writeFileSync(join(prefix, 'etc', 'passwd'), `root:x:0:0:root:/root:/bin/bash\nwarden:x:998:998::/nonexistent:/usr/sbin/nologin\nowner:x:${OWNER_UID}:${OWNER_UID}:Owner:${home}:/bin/bash\n`);
  mkdirSync(join(home, '.claude'), { recursive: true });
  writeFileSync(join(home, '.claude', 'settings.json'), '{"permissions":{"allow":["Read"]}}\n');
  mkdirSync(join(home, '.codex'), { recursive: true });
  writeFileSync(join(home, '.codex', 'config.toml'), 'approval_policy = "on-request"\n');
  const token = join(dir, 'etc-warden', 'discord-token');
  mkdirSync(dirname(token), { mode: 0o700 });
  writeFileSync(token, TOKEN, { mode: 0o600 });
  return { dir, prefix, home, token };
}

const base = (f: Fixture, profile: string) => ['install-units', '--profile', profile, '--user', 'owner', '--discord-id', '123456789012345678', '--discord-token', f.token, '--prefix', f.prefix, '--node', process.execPath];

type Deployment = { root: string; account: string; settings: string; commands: string[]; owner_commands: string[]; token_file: string };
function rendered(f: Fixture, profile: string, extra: string[] = []) {
  const r = warden([...base(f, profile), '--json', ...extra]);
  assert.equal(r.code, 0, r.stderr);
  return { ...(JSON.parse(r.stdout) as { units: { name: string; content: string; path: string | null }[]; deployment: Deployment }), stderr: r.stderr };
}

for (const [profile, dirName] of [['claude-code', '.claude'], ['codex', '.codex']] as const) {
  test(`install-units --profile ${profile} --user owner: the guard runs as warden, never as the owner, and writes the profile's root alone`, () => {
    const f = fixture();
    try {
      const root = join(f.home, dirName);
      const { units, deployment } = rendered(f, profile);
      assert.deepEqual(units.map((u) => u.name), ['warden-guard.service', 'warden-notify.service']);
      const [guard, notify] = units.map((u) => u.content) as [string, string];
      assert.equal(deployment.root, root);
      for (const u of [guard, notify]) {
        assert.match(u, /^User=warden$/m);
        assert.doesNotMatch(u, /^(User|Group|SupplementaryGroups)=.*\bowner\b/m, 'nothing of the units is the owner\'s: the owner cannot stop them or act as them');
        assert.doesNotMatch(u, /@[A-Z_]+@/);
      }
      assert.ok(guard.includes(`ExecStart=${process.execPath} ${CLI} run --guard --root ${root}\n`), guard);
      assert.ok(notify.includes(`ExecStart=${process.execPath} ${CLI} run --notifier --root ${root}\n`), notify);
      // Nobody but root owns the path to the root here: the guard binds and may write exactly the profile's root.
      assert.deepEqual(guard.match(/^(ReadWritePaths|BindPaths)=.*$/gm), [`BindPaths=${root}`, `ReadWritePaths=${root}`]);
      assert.match(guard, /^ProtectSystem=strict$/m);
      assert.match(guard, /^StateDirectory=warden-guard$/m);
      assert.match(guard, /^StateDirectoryMode=0700$/m);
      assert.match(guard, /^UMask=0077$/m);
      assert.match(guard, /^PrivateNetwork=yes$/m);
      assert.match(guard, /^NoNewPrivileges=yes$/m);
      assert.match(notify, new RegExp(`^BindReadOnlyPaths=${root}$`, 'm'));
      assert.doesNotMatch(notify, /^(ReadWritePaths|BindPaths)=/m);
      // owner-code, by Discord to the owner, recorded at init as warden's account.
      assert.match(deployment.settings, /^approval = "owner-code"$/m);
      assert.match(deployment.settings, /^discord_id = "123456789012345678"$/m);
      assert.equal(deployment.account, 'warden');
      const init = deployment.commands.find((c) => c.includes('warden init'))!;
      assert.match(init, /systemd-run --wait --pipe --collect -p User=warden -p StateDirectory=warden-guard -p StateDirectoryMode=0700 -p UMask=0077 -p AmbientCapabilities="CAP_CHOWN CAP_FOWNER CAP_DAC_OVERRIDE"/);
      assert.ok(init.includes(`warden init --if-needed --profile ${profile} --home ${f.home} --settings -`), init);
      assert.ok(deployment.commands.includes('systemctl daemon-reload && systemctl enable --now warden-guard.service warden-notify.service'));
      assert.ok(deployment.owner_commands.every((c) => /^sudo (-u warden|systemd-run .* -p User=warden .*) warden /.test(c) && c.includes(`--root ${root}`)), deployment.owner_commands.join('\n'));
    } finally { rmSync(f.dir, { recursive: true, force: true }); }
  });
}

test('install-units --profile: the bot token reaches the notifier by LoadCredential= alone, never in a unit, an argument or the printed commands', () => {
  const f = fixture();
  try {
    const { units, deployment } = rendered(f, 'claude-code');
    const [guard, notify] = units.map((u) => u.content) as [string, string];
    assert.match(notify, new RegExp(`^LoadCredential=discord-token:${f.token}$`, 'm'));
    assert.doesNotMatch(guard, /LoadCredential/, 'the guard, which the agent\'s files reach, never holds it');
    const text = warden([...base(f, 'claude-code')]);
    assert.equal(text.code, 0, text.stderr);
    for (const out of [JSON.stringify(units), JSON.stringify(deployment), text.stdout, text.stderr]) assert.ok(!out.includes(TOKEN), 'the token itself is printed nowhere');
    for (const u of units) for (const exec of u.content.match(/^Exec\w+=.*$/gm) ?? []) assert.doesNotMatch(exec, /token|discord/i, exec);
    // The settings go to init on stdin: its arguments name no setting at all.
    const init = deployment.commands.find((c) => c.includes('warden init'))!;
    assert.match(init.split('\n').pop()!, /warden init --if-needed --profile claude-code --home \S+ --settings -$/);
    // A token file where the agent can read it is refused.
    const inHome = join(f.home, 'token');
    writeFileSync(inHome, TOKEN, { mode: 0o600 });
    const r = warden([...base(f, 'claude-code'), '--discord-token', inHome]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /is in owner's home, where the agent can read it/);
  } finally { rmSync(f.dir, { recursive: true, force: true }); }
});

test('install-units --profile --write: only the system units are written (no polkit rule, no unit of the owner\'s), and systemctl needs root', () => {
  const f = fixture();
  try {
    const r = warden([...base(f, 'claude-code'), '--write']);
    assert.equal(r.code, 0, r.stderr);
    const written: string[] = [];
    const walk = (d: string) => { for (const e of readdirSync(d, { withFileTypes: true })) { const p = join(d, e.name); if (e.isDirectory()) walk(p); else written.push(p.slice(f.prefix.length)); } };
    walk(f.prefix);
    assert.deepEqual(written.sort(), ['/etc/passwd', '/etc/systemd/system/warden-guard.service', '/etc/systemd/system/warden-notify.service']);
    for (const u of ['warden-guard.service', 'warden-notify.service']) assert.equal(statSync(join(f.prefix, 'etc/systemd/system', u)).mode & 0o777, 0o644);
    assert.match(r.stdout, /^ {2}printf '%s\\n' 'approval = "owner-code"'/m);
    assert.match(r.stdout, /^ {2}systemctl daemon-reload && systemctl enable --now warden-guard\.service warden-notify\.service$/m);
    assert.match(r.stdout, /^then as owner \(sudo asks your password/m);
  } finally { rmSync(f.dir, { recursive: true, force: true }); }
});

test('install-units --profile refuses an unknown user or profile (with "did you mean"), root, the units\' own account, and a missing Discord id', () => {
  const f = fixture();
  try {
    const run = (args: string[]) => warden(args);
    const noUser = run(['install-units', '--profile', 'claude-code', '--user', 'ownr', '--discord-id', '1', '--prefix', f.prefix]);
    assert.equal(noUser.code, 2);
    assert.match(noUser.stderr, /--user "ownr": there is no such account in \S+\/etc\/passwd; did you mean "owner"\?/);
    const noProfile = run(['install-units', '--profile', 'claude-cod', '--user', 'owner', '--discord-id', '1', '--prefix', f.prefix]);
    assert.equal(noProfile.code, 2);
    assert.match(noProfile.stderr, /no profile named "claude-cod"; did you mean "claude-code"\?/);
    assert.match(run(['install-units', '--profile', 'claude-code', '--user', 'root', '--discord-id', '1', '--prefix', f.prefix]).stderr, /an agent that runs as root can stop any guard/);
    assert.match(run(['install-units', '--profile', 'claude-code', '--user', 'warden', '--discord-id', '1', '--prefix', f.prefix]).stderr, /is the account the units run as/);
    assert.match(run(['install-units', '--profile', 'claude-code', '--discord-id', '1', '--prefix', f.prefix]).stderr, /--profile needs --user USER/);
    const noId = run(['install-units', '--profile', 'claude-code', '--user', 'owner', '--prefix', f.prefix]);
    assert.equal(noId.code, 2);
    assert.match(noId.stderr, /--discord-id ID is needed/);
    assert.match(run(['install-units', '--profile', 'claude-code', '--user', 'owner', '--discord-id', 'me', '--prefix', f.prefix]).stderr, /is not a Discord id/);
    assert.match(run(['install-units', '--root', f.home, '--discord-id', '1']).stderr, /go with --profile NAME --user USER/);
  } finally { rmSync(f.dir, { recursive: true, force: true }); }
});

test('the settings install-units prints, given to init --settings -, make the profile root\'s changes wait for a one-time code', () => {
  const f = fixture();
  try {
    const { deployment } = rendered(f, 'claude-code');
    const env = { XDG_STATE_HOME: join(f.dir, 'state'), HOME: f.home };
    const init = warden(['init', '--profile', 'claude-code', '--home', f.home, '--settings', '-', '--json'], { input: deployment.settings, env });
    assert.equal(init.code, 0, init.stderr);
    assert.equal((JSON.parse(init.stdout) as { settings: { approval: string } }).settings.approval, 'owner-code');
    const status = warden(['status', '--profile', 'claude-code', '--home', f.home, '--json'], { env });
    assert.equal((JSON.parse(status.stdout) as { approval: string }).approval, 'owner-code', status.stdout);
    // A change waits for the owner's code (the store here is root's, 0700: owner-code holds; docs/CHANGES.md, "owner-code").
    const apply = warden(['apply', 'settings.json', '--from', '-', '--profile', 'claude-code', '--home', f.home, '--json'], { input: '{"permissions":{"allow":["Read","Bash(echo:*)"]}}\n', env });
    const p = JSON.parse(apply.stdout) as { pending?: { approval: string } };
    if (process.getuid?.() === 0) assert.equal(p.pending?.approval, 'owner-code', apply.stdout);
    assert.equal(readFileSync(join(f.home, '.claude', 'settings.json'), 'utf8'), '{"permissions":{"allow":["Read"]}}\n', 'nothing applied without the code');
    // --settings goes with --profile only.
    mkdirSync(join(f.dir, 'root', 'config'), { recursive: true });
    writeFileSync(join(f.dir, 'root', 'config', 'warden.toml'), '');
    assert.match(warden(['init', '--root', join(f.dir, 'root'), '--settings', '-'], { env }).stderr, /--settings goes with --profile NAME/);
  } finally { rmSync(f.dir, { recursive: true, force: true }); }
});

test('init --settings: a profile root\'s settings are warden.toml\'s without the protected set, checked, and kept in the authenticated record', () => {
  assert.throws(() => profileSettingsOf('protect = [{ path = "x" }]\n', 's.toml'), /`protect` cannot be set for a profile's root/);
  assert.throws(() => profileSettingsOf('[credentials]\nfiles = ["a.toml"]\n', 's.toml'), /`credentials` cannot be set/);
  assert.throws(() => profileSettingsOf('approval = "owner-code"\n', 's.toml'), /not valid warden settings/, 'owner-code without Discord');
  const s = profileSettingsOf('approval = "owner-code"\n[owner]\ndiscord_id = "42"\n[notify.discord]\ntoken_file = "/etc/warden/t"\n', 's.toml');
  assert.equal(s.approval, 'owner-code');
  const rec = { profile: 'claude-code', level: 'user', files: [{ path: 'settings.json', format: 'json' }] };
  assert.deepEqual(parseProfileRootRecord(JSON.parse(JSON.stringify({ ...rec, settings: s })))?.settings, s);
  assert.equal(parseProfileRootRecord({ ...rec, settings: { ...s, protect: [] } }), null, 'a record naming its own protected set is not one');
  assert.equal(parseProfileRootRecord({ ...rec, settings: { approval: 'owner-code' } }), null, 'owner-code without Discord is not one');
});

// In a real home the owner owns the home directory and can rename ~/.claude in it: a bind of
// the root alone would pin the old directory (docs/DEPLOY.md §3), so the home is bound instead.
test('install-units --profile in a home the owner owns: the guard binds that home (a swap of ~/.claude is seen), and says so', {
  skip: process.getuid?.() === 0 ? false : 'needs root (chown to the owner\'s uid)',
}, () => {
  const f = fixture();
  try {
    chownSync(f.home, OWNER_UID, OWNER_UID);
    chownSync(join(f.home, '.claude'), OWNER_UID, OWNER_UID);
    chmodSync(f.home, 0o700);
    const { units, stderr } = rendered(f, 'claude-code');
    const guard = units[0]!.content;
    assert.deepEqual(guard.match(/^(ReadWritePaths|BindPaths)=.*$/gm), [`BindPaths=${f.home}`, `ReadWritePaths=${f.home}`]);
    assert.match(stderr, new RegExp(`note: the guard's unit binds and may write ${f.home}, not only the root: uid ${OWNER_UID}`));
  } finally { rmSync(f.dir, { recursive: true, force: true }); }
});

const analyzer = spawnSync('systemd-analyze', ['--version'], { stdio: 'ignore' }).status === 0;
test('install-units --profile: systemd-analyze verify is clean, and the guard\'s exposure stays at most 1.0', {
  skip: analyzer ? false : 'systemd-analyze is not installed (Debian package systemd)',
}, () => {
  const f = fixture();
  try {
    for (const profile of ['claude-code', 'codex']) {
      const prefix = join(f.dir, `p-${profile}`);
      mkdirSync(join(prefix, 'etc'), { recursive: true });
      writeFileSync(join(prefix, 'etc', 'passwd'), readFileSync(join(f.prefix, 'etc', 'passwd')));
      const r = warden([...base(f, profile).map((a) => (a === f.prefix ? prefix : a)), '--write']);
      assert.equal(r.code, 0, r.stderr);
      const dir = join(prefix, 'etc/systemd/system');
      for (const u of ['warden-guard.service', 'warden-notify.service']) {
        const v = spawnSync('systemd-analyze', ['verify', '--man=false', `./${u}`], { cwd: dir, encoding: 'utf8' });
        assert.equal(`${v.stdout}${v.stderr}`.trim(), '', `${profile} ${u}: systemd-analyze verify`);
      }
      const sec = spawnSync('systemd-analyze', ['security', '--offline=true', '--no-pager', './warden-guard.service'], { cwd: dir, encoding: 'utf8' });
      const score = Number(/Overall exposure level for [^:]*: ([0-9.]+)/.exec(sec.stdout)?.[1]);
      assert.ok(score <= 1.0, `${profile}: guard exposure ${score}`);
    }
  } finally { rmSync(f.dir, { recursive: true, force: true }); }
});

// Found under the real systemd: a profile's root has no config/warden.toml, and a command run
// by another account stopped at "not a warden root" before it was told who holds the root.
test('a profile\'s root held by a deployed guard: another account is told who holds it and the command that works', {
  skip: process.getuid?.() === 0 ? false : 'needs root (the state directory must belong to another uid)',
}, async () => {
  const f = fixture();
  try {
    const { rootId } = await import('../../src/store/location.js');
    const root = join(f.home, '.claude');
    const state = join(f.dir, 'var-lib-warden-guard');
    const WARDEN_UID = 900 + (process.pid % 90);
    mkdirSync(join(state, 'stores', rootId(root)), { recursive: true, mode: 0o700 });
    for (const d of [state, join(state, 'stores'), join(state, 'stores', rootId(root))]) chownSync(d, WARDEN_UID, WARDEN_UID);
    const env = { WARDEN_GUARD_STATE_DIR: state, WARDEN_GUARD_RUNTIME_DIR: join(f.dir, 'run-warden-guard'), HOME: f.dir, XDG_STATE_HOME: join(f.dir, 'own-state') };
    const r = warden(['status', '--root', root], { env });
    assert.equal(r.code, 2, r.stderr);
    assert.doesNotMatch(r.stderr, /not a warden root/);
    assert.match(r.stderr, new RegExp(`${root} is guarded by the deployed warden guard \\(account #${WARDEN_UID}\\)`));
    assert.match(r.stderr, new RegExp(`sudo -u '#${WARDEN_UID}' warden status --root ${root}`));
  } finally { rmSync(f.dir, { recursive: true, force: true }); }
});
