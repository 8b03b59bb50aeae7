/**
 * The owner's everyday use, as a visudo, git and journalctl user expects it.
 * Each test is the user's step through the real CLI (a terminal where one matters, a
 * second non-root account for the permission error).
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, closeSync, fstatSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, REPO, TEST_WARDEN_TOML, cli, readAlertsOf, testWorld, waitFor, type TestRoot } from '../helpers/root.js';
import { ptyCli } from '../helpers/pty.js';
import { readableCli } from '../helpers/readable-copy.js';

const world = testWorld();
after(() => world.cleanup());
const inited = (toml?: string): TestRoot => world.root({ ...(toml ? { wardenToml: toml } : {}), init: true });
const ORG = 'orgs/bookclub.toml';
const CRED = 'config/credentials.toml';
const isRoot = process.getuid?.() === 0;

describe('a permission error is a permission error', { skip: !isRoot && 'needs root to create a second user' }, () => {
  const USER = `wi24p${process.pid % 100000}`;
  let uid = -1;
  let gid = -1;
  let t: TestRoot;
  before(() => {
    const add = spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', USER], { encoding: 'utf8' });
    assert.equal(add.status, 0, add.stderr);
    uid = Number(spawnSync('id', ['-u', USER], { encoding: 'utf8' }).stdout.trim());
    gid = Number(spawnSync('id', ['-g', USER], { encoding: 'utf8' }).stdout.trim());
    t = inited();
    // The second account may read the root (as the agent can), not the store (0700, root's).
    for (const d of [t.base, t.root]) chmodSync(d, 0o755);
  });
  after(() => { spawnSync('userdel', [USER]); });

  for (const args of [['status'], ['apply', ORG, '--from', '-'], ['history']]) {
    it(`'warden ${args[0]}' as another user says it cannot read the store and names the account`, () => {
      // The checkout may be private (0700): the second account runs the CLI from a readable copy.
      const r = spawnSync(process.execPath, [readableCli(), ...args, '--root', t.root], { uid, gid, cwd: '/', input: 'x = 1\n', encoding: 'utf8', env: { PATH: process.env.PATH, NO_COLOR: '1', XDG_STATE_HOME: join(t.base, 'nostate') }, timeout: 30_000 });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, /cannot read the store .*snapshots: permission denied \(EACCES\)/);
      assert.match(r.stderr, new RegExp(`This is ${USER} \\(uid ${uid}\\); it belongs to root: run warden as root`));
      assert.doesNotMatch(r.stderr, /replaced by a link|init --force|Move it aside/);
    });
  }
});

describe('one path\'s history includes its mode changes', () => {
  it("history PATH and -p show 'mode: config/credentials.toml 0644 → 0600'", () => {
    const t = inited();
    const m = cli(t, ['apply', CRED, '--mode', '0600']);
    assert.equal(m.code, 0, m.stderr);
    const full = cli(t, ['history']);
    assert.match(full.stdout, /mode: config\/credentials\.toml 0644 → 0600/);
    const one = cli(t, ['history', CRED]);
    assert.equal(one.code, 0, one.stderr);
    assert.match(one.stdout, /mode: config\/credentials\.toml 0644 → 0600/);
    assert.match(one.stdout, /init: baseline/);
    const p = cli(t, ['history', '-p', CRED]);
    assert.match(p.stdout, /mode: config\/credentials\.toml 0644 → 0600/);
    assert.match(p.stdout, /mode only: config\/credentials\.toml 0644 → 0600 \(the content did not change\)/);
    // Another path's history does not take it.
    assert.doesNotMatch(cli(t, ['history', ORG]).stdout, /mode: /);
    const j = JSON.parse(cli(t, ['history', CRED, '--json']).stdout) as { message: string }[];
    assert.equal(j.length, 2);
  });
});

describe('edit without a terminal', () => {
  it('refuses at once (exit 2) instead of starting vi, and says what works', () => {
    const t = inited();
    // stdin a pipe that stays open: vi would wait for it forever (spawnSync's timeout would fire).
    const r = spawnSync(process.execPath, [CLI, 'edit', ORG, '--root', t.root], { env: { ...t.env, EDITOR: '', VISUAL: '' }, stdio: ['pipe', 'pipe', 'pipe'], encoding: 'utf8', timeout: 15_000 });
    assert.equal(r.error, undefined, 'edit did not wait');
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /no terminal for the editor \(vi\)/);
    assert.match(r.stderr, /warden apply orgs\/bookclub\.toml --from FILE/);
    const nano = cli(t, ['edit', ORG], { env: { EDITOR: '/usr/bin/nano -w', VISUAL: '' } });
    assert.equal(nano.code, 2, nano.stderr);
    // A command that needs no terminal still works from a script.
    assert.equal(cli(t, ['edit', ORG], { env: { EDITOR: 'true', VISUAL: '' } }).code, 0);
  });
});

describe('approve without a terminal', () => {
  const TTY_TOML = TEST_WARDEN_TOML.replace('approval = "none"', 'approval = "tty"');
  it('exits non-zero and says what would work; on a terminal it still approves', () => {
    const t = inited(TTY_TOML);
    const next = readFileSync(t.p(ORG), 'utf8').replace('hourly_cap = 20', 'hourly_cap = 21');
    const ap = cli(t, ['apply', ORG, '--from', '-'], { input: next });
    assert.equal(ap.code, 0, ap.stderr);
    const id = /request (\S+) awaits approval/.exec(ap.stdout)?.[1];
    assert.ok(id, ap.stdout);
    const r = cli(t, ['approve', id]);
    assert.equal(r.code, 2, r.stdout);
    assert.match(r.stderr, /no terminal to confirm request/);
    assert.match(r.stderr, /approval = "owner-code"/);
    assert.match(r.stderr, /--code CODE/);
    assert.doesNotMatch(r.stdout, /confirm it on a terminal/);
    const y = ptyCli(t, [['\\[y/N\\]', 'y\r']], ['approve', id]);
    assert.equal(y.code, 0, y.out);
    assert.match(y.out, /applied orgs\/bookclub\.toml/);
  });

  it('status says what approval = "tty" protects against, and what not', () => {
    const t = inited(TTY_TOML);
    const s = cli(t, ['status']);
    assert.match(s.stdout, /approval = "tty": .*stops scripts and piped input/);
    assert.match(s.stdout, /does not stop a program running as you, which can send the guard its answer itself .* or give "warden approve ID" a pseudo-terminal of its own/);
    assert.match(s.stdout, /approval = "owner-code"/);
  });
});

describe('time windows and warden\'s own argument errors', () => {
  it("history --since/--until/-n; a bad value or unknown option is one line in warden's words", () => {
    const t = inited();
    for (const n of [21, 22, 23]) {
      const next = readFileSync(t.p(ORG), 'utf8').replace(/hourly_cap = \d+/, `hourly_cap = ${n}`);
      assert.equal(cli(t, ['apply', ORG, '--from', '-'], { input: next }).code, 0);
    }
    const all = JSON.parse(cli(t, ['history', '--json']).stdout) as unknown[];
    assert.equal(all.length, 4);
    assert.equal((JSON.parse(cli(t, ['history', '-n', '2', '--json']).stdout) as unknown[]).length, 2);
    assert.equal((JSON.parse(cli(t, ['history', ORG, '--since', '1d', '--json']).stdout) as unknown[]).length, 4);
    assert.equal((JSON.parse(cli(t, ['history', '--since', 'today', '--json']).stdout) as unknown[]).length, 4);
    assert.equal((JSON.parse(cli(t, ['history', '--until', 'yesterday', '--json']).stdout) as unknown[]).length, 0);
    assert.equal((JSON.parse(cli(t, ['history', '--since', 'tomorrow', '--json']).stdout) as unknown[]).length, 0);
    const bad = cli(t, ['history', '--since', 'soon']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^warden history: --since "soon": give an ISO time/);
    assert.equal(bad.stderr.trim().split('\n').length, 1);
    const n0 = cli(t, ['history', '-n', 'x']);
    assert.equal(n0.code, 2);
    assert.match(n0.stderr, /^warden history: -n "x": give a whole number/);
    const unk = cli(t, ['history', '--bogus']);
    assert.equal(unk.code, 2);
    assert.equal(unk.stderr.trim().split('\n').length, 1, unk.stderr);
    assert.match(unk.stderr, /^warden history: unknown option --bogus \(warden history takes .*--since X.*; see 'warden history --help'\)$/m);
    assert.doesNotMatch(unk.stderr, /Unknown option|positional argument|'--bogus'/);
    const missing = cli(t, ['alerts', '--since']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^warden alerts: option --since needs a value/);
  });

  it('alerts --until, --since today|yesterday', () => {
    const t = inited();
    const day = 86_400_000;
    const iso = (ms: number) => new Date(ms).toISOString();
    const now = Date.now();
    const mk = (id: string, ms: number) => JSON.stringify({ id, time: iso(ms), action: 'reverted', path: ORG, reason: 'content', advice: 'x', before: null, after: null, quarantine: null }) + '\n';
    // Alerts as the guard records them, at chosen times: two days ago, yesterday noon, now.
    const midnight = new Date(now); midnight.setHours(0, 0, 0, 0);
    const yNoon = midnight.getTime() - day / 2;
    appendFileSync(t.p('snapshots/alerts.jsonl'), mk('a-old', now - 3 * day) + mk('a-yest', yNoon) + mk('a-now', now));
    const ids = (args: string[]) => (JSON.parse(cli(t, ['alerts', ...args, '--json']).stdout) as { id: string }[]).map((a) => a.id);
    assert.deepEqual(ids([]), ['a-old', 'a-yest', 'a-now']);
    assert.deepEqual(ids(['--since', 'today']), ['a-now']);
    assert.deepEqual(ids(['--since', 'yesterday', '--until', 'today']), ['a-yest']);
    assert.deepEqual(ids(['--until', 'yesterday']), ['a-old']);
    assert.deepEqual(ids(['--until', '2d']), ['a-old']);
    const bad = cli(t, ['alerts', '--until', 'later']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^warden alerts: --until "later"/);
  });

  it('history pages on a terminal (PAGER), never off a terminal, with --json or --no-pager', () => {
    const t = inited();
    const pager = { PAGER: 'sed "s/^/PAGED: /"' };
    const tty = ptyCli(t, [], ['history'], pager);
    assert.equal(tty.code, 0, tty.out);
    assert.match(tty.out, /PAGED: .*init: baseline/);
    assert.doesNotMatch(ptyCli(t, [], ['history', '--no-pager'], pager).out, /PAGED/);
    assert.doesNotMatch(ptyCli(t, [], ['history', '--json'], pager).out, /PAGED/);
    const piped = cli(t, ['history'], { env: pager });
    assert.match(piped.stdout, /init: baseline/);
    assert.doesNotMatch(piped.stdout, /PAGED/);
    // WARDEN_PAGER wins, as GIT_PAGER does; "cat" means no pager.
    assert.doesNotMatch(ptyCli(t, [], ['history'], { ...pager, WARDEN_PAGER: 'cat' }).out, /PAGED/);
  });
});

describe('check a candidate without installing it (visudo -c -f)', () => {
  it('check --from FILE PATH finds the typo the guard reverts before a plain check sees it', async () => {
    const t = inited();
    await world.daemon(t);
    const typo = join(t.outside, 'bookclub.toml');
    writeFileSync(typo, readFileSync(t.p(ORG), 'utf8').replace('hourly_cap = 20', 'hourly_cap = "twenty"'));
    const r = cli(t, ['check', '--from', typo, ORG]);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /checking .*bookclub\.toml as orgs\/bookclub\.toml \(nothing is installed\)/);
    assert.match(r.stdout, /error orgs\/bookclub\.toml:\d+:\d+: /);
    // Nothing was installed or proposed; the root's own file is as approved.
    assert.doesNotMatch(readFileSync(t.p(ORG), 'utf8'), /twenty/);
    assert.equal(cli(t, ['check', '--from', '-', ORG], { input: readFileSync(t.p(ORG)) }).code, 0);
    const own = cli(t, ['check', ORG]);
    assert.equal(own.code, 0, own.stdout);
    assert.match(own.stdout, /checking .*orgs\/bookclub\.toml as orgs\/bookclub\.toml/);
    const notPolicy = cli(t, ['check', '--from', typo, CRED]);
    assert.equal(notPolicy.code, 2);
    assert.match(notPolicy.stderr, /is not a policy file/);
    assert.equal(cli(t, ['check', '--from', typo]).code, 2);
  });
});

describe('wording tells the truth', () => {
  it("a file seen empty and then written is not just 'emptied': the alert says what the rejected file held", async () => {
    const t = inited();
    await world.daemon(t);
    // The shell's `>`: truncate (the guard sees it empty and reverts), then write into the same inode.
    const fd = openSync(t.p(ORG), 'w');
    try {
      await waitFor(() => readAlertsOf(t).some((a) => a.path === ORG), 15_000, 'the revert of the emptied file');
      writeSync(fd, 'members = ["666666666666666666"]\n');
    } finally { closeSync(fd); }
    const a = readAlertsOf(t).find((x) => x.path === ORG)!;
    assert.equal(a.reason, 'emptied');
    const out = cli(t, ['alerts']).stdout;
    assert.match(out, /emptied \(then written: the rejected file holds 33 byte\(s\); 'warden diff /);
    assert.match(cli(t, ['why', ORG]).stdout, /then written: the rejected file holds 33 byte/);
  });

  it("why does not advise running why", async () => {
    const t = inited();
    await world.daemon(t);
    writeFileSync(t.p(ORG), 'members = ["666"]\n');
    await waitFor(() => readAlertsOf(t).some((a) => a.path === ORG), 15_000, 'an alert');
    const w = cli(t, ['why', ORG]);
    assert.match(w.stdout, /recent alert/);
    assert.doesNotMatch(w.stdout, /warden why/);
    assert.match(w.stdout, /warden accept/);
  });

  it('status does not count a desktop channel that is off as "not delivered yet"', async () => {
    const t = world.root({ wardenToml: `${TEST_WARDEN_TOML}\n[notify.desktop]\nenabled = true\n` });
    assert.equal(cli(t, ['init']).code, 0);
    writeFileSync(t.p(ORG), 'members = ["666"]\n');
    await world.daemon(t, [], { PATH: t.outside });
    await waitFor(() => /desktop: off/.test(cli(t, ['status']).stdout), 15_000, 'desktop shown as off');
    const s = cli(t, ['status']).stdout;
    assert.doesNotMatch(s, /not delivered yet/);
    assert.match(s, /notifications: all delivered on the channels that are on/);
  });

  it("notify test says where the journal line went", () => {
    const t = world.root({ wardenToml: `${TEST_WARDEN_TOML}\n[notify.journal]\nenabled = true\n`, init: true });
    const r = cli(t, ['notify', 'test']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /ok {4}journal: the line went to this command's stderr, not the journal/);
    assert.match(r.stderr, /<5>warden: warden test message/);
    // Under systemd stderr is the journal's stream ($JOURNAL_STREAM names its device:inode).
    const errFile = join(t.outside, 'stderr');
    const fd = openSync(errFile, 'w');
    try {
      const st = fstatSync(fd);
      const j = spawnSync(process.execPath, [CLI, 'notify', 'test', '--root', t.root], { env: { ...t.env, JOURNAL_STREAM: `${st.dev}:${st.ino}` }, stdio: ['ignore', 'pipe', fd], encoding: 'utf8' });
      assert.match(j.stdout, /ok {4}journal: the line went to the journal/);
    } finally { closeSync(fd); }
  });

  it('a binary or non-UTF-8 TOML file is refused as not text, not as "illegal character in key"', () => {
    const t = inited();
    const bin = Buffer.concat([Buffer.from('\x7fELF'), Buffer.from([0, 1, 2, 0]), Buffer.from('members = []\n')]);
    const r = cli(t, ['apply', ORG, '--from', '-'], { input: bin });
    assert.equal(r.code, 1);
    assert.match(r.stderr, /orgs\/bookclub\.toml: the proposed content is not text: it holds a NUL byte at byte 4/);
    assert.doesNotMatch(r.stderr, /illegal character/i);
    const latin1 = Buffer.from('members = ["caf\xe9"]\n', 'latin1');
    const u = cli(t, ['apply', ORG, '--from', '-'], { input: latin1 });
    assert.equal(u.code, 1);
    assert.match(u.stderr, /is not text: it is not valid UTF-8 \(at byte 15\)/);
    const c = cli(t, ['apply', CRED, '--from', '-'], { input: bin });
    assert.match(c.stderr, /config\/credentials\.toml: the proposed content is not text/);
  });

  it('a change of line endings alone is said as such', () => {
    const t = inited(TEST_WARDEN_TOML.replace('approval = "none"', 'approval = "tty"'));
    const crlf = readFileSync(t.p(ORG), 'utf8').replace(/\n/g, '\r\n');
    const r = cli(t, ['apply', ORG, '--from', '-'], { input: crlf });
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /line endings only: LF → CRLF, \d+ line\(s\); the text is the same/);
    assert.doesNotMatch(r.stdout, /^ {2}- /m);
  });

  it('a new proposal for a path supersedes its pending request, and deny --all drops the rest', () => {
    const t = inited(TEST_WARDEN_TOML.replace('approval = "none"', 'approval = "tty"'));
    const v = (n: number) => readFileSync(t.p(ORG), 'utf8').replace('hourly_cap = 20', `hourly_cap = ${n}`);
    const first = cli(t, ['apply', ORG, '--from', '-'], { input: v(21) });
    const id1 = /request (\S+) awaits/.exec(first.stdout)![1]!;
    const second = cli(t, ['apply', ORG, '--from', '-'], { input: v(22) });
    assert.match(second.stderr, new RegExp(`this proposal supersedes request ${id1} for the same file: withdrawn, nothing of it was applied`));
    const third = cli(t, ['apply', ORG, '--from', '-'], { input: v(23) });
    assert.equal(third.code, 0, third.stderr);
    const left = JSON.parse(cli(t, ['approve', '--json']).stdout) as { id: string; supersedes: string | null }[];
    assert.equal(left.length, 1, 'three apply runs for one path leave one request');
    assert.ok(left[0]!.supersedes, 'the request says which one it replaced');
    cli(t, ['apply', 'config/guests.toml', '--from', '-'], { input: readFileSync(t.p('config/guests.toml'), 'utf8') + '\n' });
    assert.equal((JSON.parse(cli(t, ['approve', '--json']).stdout) as unknown[]).length, 2);
    const d = cli(t, ['deny', '--all']);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, /2 request\(s\) denied; nothing was changed/);
    assert.match(cli(t, ['approve']).stdout, /no pending approvals/);
  });
});

describe('a 10,000-file root', () => {
  const N = 10_000;
  const bigToml = `${TEST_WARDEN_TOML}\n[[protect]]\npath = "data/*.txt"\nkind = "text"\n`;
  const fill = (t: TestRoot) => {
    mkdirSync(t.p('data'));
    for (let i = 0; i < N; i++) writeFileSync(t.p(`data/f${String(i).padStart(5, '0')}.txt`), `file ${i}\n`);
  };

  it('init shows progress on a terminal and a summary first; the list on request; status summarises', () => {
    const t = world.root({ wardenToml: bigToml });
    fill(t);
    const r = ptyCli(t, [], ['init'], {}, { deadlineS: 240 });
    assert.equal(r.code, 0, r.out.slice(-2000));
    assert.match(r.out, /reading \d{1,3}(,\d{3})* of 10,00\d files…/);
    assert.match(r.out, /recording the history \(git\) of 10,00\d files…/);
    const lines = r.out.split(/\r?\n/).filter((l) => l.trim());
    assert.ok(lines.length < 30, `init printed ${lines.length} lines`);
    assert.match(r.out, /Baseline recorded: 10,?00\d file\(s\)/);
    assert.match(r.out, /data\/ {2}10000 file\(s\)/);
    assert.doesNotMatch(r.out, /f00042\.txt/);
    // Off a terminal: no progress line at all.
    const st = cli(t, ['status']);
    assert.ok(st.stdout.split('\n').includes(`files: ${N + 6} protected, ${N + 6} ok`), st.stdout.slice(0, 800));
    assert.ok(st.stdout.split('\n').length < 30, st.stdout.slice(0, 500));
    writeFileSync(t.p('data/f00042.txt'), 'changed\n');
    const drift = cli(t, ['status']);
    assert.match(drift.stdout, /files: 10006 protected, 10005 ok, 1 drift/);
    assert.match(drift.stdout, /DRIFT data\/f00042\.txt/);
    assert.doesNotMatch(drift.stdout, /ok {4}data\/f00041\.txt/);
    const all = cli(t, ['status', '--list']);
    assert.match(all.stdout, /ok {4}data\/f00041\.txt/);
  });

  it('init --list prints each file; off a terminal init prints no progress', () => {
    const t = world.root({ wardenToml: bigToml });
    fill(t);
    const r = cli(t, ['init', '--list']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, / {2}data\/f09999\.txt/);
    assert.doesNotMatch(r.stderr, /reading|…/);
  });
});

describe('completion and the man page come from the --help table', () => {
  const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: '/', timeout: 30_000 });
  it('the installed man page is the one the table generates; package.json installs it', () => {
    const gen = run(['completion', 'man']);
    assert.equal(gen.status, 0, gen.stderr);
    assert.equal(readFileSync(join(REPO, 'man', 'warden.1'), 'utf8'), gen.stdout, "man/warden.1 is stale: regenerate it with 'node dist/src/cli/main.js completion man > man/warden.1'");
    const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { files: string[]; man: string[] };
    assert.ok(pkg.files.includes('man'));
    assert.deepEqual(pkg.man, ['./man/warden.1']);
  });

  it('every option each command accepts is completed, in bash, zsh and fish; bash completes for real', async () => {
    const { commands } = await import('../../src/cli/commands/index.js');
    const bash = run(['completion', 'bash']).stdout;
    const zsh = run(['completion', 'zsh']).stdout;
    const fish = run(['completion', 'fish']).stdout;
    const man = run(['completion', 'man']).stdout;
    for (const c of commands) {
      const spec = await c.load();
      for (const [name, o] of Object.entries(spec.options ?? {})) {
        for (const text of [bash, zsh]) assert.ok(text.includes(`--${name}`), `${c.name} --${name} missing`);
        assert.ok(fish.includes(`-l ${name}`), `fish: ${c.name} --${name}`);
        assert.ok(man.includes(`\\-\\-${name.replace(/-/g, '\\-')}`), `man: ${c.name} --${name}`);
        if ('short' in o && o.short) assert.ok(bash.includes(`-${o.short}`));
      }
      assert.ok(bash.includes(c.name.split(' ')[0]!), c.name);
    }
    const complete = (line: string) => spawnSync('bash', ['-c', `source /dev/stdin <<<"$W"; COMP_WORDS=(${line}); COMP_CWORD=$(( \${#COMP_WORDS[@]} - 1 )); _warden; printf '%s\\n' "\${COMPREPLY[@]}"`], { env: { W: bash, PATH: process.env.PATH }, encoding: 'utf8' }).stdout.split('\n').filter(Boolean);
    assert.deepEqual(complete("warden hist"), ['history']);
    assert.ok(complete("warden history --s").includes('--since'));
    assert.deepEqual(complete("warden notify t"), ['test']);
    assert.ok(complete("warden deny --a").includes('--all'));
    assert.equal(run(['completion', 'tcsh']).status, 2);
  });
});

describe('a deleted store is named as such, not as "a baseline already exists"', () => {
  it('init after the store was deleted says the store is gone and how to go on; init --force takes the disk as the new baseline', () => {
    const t = world.root();
    assert.equal(cli(t, ['init']).code, 0);
    rmSync(t.p('snapshots'), { recursive: true, force: true });
    const again = cli(t, ['init']);
    assert.equal(again.code, 2, again.stderr);
    assert.match(again.stderr, /had a baseline \(its seal is in .*\), but its store is gone: deleted or moved\?/);
    assert.doesNotMatch(again.stderr, /already exists/);
    const forced = cli(t, ['init', '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(cli(t, ['verify']).code, 0);
  });
});
