import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// dist/test/deploy/install-units.test.js → the repository
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const CLI = join(REPO, 'dist', 'src', 'cli', 'main.js');

function warden(args: string[], opts: { umask?: string } = {}) {
  const r = opts.umask
    ? spawnSync('sh', ['-c', `umask ${opts.umask}; exec "$0" "$@"`, process.execPath, CLI, ...args], { encoding: 'utf8' })
    : spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function tmp(): string {
  return realpathSync(mkdtempSync(join(tmpdir(), 'warden-units-')));
}

test('install-units prints both units with this installation\'s absolute paths', () => {
  const dir = tmp();
  try {
    const root = join(dir, 'agent root-less'.replace(' ', '-'));
    mkdirSync(root);
    const r = warden(['install-units', '--root', root, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const { units } = JSON.parse(r.stdout) as { units: { name: string; content: string; written: boolean }[] };
    assert.deepEqual(units.map((u) => u.name), ['warden-guard.service', 'warden-notify.service']);
    const [guard, notify] = units.map((u) => u.content) as [string, string];
    for (const u of [guard, notify]) {
      assert.doesNotMatch(u, /@[A-Z_]+@/, 'no placeholder is left');
      assert.match(u, /^User=warden$/m);
      assert.match(u, /^Group=warden$/m);
      assert.match(u, /^Type=notify$/m);
      assert.match(u, /^WatchdogSec=\d+s$/m);
      assert.match(u, /^Restart=always$/m);
      assert.match(u, /^UMask=0077$/m);
      assert.match(u, /^ProtectSystem=strict$/m);
      assert.match(u, /^NoNewPrivileges=yes$/m);
      assert.match(u, /^PrivateTmp=yes$/m);
      assert.match(u, /^PrivateDevices=yes$/m);
      assert.match(u, /^SystemCallFilter=@system-service$/m);
      assert.match(u, /^MemoryDenyWriteExecute=no$/m);
    }
    assert.ok(guard.includes(`ExecStart=${process.execPath} ${CLI} run --guard --root ${root}\n`), guard);
    assert.ok(notify.includes(`ExecStart=${process.execPath} ${CLI} run --notifier --root ${root}\n`), notify);
    assert.ok(existsSync(CLI));
    assert.match(guard, new RegExp(`^ReadWritePaths=${root}$`, 'm'));
    assert.match(guard, new RegExp(`^BindPaths=${root}$`, 'm'));
    assert.match(guard, /^PrivateNetwork=yes$/m);
    assert.match(guard, root.startsWith('/home/') ? /^ProtectHome=tmpfs$/m : /^ProtectHome=yes$/m);
    assert.match(guard, /^RestrictAddressFamilies=AF_UNIX$/m);
    assert.match(guard, /^StateDirectory=warden-guard$/m);
    assert.match(guard, /^CapabilityBoundingSet=CAP_CHOWN CAP_FOWNER CAP_DAC_OVERRIDE$/m);
    assert.match(notify, /^CapabilityBoundingSet=$/m);
    assert.match(notify, /^AmbientCapabilities=$/m);
    assert.match(notify, new RegExp(`^BindReadOnlyPaths=${root}$`, 'm'));
    assert.doesNotMatch(notify, /^(ReadWritePaths|BindPaths)=/m, 'the notifier cannot write the root');
    assert.match(notify, /^StateDirectory=warden-notify$/m);
    assert.match(notify, /^InaccessiblePaths=-\/var\/lib\/warden-guard\/keys$/m);
    const store = `/var/lib/warden-guard/stores/${createHash('sha256').update(root).digest('hex').slice(0, 16)}`;
    assert.ok(notify.includes(`InaccessiblePaths=-${store}/secrets -${store}/journal\n`), 'credential blobs are hidden from the notifier');
    assert.match(notify, /^InaccessiblePaths=-\/run\/warden-guard -\/var\/lib\/warden-guard\/stores\/[0-9a-f]{16}\/control$/m);
    assert.match(guard, /^RuntimeDirectory=warden-guard$/m);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('install-units: --user, --capabilities none, and invalid input', () => {
  const dir = tmp();
  try {
    const r = warden(['install-units', '--root', dir, '--user', 'wguard', '--capabilities', 'none']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^User=wguard$/m);
    assert.match(r.stdout, /^Group=wguard$/m);
    assert.doesNotMatch(r.stdout, /CAP_/);
    const chownOnly = warden(['install-units', '--root', dir, '--capabilities', 'chown']);
    assert.match(chownOnly.stdout, /^AmbientCapabilities=CAP_CHOWN$/m);
    assert.equal(warden(['install-units', '--root', dir, '--capabilities', 'CAP_SYS_ADMIN']).code, 2);
    assert.equal(warden(['install-units', '--root', dir, '--user', 'root']).code, 2);
    assert.equal(warden(['install-units', '--root', dir, '--user', 'Bad Name']).code, 2);
    const spaced = join(dir, 'has space');
    mkdirSync(spaced);
    const s = warden(['install-units', '--root', spaced]);
    assert.equal(s.code, 2);
    assert.match(s.stderr, /cannot go into a unit file/);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('install-units --write: 0644 files under <prefix>/etc/systemd/system, no overwrite without --force', () => {
  const dir = tmp();
  try {
    const root = join(dir, 'root');
    const prefix = join(dir, 'prefix');
    mkdirSync(root);
    const printed = warden(['install-units', '--root', root, '--json']);
    const expected = (JSON.parse(printed.stdout) as { units: { name: string; content: string }[] }).units;

    const w = warden(['install-units', '--root', root, '--prefix', prefix, '--write'], { umask: '077' });
    assert.equal(w.code, 0, w.stderr);
    const unitDir = join(prefix, 'etc', 'systemd', 'system');
    for (const u of expected) {
      const p = join(unitDir, u.name);
      assert.equal(readFileSync(p, 'utf8'), u.content);
      assert.equal(statSync(p).mode & 0o777, 0o644, `${u.name} is 0644 whatever the umask`);
    }
    assert.match(w.stdout, /systemctl daemon-reload/);

    // Same content again: fine, nothing to force.
    const again = warden(['install-units', '--root', root, '--prefix', prefix, '--write']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /unchanged/);

    // A unit that differs is not overwritten without --force (and neither is the other one).
    const guardPath = join(unitDir, 'warden-guard.service');
    writeFileSync(guardPath, '# local edit\n');
    const other = warden(['install-units', '--root', root, '--prefix', prefix, '--write', '--user', 'other']);
    assert.equal(other.code, 2);
    assert.match(other.stderr, /refusing to overwrite/);
    assert.equal(readFileSync(guardPath, 'utf8'), '# local edit\n');
    assert.match(readFileSync(join(unitDir, 'warden-notify.service'), 'utf8'), /^User=warden$/m, 'nothing written on refusal');

    const forced = warden(['install-units', '--root', root, '--prefix', prefix, '--write', '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(readFileSync(guardPath, 'utf8'), expected[0]!.content);
    assert.equal(statSync(guardPath).mode & 0o777, 0o644);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('install-units: LoadCredential= from warden.toml\'s token_file, SupplementaryGroups= for --capabilities none', () => {
  const dir = tmp();
  try {
    const root = join(dir, 'root');
    mkdirSync(join(root, 'config'), { recursive: true });
    const token = join(dir, 'discord-token');
    writeFileSync(token, 'x\n', { mode: 0o600 });
    writeFileSync(join(root, 'config', 'warden.toml'), `[owner]\ndiscord_id = "1"\n[notify.discord]\ntoken_file = "${token}"\n`);
    const r = warden(['install-units', '--root', root, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const [guard, notify] = (JSON.parse(r.stdout) as { units: { content: string }[] }).units.map((u) => u.content) as [string, string];
    assert.match(notify, new RegExp(`^LoadCredential=discord-token:${token}$`, 'm'));
    assert.doesNotMatch(guard, /LoadCredential/, 'the guard never gets the token');
    assert.match(guard, /^SupplementaryGroups=$/m, 'with CAP_CHOWN no group is needed');
    assert.match(guard, /^RestartPreventExitStatus=78$/m, 'not initialised: no crash loop');
    // --discord-token none: no credential (the unit would not start without the file)
    const none = warden(['install-units', '--root', root, '--discord-token', 'none']);
    assert.doesNotMatch(none.stdout, /^LoadCredential=/m);
    // a token file that does not exist yet: rendered, with a warning
    const missing = warden(['install-units', '--root', root, '--discord-token', join(dir, 'nope')]);
    assert.equal(missing.code, 0);
    assert.match(missing.stderr, /does not exist yet/);
    // a token file inside the root is refused
    assert.equal(warden(['install-units', '--root', root, '--discord-token', join(root, 'config', 'tok')]).code, 2);

    // deployment B: the guard joins the protected files' group (the root directory's group)
    const grp = spawnSync('getent', ['group', 'daemon'], { encoding: 'utf8' }).stdout.split(':');
    if (process.getuid?.() === 0 && grp[0] === 'daemon') {
      spawnSync('chgrp', ['daemon', root]);
      const b = warden(['install-units', '--root', root, '--capabilities', 'none']);
      assert.match(b.stdout, /^SupplementaryGroups=daemon$/m);
      assert.match(b.stdout, /^CapabilityBoundingSet=$/m);
      const a = warden(['install-units', '--root', root]);
      assert.match(a.stdout, /^SupplementaryGroups=$/m);
    }
    const given = warden(['install-units', '--root', root, '--capabilities', 'none', '--agent-group', 'agent']);
    assert.match(given.stdout, /^SupplementaryGroups=agent$/m);
    assert.equal(warden(['install-units', '--root', root, '--agent-group', 'root']).code, 2);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('install-units warns on stderr whenever a token file exists that warden.toml does not name', () => {
  const dir = tmp();
  try {
    const root = join(dir, 'root');
    mkdirSync(join(root, 'config'), { recursive: true });
    writeFileSync(join(root, 'config', 'warden.toml'), '[owner]\ndiscord_id = "1"\n');
    // The Deploy block's token file (under --prefix, as a packaging root would have it)
    mkdirSync(join(dir, 'etc', 'warden'), { recursive: true });
    writeFileSync(join(dir, 'etc', 'warden', 'discord-token'), 'x\n', { mode: 0o600 });
    const r = warden(['install-units', '--root', root, '--prefix', dir]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /^LoadCredential=/m);
    assert.match(r.stderr, /warning: \/etc\/warden\/discord-token exists, but .*has no \[notify\.discord\] token_file, so no LoadCredential= is rendered and the notifier will not use Discord/);
    // Given with --discord-token, the credential is rendered, and the missing token_file still said
    const given = warden(['install-units', '--root', root, '--prefix', dir, '--discord-token', join(dir, 'etc', 'warden', 'discord-token')]);
    assert.match(given.stdout, /^LoadCredential=discord-token:/m);
    assert.match(given.stderr, /has no \[notify\.discord\] token_file, so the notifier will not use Discord until it names one/);
    // Named in warden.toml: silent
    writeFileSync(join(root, 'config', 'warden.toml'), `[owner]\ndiscord_id = "1"\n[notify.discord]\ntoken_file = "${join(dir, 'etc', 'warden', 'discord-token')}"\n`);
    const named = warden(['install-units', '--root', root, '--prefix', dir]);
    assert.equal(named.stderr.includes('token_file'), false, named.stderr);
    assert.match(named.stdout, /^LoadCredential=discord-token:/m);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('install-units --desktop-user: a user unit for the owner, in /etc/systemd/user, that runs only `warden desktop`', () => {
  const dir = tmp();
  try {
    const root = join(dir, 'root');
    mkdirSync(join(root, 'config'), { recursive: true });
    writeFileSync(join(root, 'config', 'warden.toml'), '[owner]\ndiscord_id = "1"\n');
    mkdirSync(join(dir, 'etc'));
    writeFileSync(join(dir, 'etc', 'passwd'), 'alice:x:1000:1000::/home/alice:/bin/sh\n');
    writeFileSync(join(dir, 'etc', 'group'), 'alice:x:1000:\n');
    const r = warden(['install-units', '--root', root, '--prefix', dir, '--desktop-user', 'alice', '--write']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /alice is in none of the groups systemd-journal, adm, wheel/);
    assert.match(r.stdout, /systemctl --user daemon-reload && systemctl --user enable --now warden-desktop\.service/);
    const unit = readFileSync(join(dir, 'etc', 'systemd', 'user', 'warden-desktop.service'), 'utf8');
    assert.equal(statSync(join(dir, 'etc', 'systemd', 'user', 'warden-desktop.service')).mode & 0o777, 0o644);
    assert.match(unit, /^ConditionUser=alice$/m);
    const id = createHash('sha256').update(root).digest('hex').slice(0, 16);
    assert.match(unit, new RegExp(`^ExecStart=\\S+ \\S+main\\.js desktop --root-id ${id} --guard-user warden --guard-unit warden-guard\\.service$`, 'm'));
    assert.doesNotMatch(unit, /@[A-Z_]+@|LoadCredential|^User=/m, 'no placeholder, no credential, no User= (a user unit runs as its user)');
    assert.match(unit, /^WantedBy=default\.target$/m);
    // in the groups that read the system journal: no warning; a second --write: unchanged
    writeFileSync(join(dir, 'etc', 'group'), 'alice:x:1000:\nsystemd-journal:x:101:alice\n');
    const again = warden(['install-units', '--root', root, '--prefix', dir, '--desktop-user', 'alice', '--write']);
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /none of the groups/);
    assert.match(again.stdout, /^unchanged +\S+warden-desktop\.service$/m);
    for (const bad of ['root', 'warden', 'Bad Name']) assert.equal(warden(['install-units', '--root', root, '--desktop-user', bad]).code, 2, bad);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('install-units --write refuses a node or CLI the sandbox hides, and its hint has the init step', () => {
  const dir = tmp();
  try {
    const root = join(dir, 'root');
    mkdirSync(root);
    for (const hidden of ['/tmp/n/node', '/home/u/.nvm/node', '/root/node']) {
      const w = warden(['install-units', '--root', root, '--node', hidden, '--write']);
      assert.equal(w.code, 2, `${hidden}: ${w.stdout}`);
      assert.match(w.stderr, new RegExp(`the node binary ${hidden} is under /\\w+, which the units hide \\((PrivateTmp|ProtectHome)=\\)`));
      assert.ok(!existsSync('/etc/systemd/system/warden-guard.service.warden-tmp-' + String(process.pid)));
      // printing (or --prefix, packaging) only warns
      const p = warden(['install-units', '--root', root, '--node', hidden]);
      assert.equal(p.code, 0);
      assert.match(p.stderr, /warning: the node binary/);
    }
    const w = warden(['install-units', '--root', root, '--node', process.execPath, '--prefix', join(dir, 'p'), '--write', '--capabilities', 'none']);
    assert.equal(w.code, 0, w.stderr);
    assert.match(w.stdout, new RegExp(`systemd-run --wait --pipe --collect -p User=warden -p StateDirectory=warden-guard -p UMask=0077 warden init --root ${root}`));
    const a = warden(['install-units', '--root', root, '--prefix', join(dir, 'p2'), '--write']);
    assert.match(a.stdout, /-p AmbientCapabilities="CAP_CHOWN CAP_FOWNER CAP_DAC_OVERRIDE" warden init --root/);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

const analyzer = spawnSync('systemd-analyze', ['--version'], { stdio: 'ignore' }).status === 0;
test('scripts/check-units.sh: verify is clean and the exposure scores meet their targets', {
  skip: analyzer ? false : 'systemd-analyze is not installed (CI installs it: Debian package systemd)',
}, () => {
  const r = spawnSync('bash', [join(REPO, 'scripts', 'check-units.sh')], { encoding: 'utf8', cwd: REPO });
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /warden-guard\.service: exposure [0-9.]+ \(target <= 1\.0\)/);
  assert.match(r.stdout, /warden-notify\.service: exposure [0-9.]+ \(target <= 1\.5\)/);
});

// In the deployment: a bind mount of the root alone pins the directory, not
// its name, so a root the agent can rename (its parent is the agent's) must be reached through
// the highest directory on its path that a user other than root and warden can write.
test('install-units binds the highest directory above the root that another user can change (a swap of the root is then seen)', {
  skip: process.getuid?.() === 0 ? false : 'needs root (chown to another uid)',
}, () => {
  const dir = tmp(); // root's, 0700, in a sticky /tmp: nobody else can rename it
  try {
    const agentUid = 54321;
    const home = join(dir, 'home-agent');
    const root = join(home, 'agent-root');
    mkdirSync(root, { recursive: true });
    spawnSync('chown', [`${agentUid}:${agentUid}`, home, root]);
    spawnSync('chmod', ['0755', home]);
    const units = (r: ReturnType<typeof warden>) => (JSON.parse(r.stdout) as { units: { content: string }[] }).units.map((u) => u.content) as [string, string];
    // the agent owns the root's parent: the guard's unit binds (and may write) the parent
    const a = warden(['install-units', '--root', root, '--json']);
    assert.equal(a.code, 0, a.stderr);
    const [guard, notify] = units(a);
    assert.match(guard, new RegExp(`^BindPaths=${home}$`, 'm'), guard);
    assert.match(guard, new RegExp(`^ReadWritePaths=${home}$`, 'm'));
    assert.doesNotMatch(guard, new RegExp(`^(BindPaths|ReadWritePaths)=${root}$`, 'm'), 'no bind of the root itself: it would pin the directory');
    assert.match(guard, new RegExp(`^ExecStart=\\S+ \\S+ run --guard --root ${root}$`, 'm'));
    assert.match(notify, new RegExp(`^BindReadOnlyPaths=${root}$`, 'm'), 'the notifier reads nothing it trusts from the root: unchanged');
    // the witness binds what the guard binds (read-only): a swap of the root path is seen there too, and it marks the new tree
    const wit = (JSON.parse(warden(['install-units', '--root', root, '--witness', '--json']).stdout) as { units: { name: string; content: string }[] }).units.find((u) => u.name === 'warden-witness.service')!.content;
    assert.match(wit, new RegExp(`^BindReadOnlyPaths=${home}$`, 'm'), wit);
    assert.doesNotMatch(wit, new RegExp(`^BindReadOnlyPaths=${root}$`, 'm'), 'no bind of the root itself: it would pin the directory');
    assert.doesNotMatch(wit, /^(BindPaths|ReadWritePaths)=/m, 'and still writes nothing there');
    assert.match(a.stderr, new RegExp(`note: the guard's unit binds and may write ${home}, not only the root: uid ${agentUid} can rename the root`));
    // a directory a third user can write, higher up: that one (the shallowest) is bound
    const deep = join(root, 'sub', 'deeper');
    mkdirSync(deep, { recursive: true });
    spawnSync('chown', [`${agentUid}:${agentUid}`, join(root, 'sub')]);
    assert.match(warden(['install-units', '--root', deep]).stdout, new RegExp(`^BindPaths=${home}$`, 'm'));
    // group-writable or world-writable count too; the guard's own account does not
    spawnSync('chown', ['0:0', home, root, join(root, 'sub')]);
    assert.match(warden(['install-units', '--root', root]).stdout, new RegExp(`^BindPaths=${root}$`, 'm'), 'nobody else can rename it: the root alone');
    spawnSync('chmod', ['0775', home]); spawnSync('chgrp', [String(agentUid), home]);
    assert.match(warden(['install-units', '--root', root]).stdout, new RegExp(`^BindPaths=${home}$`, 'm'), 'group-writable by a non-root group');
    // a sticky, world-writable parent: only an entry's owner (or the parent's) can rename it
    spawnSync('chown', ['0:0', home]); spawnSync('chmod', ['1777', home]);
    assert.match(warden(['install-units', '--root', root]).stdout, new RegExp(`^BindPaths=${root}$`, 'm'), 'root-owned entry in a sticky directory');
    spawnSync('chown', [String(agentUid), root]);
    assert.match(warden(['install-units', '--root', root]).stdout, new RegExp(`^BindPaths=${home}$`, 'm'), 'the agent owns the entry in the sticky directory');
  } finally { rmSync(dir, { recursive: true, force: true }); }
});

test('install-units renders the witness unit with --witness, or when warden.toml enables [witness]; not otherwise', () => {
  const dir = tmp();
  try {
    const root = join(dir, 'root');
    mkdirSync(join(root, 'config'), { recursive: true });
    const names = (args: string[]) => {
      const r = warden(['install-units', '--root', root, '--json', ...args]);
      assert.equal(r.code, 0, r.stderr);
      return (JSON.parse(r.stdout) as { units: { name: string; content: string }[] }).units;
    };
    // No [witness] table: the one unit with CAP_SYS_ADMIN is rendered only when asked for.
    assert.deepEqual(names([]).map((u) => u.name), ['warden-guard.service', 'warden-notify.service']);
    const units = names(['--witness']);
    assert.deepEqual(units.map((u) => u.name), ['warden-guard.service', 'warden-notify.service', 'warden-witness.service']);
    const w = units[2]!.content;
    assert.doesNotMatch(w, /@[A-Z_]+@/, 'no placeholder is left');
    assert.ok(w.includes(`ExecStart=${process.execPath} ${CLI} run --witness --root ${root}\n`), w);
    assert.match(w, /^Group=warden$/m, 'the record is readable by the guard\'s group');
    assert.doesNotMatch(w, /^User=/m, 'uid 0, as DEPLOY.md explains');
    assert.match(w, /^CapabilityBoundingSet=CAP_SYS_ADMIN CAP_SYS_PTRACE CAP_DAC_READ_SEARCH$/m);
    assert.match(w, /^NoNewPrivileges=yes$/m);
    assert.match(w, /^SecureBits=noroot-locked$/m);
    assert.match(w, /^ProtectSystem=strict$/m);
    assert.match(w, new RegExp(`^BindReadOnlyPaths=${root}$`, 'm'));
    assert.doesNotMatch(w, /^ReadWritePaths=/m, 'it cannot write the root');
    assert.match(w, /^PrivateNetwork=yes$/m);
    assert.match(w, /^RestrictAddressFamilies=AF_UNIX$/m);
    assert.match(w, /^SystemCallFilter=fanotify_init fanotify_mark$/m);
    assert.match(w, /^StateDirectory=warden-witness$/m);
    assert.match(w, /^Type=notify$/m);
    assert.match(w, /^WatchdogSec=\d+s$/m);
    // An enabled [witness] in warden.toml renders it too; enabled = false, or --no-witness, does not.
    writeFileSync(join(root, 'config', 'warden.toml'), '[witness]\nenforce = true\n');
    assert.ok(names([]).some((u) => u.name === 'warden-witness.service'));
    assert.ok(!names(['--no-witness']).some((u) => u.name === 'warden-witness.service'));
    writeFileSync(join(root, 'config', 'warden.toml'), '[witness]\nenabled = false\n');
    assert.ok(!names([]).some((u) => u.name === 'warden-witness.service'));
    // --write installs it beside the others, and says to enable it.
    const prefix = join(dir, 'prefix');
    const wr = warden(['install-units', '--root', root, '--witness', '--prefix', prefix, '--write']);
    assert.equal(wr.code, 0, wr.stderr);
    assert.ok(existsSync(join(prefix, 'etc/systemd/system/warden-witness.service')));
    assert.equal(statSync(join(prefix, 'etc/systemd/system/warden-witness.service')).mode & 0o777, 0o644);
    assert.match(wr.stdout, /enable --now warden-witness\.service warden-guard\.service warden-notify\.service/);
  } finally { rmSync(dir, { recursive: true, force: true }); }
});
