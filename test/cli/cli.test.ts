/**
 * The first run and everyday use, through the real binary: root discovery, paths,
 * "not initialised", init's refusals, --version, help, alerts filters, diff, history -p,
 * status exit codes and wording, journal prefixes, one daemon per root.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, REPO, TEST_WARDEN_TOML, cli, readAlertsOf, secretValues, testWorld, waitFor, type CliResult, type Daemon, type TestRoot } from '../helpers/root.js';
import { ptyRun } from '../helpers/pty.js';

const world = testWorld();
after(() => world.cleanup());
const fresh = (toml?: string): TestRoot => world.root(toml ? { wardenToml: toml } : {});
/** A fresh root after `warden init` (a failed init fails the test). */
const inited = (toml?: string): TestRoot => world.root({ ...(toml ? { wardenToml: toml } : {}), init: true });
const daemon = (t: TestRoot, args: string[] = ['--guard'], env: NodeJS.ProcessEnv = {}): Promise<Daemon> => world.daemon(t, args, env);

/** The CLI from a given directory, without --root (unless given in args). */
function at(t: TestRoot, cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): CliResult {
  const r = spawnSync(process.execPath, [CLI, ...args], { cwd, env: { ...t.env, ...env }, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

const ORG = 'orgs/bookclub.toml';

async function revertOf(t: TestRoot, path: string, edit: () => void): Promise<string> {
  const n = readAlertsOf(t).length;
  edit();
  await waitFor(() => readAlertsOf(t).length > n && readAlertsOf(t).some((a) => a.path === path), 15_000, `an alert for ${path}`);
  return readAlertsOf(t).filter((a) => a.path === path).pop()!.id;
}

describe('the root is found as git finds its repository', () => {
  it('from inside orgs/: why and edit work on the root above, with paths relative to the cwd', async () => {
    const t = inited();
    await daemon(t);
    await revertOf(t, ORG, () => writeFileSync(t.p(ORG), 'members = ["666"]\n'));
    const why = at(t, t.p('orgs'), ['why', 'bookclub.toml']);
    assert.equal(why.code, 0, why.stderr);
    assert.match(why.stdout, /1 recent alert\(s\) for orgs\/bookclub\.toml/);
    const edit = at(t, t.p('orgs'), ['edit', 'bookclub.toml'], { EDITOR: 'true', VISUAL: '' });
    assert.equal(edit.code, 0, edit.stderr);
    assert.match(edit.stdout, /no changes to orgs\/bookclub\.toml/);
    assert.ok(!existsSync(t.p('orgs/snapshots')));
  });

  it('$WARDEN_ROOT is honoured; outside any root the error says how to give one', () => {
    const t = inited();
    const viaEnv = at(t, t.outside, ['verify'], { WARDEN_ROOT: t.root });
    assert.equal(viaEnv.code, 0, viaEnv.stderr);
    const none = at(t, t.outside, ['verify']);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /not inside a warden root: no config\/warden\.toml in .* or any directory above it \(give --root DIR or set \$WARDEN_ROOT\)/);
  });

  it('an absolute path inside the root is accepted, one outside is refused clearly', async () => {
    const t = inited();
    const abs = cli(t, ['why', t.p(ORG)]);
    assert.equal(abs.code, 0, abs.stderr);
    assert.match(abs.stdout, /No alerts for orgs\/bookclub\.toml/);
    const out = cli(t, ['why', join(t.outside, 'target.txt')]);
    assert.equal(out.code, 2);
    assert.match(out.stderr, /is outside the root/);
    const up = at(t, t.p('orgs'), ['why', '../../outside/target.txt']);
    assert.equal(up.code, 2);
    assert.match(up.stderr, /is outside the root/);
  });

  it('why says when a path is not protected (and exits 1)', () => {
    const t = inited();
    const r = cli(t, ['why', 'nosuch/path']);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /nosuch\/path is not protected by warden/);
    assert.equal(JSON.parse(cli(t, ['why', 'nosuch/path', '--json']).stdout).protected, false);
    assert.equal(cli(t, ['why', 'orgs']).code, 0, 'a protected directory is protected');
  });
});

describe('the first run', () => {
  it('a root with no baseline says "not initialised: run `warden init`" everywhere', () => {
    const t = fresh();
    for (const args of [['verify'], ['status'], ['run', '--guard'], ['edit', ORG], ['why', ORG], ['alerts'], ['history'], ['diff'], ['apply', ORG, '--from', '-'], ['cred', 'list']]) {
      const r = cli(t, args, { env: { EDITOR: 'true' } });
      // A guard exits 78 (EX_CONFIG): the unit's RestartPreventExitStatus= stops a crash loop.
      assert.equal(r.code, args[0] === 'run' ? 78 : 2, args.join(' '));
      assert.match(r.stderr, /not initialised: run `warden init`/, `${args.join(' ')}: ${r.stderr}`);
      assert.doesNotMatch(r.stderr, /key|--force/, args.join(' '));
    }
    assert.ok(!existsSync(t.p('snapshots/baseline')));
  });

  it('init refuses a directory without config/warden.toml (nothing to protect) and creates nothing', () => {
    const t = fresh();
    const empty = mkdtempSync(join(tmpdir(), 'warden-i16-empty-'));
    try {
      const r = at(t, empty, ['init', '--root', empty]);
      assert.equal(r.code, 2);
      assert.match(r.stderr, /nothing to protect in .*: it has no config\/warden\.toml/);
      assert.deepEqual(readdirSync(empty), []);
      const found = at(t, empty, ['init']);
      assert.equal(found.code, 2);
      assert.match(found.stderr, /not inside a warden root/);
      assert.deepEqual(readdirSync(empty), []);
    } finally { rmSync(empty, { recursive: true, force: true }); }
  });

  it('init from inside orgs/ initialises the root above, never a nested snapshots/', () => {
    const t = fresh();
    const r = at(t, t.p('orgs'), ['init']);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(t.p('snapshots/baseline/index')));
    assert.ok(!existsSync(t.p('orgs/snapshots')));
    assert.match(r.stdout, /Baseline recorded: 6 file\(s\)/);
  });

  it('--version prints the package version', () => {
    const t = fresh();
    const v = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
    const r = at(t, t.outside, ['--version']);
    assert.equal(r.code, 0);
    assert.equal(r.stdout, `warden ${v}\n`);
    assert.deepEqual(JSON.parse(at(t, t.outside, ['--version', '--json']).stdout), { version: v });
  });
});

describe('help that teaches', () => {
  const names = ['init', 'run', 'status', 'verify', 'alerts', 'why', 'history', 'diff', 'edit', 'apply', 'rm', 'cred', 'approve', 'deny', 'accept', 'check', 'explain', 'notify test', 'install-units', 'rehome', 'completion', 'desktop', 'profiles'];
  it('every command: its own usage line, --root in it, every option on a line, examples', async () => {
    const t = fresh();
    const { commands } = await import('../../src/cli/commands/index.js');
    assert.deepEqual(commands.map((c) => c.name).sort(), [...names].sort());
    for (const c of commands) {
      const spec = await c.load();
      const r = at(t, t.outside, [...c.name.split(' '), '--help']);
      assert.equal(r.code, 0, c.name);
      assert.ok(r.stdout.startsWith(`usage: warden ${c.name}`), `${c.name}: ${r.stdout.split('\n')[0]}`);
      assert.match(r.stdout.split('\n\n')[0]!, /--root DIR/, `${c.name} usage names --root`);
      for (const [opt, def] of Object.entries(spec.options ?? {})) {
        const line = r.stdout.split('\n').find((l) => l.trimStart().startsWith(`--${opt}`) || l.trimStart().startsWith(`-${def.short ?? '?'}, --${opt}`));
        assert.ok(line && line.trim().length > opt.length + 6, `${c.name} --help describes --${opt}`);
      }
      assert.match(r.stdout, /\nexamples:\n {2}warden /, `${c.name} has examples`);
    }
  });

  it('cred rotate --help shows its own usage, not cred set\'s', () => {
    const t = fresh();
    const r = at(t, t.outside, ['cred', 'rotate', '--help']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^usage: warden cred rotate GROUP/);
    assert.doesNotMatch(r.stdout, /cred set/);
    assert.match(at(t, t.outside, ['cred', 'set', '--help']).stdout, /^usage: warden cred set (\[--new\] )?GROUP\.KEY/);
  });

  it('a bare group lists its subcommands; unknown commands honour --json', () => {
    const t = fresh();
    const n = at(t, t.outside, ['notify']);
    assert.equal(n.code, 2);
    assert.match(n.stdout, /warden notify test/);
    const c = at(t, t.outside, ['cred']);
    assert.equal(c.code, 2);
    for (const s of ['set', 'rotate', 'list']) assert.match(c.stdout, new RegExp(`warden cred ${s}`));
    const j = at(t, t.outside, ['bogus', '--json']);
    assert.equal(j.code, 2);
    assert.match(JSON.parse(j.stdout).error, /unknown command "bogus"/);
    assert.equal(j.stderr, '');
    const bare = at(t, t.outside, ['--json']);
    assert.equal(bare.code, 2);
    assert.equal(JSON.parse(bare.stdout).error, 'no command given');
    const g = at(t, t.outside, ['notify', 'bogus', '--json']);
    assert.equal(g.code, 2);
    assert.match(JSON.parse(g.stdout).error, /unknown subcommand/);
  });
});

describe('alerts, diff and history -p', () => {
  it('alerts --since and --path filter; a bad --since is a usage error', async () => {
    const t = inited();
    await daemon(t);
    await revertOf(t, ORG, () => writeFileSync(t.p(ORG), 'members = ["666"]\n'));
    await revertOf(t, 'config/guests.toml', () => writeFileSync(t.p('config/guests.toml'), 'channels = ["1"]\n'));
    const ids = (args: string[]) => (JSON.parse(cli(t, ['alerts', '--json', ...args]).stdout) as { path: string }[]).map((a) => a.path);
    assert.deepEqual(ids([]), [ORG, 'config/guests.toml']);
    assert.deepEqual(ids(['--path', 'orgs/']), [ORG]);
    assert.deepEqual(ids(['--path', t.p('config/guests.toml')]), ['config/guests.toml']);
    assert.deepEqual(ids(['--since', '1h']), [ORG, 'config/guests.toml']);
    assert.deepEqual(ids(['--since', new Date(Date.now() + 3_600_000).toISOString()]), []);
    const bad = cli(t, ['alerts', '--since', 'yesterday-ish']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--since .*ISO time .* or an age/);
  });

  it('alerts --follow prints a new alert as it is recorded', async () => {
    const t = inited();
    await daemon(t);
    const first = await revertOf(t, ORG, () => writeFileSync(t.p(ORG), 'members = ["1"]\n'));
    const p = spawn(process.execPath, [CLI, 'alerts', '--follow', '--path', ORG, '--root', t.root], { env: t.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout!.on('data', (d) => { out += String(d); });
    const exited = new Promise<number | null>((r) => p.once('exit', (code) => r(code)));
    try {
      await waitFor(() => out.includes(first), 10_000, 'the existing alert printed (it is following now)');
      await revertOf(t, 'config/guests.toml', () => writeFileSync(t.p('config/guests.toml'), 'channels = ["2"]\n'));
      const id = await revertOf(t, ORG, () => writeFileSync(t.p(ORG), 'members = ["666"]\n'));
      await waitFor(() => out.includes(id), 10_000, 'the new alert printed');
      assert.doesNotMatch(out, /guests\.toml/, '--path filters while following');
    } finally { p.kill('SIGTERM'); }
    assert.equal(await exited, 0);
  });

  it('diff ALERT-ID: removals before additions, the rejected content against the approved', async () => {
    const t = inited();
    await daemon(t);
    const id = await revertOf(t, ORG, () => writeFileSync(t.p(ORG), readFileSync(t.p(ORG), 'utf8').replace('hourly_cap = 20', 'hourly_cap = 99')));
    const r = cli(t, ['diff', id]);
    assert.equal(r.code, 0, r.stderr);
    const lines = r.stdout.split('\n');
    const minus = lines.findIndex((l) => l === '  - hourly_cap = 20');
    const plus = lines.findIndex((l) => l === '  + hourly_cap = 99');
    assert.ok(minus > 0 && plus === minus + 1, r.stdout);
    assert.doesNotMatch(r.stdout, /\x1b\[/, 'no colour on a pipe');
    assert.equal(cli(t, ['diff']).stdout, r.stdout, 'no id: the latest alert');
    assert.equal(cli(t, ['diff', 'nope']).code, 1);
    const gone = await revertOf(t, 'blocks/conditional/nsfw.md', () => rmSync(t.p('blocks/conditional/nsfw.md')));
    const d = cli(t, ['diff', gone]).stdout;
    assert.match(d, /\+\+\+ blocks\/conditional\/nsfw\.md \(rejected: the file was deleted\)\n {2}@@ line 1 \(5 lines removed\)\n {2}- \+\+\+\n/);
    const added = await revertOf(t, 'orgs/new.toml', () => writeFileSync(t.p('orgs/new.toml'), 'members = []\n'));
    const n = cli(t, ['diff', added]).stdout;
    assert.match(n, /--- orgs\/new\.toml \(no approved version: a new file\)\n.*\n {2}@@ line 1 \(1 line added\)\n {2}\+ members = \[\]\n/);
  });

  it('diff of a credential alert and history -p show fingerprints, never a value', async () => {
    const t = inited();
    await daemon(t);
    const secrets = secretValues(t);
    const text = readFileSync(t.p('config/credentials.toml'), 'utf8').replace(/api_key = ".*"/, 'api_key = "sk-i16-NEW-SECRET-value"');
    const id = await revertOf(t, 'config/credentials.toml', () => writeFileSync(t.p('config/credentials.toml'), text));
    for (const args of [['diff', id], ['diff', id, '--json']]) {
      const r = cli(t, args);
      assert.equal(r.code, 0, r.stderr);
      for (const v of [...secrets, 'sk-i16-NEW-SECRET-value']) assert.ok(!r.stdout.includes(v), `${args.join(' ')} leaks a value`);
      assert.match(r.stdout, /anthropic\.api_key = [0-9a-f]{12}/);
    }
    const human = cli(t, ['diff', id]).stdout;
    assert.match(human, / {2}- anthropic\.api_key = [0-9a-f]{12}\n {2}\+ anthropic\.api_key = [0-9a-f]{12}/);
    // A sanctioned change of the same key, then history -p.
    const set = cli(t, ['cred', 'set', 'anthropic.api_key'], { input: 'sk-i16-APPLIED-secret\n' });
    assert.equal(set.code, 0, set.stderr);
    for (const args of [['history', '-p', 'config/credentials.toml'], ['history', '-p', '--json']]) {
      const h = cli(t, args);
      assert.equal(h.code, 0, h.stderr);
      for (const v of [...secrets, 'sk-i16-APPLIED-secret']) assert.ok(!h.stdout.includes(v), `${args.join(' ')} leaks a value`);
      assert.match(h.stdout, /-anthropic\.api_key = [0-9a-f]{12}/);
    }
    const hp = cli(t, ['history', '-p', ORG]).stdout;
    assert.match(hp, /\+hourly_cap = 20/, 'the init commit shows the file as added');
  });

  it('diffs are coloured on a terminal, and not with NO_COLOR', async () => {
    const t = inited();
    await daemon(t);
    const id = await revertOf(t, ORG, () => writeFileSync(t.p(ORG), 'members = ["666"]\n'));
    const env = { ...t.env };
    delete env.NO_COLOR;
    const coloured = ptyRun([], [process.execPath, CLI, 'diff', id, '--root', t.root], { env });
    assert.equal(coloured.code, 0, coloured.stdout);
    assert.match(coloured.stdout, /\x1b\[31m {2}- /);
    assert.match(coloured.stdout, /\x1b\[32m {2}\+ members/);
    const plain = ptyRun([], [process.execPath, CLI, 'diff', id, '--root', t.root], { env: { ...env, NO_COLOR: '1' } });
    assert.equal(plain.code, 0);
    assert.doesNotMatch(plain.stdout, /\x1b\[/);
  });
});

describe('status and the daemon', () => {
  it('status: 3 with no daemon, 1 on drift, 0 when guarded and clean; no raw JSON', async () => {
    const t = fresh(`${TEST_WARDEN_TOML}\n[notify.desktop]\nenabled = true\n`);
    assert.equal(cli(t, ['init']).code, 0);
    const down = cli(t, ['status']);
    assert.equal(down.code, 3, down.stdout);
    assert.match(down.stdout, /daemon: not running/);
    writeFileSync(t.p(ORG), 'members = ["666"]\n');
    assert.equal(cli(t, ['status']).code, 1);
    assert.equal(cli(t, ['status', '--json']).code, 1);
    // The notifier too, with the desktop channel and no notify-send on PATH.
    await daemon(t, [], { PATH: t.outside });
    await waitFor(() => readAlertsOf(t).length > 0, 15_000, 'changed-while-stopped alert');
    await waitFor(() => /desktop: off/.test(cli(t, ['status']).stdout), 15_000, 'desktop shown as off');
    const up = cli(t, ['status']);
    assert.equal(up.code, 0, up.stdout);
    assert.match(up.stdout, /desktop: off — notify-send is not installed/);
    assert.doesNotMatch(up.stdout, /[{}"]channel/);
    const alerts = cli(t, ['alerts']);
    assert.match(alerts.stdout, /\[desktop: off\]/);
    assert.doesNotMatch(alerts.stdout, /failed/);
  });

  it('a second warden run on the same root is refused at once, naming the running one', async () => {
    const t = inited();
    const d = await daemon(t);
    const r = cli(t, ['run', '--guard']);
    assert.equal(r.code, 2);
    // The message of the daemon check, not of the lock (which would have waited for it).
    assert.match(r.stderr, new RegExp(`a warden daemon \\(pid ${d.proc.pid}\\) already guards`));
  });

  it('journal lines carry <N> on a pipe, not on a terminal; after.sha256 is null for unread content', async () => {
    const t = inited();
    const d = await daemon(t);
    spawnSync('mkfifo', [t.p('orgs/.fifo')]);
    renameSync(t.p('orgs/.fifo'), t.p(ORG));
    await waitFor(() => readAlertsOf(t).some((a) => a.path === ORG), 15_000, 'fifo alert');
    const a = readAlertsOf(t).find((x) => x.path === ORG)!;
    assert.ok(a.after, 'the fifo has facts');
    assert.equal(a.after!.sha256, null);
    await waitFor(() => /<4>warden: reverted orgs\/bookclub\.toml/.test(d.stderr()), 5000, 'journal line on a pipe');
    await d.stop();
    // The same daemon on a terminal: a script starts it, makes an edit, waits for the alert, stops it.
    const script = [
      `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} run --guard --root ${JSON.stringify(t.root)} & pid=$!`,
      `until [ -S ${JSON.stringify(t.p('snapshots/control/warden.sock'))} ]; do sleep 0.05; done`,
      `n=$(wc -l < ${JSON.stringify(t.p('snapshots/alerts.jsonl'))})`,
      `echo 'members = ["7"]' > ${JSON.stringify(t.p(ORG))}`,
      `until [ "$(wc -l < ${JSON.stringify(t.p('snapshots/alerts.jsonl'))})" -gt "$n" ]; do sleep 0.05; done`,
      'sleep 0.3; kill $pid; wait $pid',
    ].join('\n');
    const r = ptyRun([], ['bash', '-c', script], { env: t.env, deadlineS: 40 });
    // The shell's `>` truncates before it writes: under load the guard may see the emptied file first.
    assert.match(r.stdout, /\nwarden: reverted orgs\/bookclub\.toml: (content|emptied)/, r.stdout);
    assert.doesNotMatch(r.stdout, /<\d>warden/);
  });
});

describe('notifier wording', () => {
  it('a folded storm reads in plain words', async () => {
    const { formatAlerts } = await import('../../src/notifier/format.js');
    const mk = (i: number, reason: 'content' | 'deleted') => ({ id: `id${i}`, time: `2026-12-01T09:00:0${i % 10}Z`, path: ORG, action: 'reverted' as const, reason, before: null, after: null, quarantine: null, advice: '' });
    const same = formatAlerts(Array.from({ length: 10 }, (_, i) => mk(i, 'content')), 2000).body;
    assert.match(same, /`orgs\/bookclub\.toml`: reverted 10 times — each time its content was changed directly; last at /);
    assert.doesNotMatch(same, /×/);
    const mixed = formatAlerts([mk(1, 'content'), mk(2, 'content'), mk(3, 'deleted')], 2000).body;
    assert.match(mixed, /reverted 3 times — its content was changed directly \(twice\); it was deleted \(once\)/);
  });
});

describe('no message or shipped file cites a document that does not ship', () => {
  it('the example root, the README and the messages in the code', () => {
    const files = ['README.md', ...readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`), 'config/warden.toml', 'config/conditions.toml', 'config/guests.toml', 'config/credentials.toml', 'orgs/bookclub.toml', 'blocks/conditional/nsfw.md'];
    for (const f of files) assert.doesNotMatch(readFileSync(join(REPO, f), 'utf8'), /SPEC|seeds\/|the seed/, f);
    // Messages: string literals in the built code (comments may cite it; they are not shown).
    const hits: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith('.js')) {
          for (const line of readFileSync(p, 'utf8').split('\n')) {
            if (/^\s*(\/\/|\*|\/\*)/.test(line)) continue;
            if (/(['"`])[^'"`]*SPEC §[^'"`]*\1/.test(line)) hits.push(`${p}: ${line.trim()}`);
          }
        }
      }
    };
    walk(join(REPO, 'dist', 'src'));
    assert.deepEqual(hits, []);
  });
});
