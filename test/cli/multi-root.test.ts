/**
 * Several roots in one guard (docs/PROFILES.md, "Several roots in one guard"), through the
 * real CLI and daemon against real files in a temporary home: one `warden run` holds the
 * example root, a claude-code root and a codex root; a direct edit in each is reverted and
 * alerted in that root's own store only; after a kill -9 a restart guards all of them again;
 * a root that is not initialised stops the start, naming it; a stop leaves no process.
 */
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, FIXTURE, TEST_WARDEN_TOML, waitFor } from '../helpers/root.js';
import { killOwned, own } from '../helpers/children.js';
import type { Alert } from '../../src/store/alert-types.js';

const SETTINGS = '{\n  "permissions": { "allow": ["Read"] }\n}\n';
const CODEX = 'model = "gpt-5"\nsandbox_mode = "workspace-write"\n';

interface World { top: string; home: string; root: string; claude: string; codex: string; env: NodeJS.ProcessEnv; sel: string[] }
const worlds: World[] = [];

function makeWorld(): World {
  const top = realpathSync(mkdtempSync(join(tmpdir(), 'warden-multi-root-')));
  const home = join(top, 'home');
  const root = join(top, 'agent-root');
  const claude = join(home, '.claude');
  const codex = join(home, '.codex');
  for (const d of [claude, codex, root]) mkdirSync(d, { recursive: true });
  for (const d of ['config', 'orgs', 'blocks']) cpSync(join(FIXTURE, d), join(root, d), { recursive: true });
  writeFileSync(join(root, 'config', 'warden.toml'), TEST_WARDEN_TOML);
  writeFileSync(join(claude, 'settings.json'), SETTINGS);
  writeFileSync(join(codex, 'config.toml'), CODEX);
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: join(top, 'state'), WARDEN_GUARD_STATE_DIR: join(top, 'no-guard-state'), WARDEN_GUARD_RUNTIME_DIR: join(top, 'no-guard-run'), NO_COLOR: '1', HOME: home };
  for (const k of ['STATE_DIRECTORY', 'NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WARDEN_ROOT', 'XDG_CONFIG_HOME']) delete env[k];
  const w: World = { top, home, root, claude, codex, env, sel: ['--root', root, '--profile', 'claude-code', '--profile', 'codex', '--home', home] };
  worlds.push(w);
  return w;
}

function w(world: World, args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { env: world.env, cwd: '/', encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Each root's own selection, as every other command takes it. */
const each = (x: World): Record<'root' | 'claude' | 'codex', string[]> => ({
  root: ['--root', x.root],
  claude: ['--profile', 'claude-code', '--home', x.home],
  codex: ['--profile', 'codex', '--home', x.home],
});

function initAll(x: World, skip: string[] = []): void {
  for (const [k, sel] of Object.entries(each(x))) {
    if (skip.includes(k)) continue;
    const r = w(x, ['init', ...sel]);
    assert.equal(r.code, 0, `init ${k}: ${r.stderr}`);
  }
}

interface Run { proc: ChildProcess; out(): string; err(): string; exited: Promise<number | null> }
const runs: Run[] = [];

function spawnRun(x: World, args: string[]): Run {
  const proc = own(spawn(process.execPath, [CLI, 'run', ...args], { env: x.env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] }), `warden run ${args.join(' ')}`);
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d) => { out += String(d); });
  proc.stderr!.on('data', (d) => { err += String(d); });
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const run = { proc, out: () => out, err: () => err, exited };
  runs.push(run);
  return run;
}

async function ready(x: World, args: string[]): Promise<Run> {
  const r = spawnRun(x, args);
  await waitFor(() => r.out().includes('ready\n') || r.proc.exitCode !== null, 30_000, 'the guard of every root ready');
  assert.ok(r.out().includes('ready\n'), `the guard did not start: ${r.err()}`);
  return r;
}

function alertsOf(x: World, sel: string[]): Alert[] {
  const r = w(x, ['alerts', ...sel, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as { alerts?: Alert[] } | Alert[];
  return Array.isArray(doc) ? doc : doc.alerts ?? [];
}

function daemonPid(x: World, sel: string[]): number | null {
  const r = w(x, ['status', ...sel, '--json']);
  const doc = JSON.parse(r.stdout) as { daemon?: { running?: boolean; pid?: number } };
  return doc.daemon?.running ? doc.daemon.pid ?? -1 : null;
}

const alive = (pid: number): boolean => { try { process.kill(pid, 0); return true; } catch { return false; } };

/** One direct edit in each root; each is put back. Returns the edited paths. */
async function editEachAndWaitReverted(x: World): Promise<void> {
  const files = [
    { file: join(x.root, 'orgs', 'bookclub.toml'), approved: readFileSync(join(x.root, 'orgs', 'bookclub.toml'), 'utf8') },
    { file: join(x.claude, 'settings.json'), approved: SETTINGS },
    { file: join(x.codex, 'config.toml'), approved: CODEX },
  ];
  appendFileSync(files[0]!.file, '\n# the agent was here\n');
  writeFileSync(files[1]!.file, '{\n  "permissions": { "allow": ["Read", "Bash(curl:*)"] }\n}\n');
  writeFileSync(files[2]!.file, 'model = "gpt-5"\nsandbox_mode = "danger-full-access"\n');
  for (const f of files) await waitFor(() => readFileSync(f.file, 'utf8') === f.approved, 10_000, `${f.file} reverted`, 5);
}

afterEach(async () => {
  for (const r of runs.splice(0)) { if (r.proc.exitCode === null && r.proc.signalCode === null) r.proc.kill('SIGTERM'); }
  await killOwned();
});
after(() => { for (const x of worlds.splice(0)) rmSync(x.top, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }); });

describe('several roots in one guard: warden run --root DIR --profile NAME --profile NAME', () => {
  it('one process guards the example root, a claude-code root and a codex root; each direct edit is reverted and alerted in its own root\'s store only', async () => {
    const x = makeWorld();
    initAll(x);
    const run = await ready(x, ['--guard', ...x.sel]);
    // Every command finds each root's guard, and it is this one process.
    const sel = each(x);
    for (const s of Object.values(sel)) assert.equal(daemonPid(x, s), run.proc.pid, `status ${s.join(' ')} finds the guard`);

    await editEachAndWaitReverted(x);
    const a = {
      root: await waitFor(() => { const l = alertsOf(x, sel.root); return l.some((al) => al.path === 'orgs/bookclub.toml') ? l : null; }, 10_000, 'the example root\'s alert'),
      claude: await waitFor(() => { const l = alertsOf(x, sel.claude); return l.some((al) => al.path === 'settings.json') ? l : null; }, 10_000, 'the claude-code root\'s alert'),
      codex: await waitFor(() => { const l = alertsOf(x, sel.codex); return l.some((al) => al.path === 'config.toml') ? l : null; }, 10_000, 'the codex root\'s alert'),
    };
    // Each store holds its own root's alerts only.
    assert.deepEqual([...new Set(a.root.map((al) => al.path))], ['orgs/bookclub.toml'], JSON.stringify(a.root.map((al) => al.path)));
    assert.deepEqual([...new Set(a.claude.map((al) => al.path))], ['settings.json']);
    assert.deepEqual([...new Set(a.codex.map((al) => al.path))], ['config.toml']);
    const ids = [a.root, a.claude, a.codex].map((l) => new Set(l.map((al) => al.id)));
    for (const [i, s] of ids.entries()) for (const [j, t] of ids.entries()) if (i !== j) for (const id of s) assert.ok(!t.has(id), `alert ${id} appears in two roots' stores`);
    // Each alert's advice names its own root, never another's.
    const claudeAlert = a.claude.find((al) => al.path === 'settings.json')!;
    const codexAlert = a.codex.find((al) => al.path === 'config.toml')!;
    assert.ok(claudeAlert.advice.includes(`--root ${x.claude}'`) && !claudeAlert.advice.includes(x.codex), claudeAlert.advice);
    assert.ok(codexAlert.advice.includes(`--root ${x.codex}'`) && !codexAlert.advice.includes(x.claude), codexAlert.advice);
    // The journal lines say which root each alert is of.
    await waitFor(() => run.err().includes(`warden ${x.claude}: reverted settings.json`) && run.err().includes(`warden ${x.codex}: reverted config.toml`), 5000, 'journal lines naming the root');

    // SIGHUP reloads each root's approved settings.
    run.proc.kill('SIGHUP');
    await waitFor(() => [x.root, x.claude, x.codex].every((r) => run.err().includes(`warden ${r}: reloaded the approved`)), 10_000, 'each root reloaded on SIGHUP');

    // A stop (SIGTERM) stops every root and leaves no process.
    const pid = run.proc.pid!;
    run.proc.kill('SIGTERM');
    const code = await Promise.race([run.exited, new Promise<'late'>((r) => setTimeout(() => r('late'), 5000))]);
    assert.equal(code, 0, `SIGTERM stops the process within 5 s with status 0: ${run.err()}`);
    assert.ok(!alive(pid), 'no process left');
    for (const s of Object.values(sel)) assert.equal(daemonPid(x, s), null, `no guard left for ${s.join(' ')}`);
  });

  it('after a kill -9 a restart guards every root again (guard and notifier in one process)', async () => {
    const x = makeWorld();
    initAll(x);
    const first = await ready(x, x.sel);
    first.proc.kill('SIGKILL');
    await first.exited;
    const second = await ready(x, x.sel);
    for (const s of Object.values(each(x))) assert.equal(daemonPid(x, s), second.proc.pid, `status ${s.join(' ')} finds the new guard`);
    await editEachAndWaitReverted(x);
    second.proc.kill('SIGTERM');
    assert.equal(await second.exited, 0, second.err());
  });

  it('a root that is not initialised stops the start: the error names it, no root is guarded and no process is left', async () => {
    const x = makeWorld();
    initAll(x, ['codex']);
    const run = spawnRun(x, ['--guard', ...x.sel]);
    const code = await Promise.race([run.exited, new Promise<'late'>((r) => setTimeout(() => r('late'), 30_000))]);
    assert.equal(code, 78, `exit 78 (not initialised; the unit does not restart): ${run.err()}`);
    assert.ok(!run.out().includes('ready'), 'never ready');
    assert.match(run.err(), new RegExp(`root 3 of 3, ${x.codex.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, did not start, so this process guards none of the 3`));
    assert.match(run.err(), /not initialised/);
    for (const s of [each(x).root, each(x).claude]) assert.equal(daemonPid(x, s), null, `no guard left for ${s.join(' ')}`);
    // Nothing guards the others either: an edit stays.
    writeFileSync(join(x.claude, 'settings.json'), '{}\n');
    assert.equal(readFileSync(join(x.claude, 'settings.json'), 'utf8'), '{}\n');
  });

  it('the same root twice, or a --project that follows no --profile, is refused before anything starts', () => {
    const x = makeWorld();
    initAll(x);
    const twice = w(x, ['run', '--guard', '--root', x.root, '--root', join(x.root, '.')]);
    assert.equal(twice.code, 2, twice.stderr);
    assert.match(twice.stderr, /roots 1 and 2 are the same directory/);
    const stray = w(x, ['run', '--guard', '--root', x.root, '--project', x.top, '--profile', 'codex', '--home', x.home]);
    assert.equal(stray.code, 2, stray.stderr);
    assert.match(stray.stderr, /--project .* goes right after the --profile NAME/);
  });
});
