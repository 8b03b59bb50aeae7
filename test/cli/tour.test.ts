/**
 * The README's tour, run as written: its commands are taken from README.md and run in a
 * temporary clone of the example root with a running daemon (what `npm start` runs),
 * once in a plain shell (no terminal: `apply` stays pending), once on a pseudo-terminal
 * (every `[y/N]` answered y) and once in tmux (answers typed into the pane). Afterwards
 * the clone is back at its committed state, and the repository's own example files are
 * exactly as they were: the test never touches them.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { FIXTURE, REPO, treeSnapshot, waitFor } from '../helpers/root.js';
import { ptyRun } from '../helpers/pty.js';


/** The first ```sh block after the "A 60-second tour" heading. */
export function tourCommands(readme: string): string[] {
  const at = readme.indexOf('## A 60-second tour');
  assert.ok(at >= 0, 'README has the tour');
  const m = /```sh\n([\s\S]*?)```/.exec(readme.slice(at));
  assert.ok(m, 'the tour has a sh block');
  return m[1]!.split('\n').filter((l) => l.trim() !== '');
}

function sh(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/**
 * A temporary git clone of the example root as committed (git archive HEAD: never the working
 * tree, which the tour itself changes): the example files, package.json, the reset script,
 * dist/ linked. Outside a git checkout the example files come from the suite's fixture.
 */
function cloneExample(base: string): string {
  const clone = join(base, 'example');
  mkdirSync(clone, { recursive: true });
  const paths = ['config', 'orgs', 'blocks', 'snapshots/README.md', '.gitignore', 'package.json', 'scripts/reset-example.mjs'];
  const archive = spawnSync('git', ['archive', '--format=tar', 'HEAD', '--', ...paths], { cwd: REPO, maxBuffer: 64 << 20 });
  if (archive.status === 0) {
    const x = spawnSync('tar', ['-x', '--no-same-permissions', '--no-same-owner', '-C', clone], { input: archive.stdout });
    assert.equal(x.status, 0, `tar: ${x.stderr}`);
  } else {
    for (const f of ['.gitignore', 'package.json', 'scripts/reset-example.mjs']) { mkdirSync(dirname(join(clone, f)), { recursive: true }); cpSync(join(REPO, f), join(clone, f)); }
    for (const d of ['config', 'orgs', 'blocks']) cpSync(join(FIXTURE, d), join(clone, d), { recursive: true });
  }
  symlinkSync(join(REPO, 'dist'), join(clone, 'dist'));
  sh('git', ['init', '-q'], clone);
  sh('git', ['add', '-A'], clone);
  sh('git', ['-c', 'user.name=tour', '-c', 'user.email=tour@localhost', '-c', 'commit.gpgsign=false', 'commit', '-qm', 'example root'], clone);
  return clone;
}

function repoPicture(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const d of ['config', 'orgs', 'blocks']) for (const [k, v] of Object.entries(treeSnapshot(join(REPO, d)))) out[`${d}/${k}`] = v;
  out['snapshots/'] = existsSync(join(REPO, 'snapshots')) ? readdirSync(join(REPO, 'snapshots')).sort().join(',') : '(none)';
  return out;
}

describe('the README tour works as written', () => {
  const base = mkdtempSync(join(tmpdir(), 'warden-i16-tour-'));
  const before = repoPicture();
  let daemon: ChildProcess | null = null;
  let daemonErr = '';
  after(async () => {
    if (daemon && daemon.exitCode === null) {
      const gone = new Promise((r) => daemon!.once('exit', r));
      daemon.kill('SIGTERM');
      await gone;
    }
    rmSync(base, { recursive: true, force: true });
  });

  const clone = cloneExample(base);
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: join(base, 'state'), NO_COLOR: '1', TMPDIR: base };
  // On a terminal `history -p` pages through less, as git does (a newcomer presses q);
  // these runs drive the commands, not a pager.
  env.WARDEN_PAGER = 'cat';
  delete env.STATE_DIRECTORY; delete env.NOTIFY_SOCKET; delete env.WATCHDOG_USEC; delete env.WARDEN_ROOT; delete env.TMUX;
  const lines = tourCommands(readFileSync(join(REPO, 'README.md'), 'utf8'));
  // The one liberty taken: the tour's scratch file goes to this test's own directory.
  const script = ['shopt -s expand_aliases', 'set -e', ...lines.map((l) => l.replaceAll('/tmp/new.toml', join(base, 'new.toml'))), 'echo TOUR-DONE'].join('\n');
  writeFileSync(join(base, 'tour.sh'), script + '\n');

  const committed = () => sh('git', ['status', '--porcelain', '--', 'config', 'orgs', 'blocks'], clone);
  const warden = (args: string[]) => spawnSync(process.execPath, [join(clone, 'dist/src/cli/main.js'), ...args], { cwd: clone, env, encoding: 'utf8' });

  it('npm start guards the clone (the same command line as package.json says)', async () => {
    const start = (JSON.parse(readFileSync(join(clone, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start;
    assert.equal(start, 'node dist/src/cli/main.js run --root . --init-if-needed');
    const [, ...args] = start.split(' ');
    daemon = spawn(process.execPath, args, { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    daemon.stdout!.on('data', (d) => { out += String(d); });
    daemon.stderr!.on('data', (d) => { daemonErr += String(d); });
    await waitFor(() => out.includes('ready\n') || daemon!.exitCode !== null, 30_000, 'ready');
    assert.ok(out.includes('ready\n'), daemonErr);
  });

  it('in a plain shell: the edit is undone, apply waits for approval, and the root ends as committed', () => {
    // setsid: no controlling terminal, whatever terminal runs the tests (nobody to ask).
    const r = spawnSync('setsid', ['-w', 'bash', join(base, 'tour.sh')], { cwd: clone, env, encoding: 'utf8', timeout: 180_000 });
    const all = r.stdout + r.stderr;
    assert.equal(r.status, 0, all);
    assert.match(all, /TOUR-DONE/);
    assert.match(r.stdout, /^members = \["222222222222222222", "333333333333333333"\]$/m, 'cat shows the approved file');
    assert.match(r.stdout, /1 recent alert\(s\) for orgs\/bookclub\.toml/);
    assert.match(r.stdout, / {2}- hourly_cap = 20\n/, 'warden diff shows the approved lines as removed');
    assert.match(r.stdout, /clean: 6 file\(s\) match the baseline/);
    assert.match(r.stdout, /pending: request (\S+) awaits approval; confirm it on a terminal: 'warden approve \1'/);
    assert.match(r.stdout, /^\S+ {2}tty {2}orgs\/bookclub\.toml/m, 'warden approve lists the request');
    assert.match(r.stdout, /withdrawing pending request/);
    assert.match(r.stdout, /policy OK/);
    assert.equal(committed(), '');
    assert.equal(warden(['approve', '--json']).stdout.trim(), '[]');
  });

  it('on a terminal: apply is confirmed, history -p shows it, reset-example puts the committed file back', () => {
    const r = ptyRun([['\\[y/N\\] ', 'y\r']], ['bash', join(base, 'tour.sh')], { cwd: clone, env, deadlineS: 170, repeatLast: true, timeoutMs: 180_000 });
    assert.equal(r.code, 0, r.stdout);
    assert.match(r.stdout, /TOUR-DONE/);
    assert.match(r.stdout, /Apply request \S+\? \[y\/N\] y/);
    assert.match(r.stdout, /applied orgs\/bookclub\.toml \(baseline generation \d+/);
    assert.match(r.stdout, /no pending approvals/);
    assert.match(r.stdout, /\+hourly_cap = 25/, 'history -p shows the accepted change');
    assert.match(r.stdout, /== orgs\/bookclub\.toml: back to its committed version/);
    assert.match(r.stdout, /the example root matches its committed state again/);
    assert.equal(committed(), '');
    assert.equal(warden(['verify']).status, 0);
    const hist = warden(['history', 'orgs/bookclub.toml']).stdout;
    assert.equal((hist.match(/^ {4}apply: orgs\/bookclub\.toml$/gm) ?? []).length, 2, 'the change and the reset are both in history');
  });

  it('in tmux: the same tour, typed answers and all, ends at the committed state', async (ctx) => {
    if (spawnSync('tmux', ['-V']).status !== 0) { ctx.skip('tmux is not installed'); return; }
    const sock = `warden-i16-tour-${process.pid}`;
    const conf = join(base, 'tmux.conf');
    writeFileSync(conf, 'set -g history-limit 100000\nset -g remain-on-exit on\n');
    const tmux = (...args: string[]) => spawnSync('tmux', ['-L', sock, '-f', conf, ...args], { env, encoding: 'utf8' });
    const started = tmux('new-session', '-d', '-s', 'tour', '-x', '200', '-y', '50', '-c', clone, `bash ${join(base, 'tour.sh')}; echo TOUR-RC=$?`);
    assert.equal(started.status, 0, started.stderr);
    try {
      let answered = 0;
      const screen = () => tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'tour').stdout;
      await waitFor(() => {
        const text = screen();
        const asked = (text.match(/\? \[y\/N\] /g) ?? []).length;
        if (asked > answered) { tmux('send-keys', '-t', 'tour', 'y', 'Enter'); answered++; }
        return /TOUR-RC=\d+/.test(text);
      }, 170_000, 'the tour to finish in tmux');
      const text = screen();
      assert.match(text, /TOUR-RC=0/, text);
      assert.equal(answered, 2, 'apply and reset-example each asked once');
      assert.match(text, /applied orgs\/bookclub\.toml/);
      assert.match(text, /the example root matches its committed state again/);
      assert.equal(committed(), '');
    } finally { tmux('kill-server'); }
  });

  it('the desktop channel without notify-send is off, said once, not a failure per alert', async () => {
    if (spawnSync('sh', ['-c', 'command -v notify-send'], { env }).status === 0) return;
    // The tours ran synchronously: let the daemon's stderr, buffered in the pipe meanwhile, arrive.
    await waitFor(() => /reverted orgs\/bookclub\.toml/.test(daemonErr) && daemonErr.includes('desktop'), 10_000, 'the journal lines');
    assert.equal(daemonErr.split('\n').filter((l) => l.includes('desktop')).length, 1, `daemon stderr: ${JSON.stringify(daemonErr)}`);
    const a = warden(['alerts']).stdout;
    assert.match(a, /\[desktop: off\]/);
    assert.doesNotMatch(a, /desktop: failed/);
  });

  it("the repository's own example files are unchanged", () => {
    assert.deepEqual(repoPicture(), before);
  });
});
