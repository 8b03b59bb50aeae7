/**
 * Each real runtime guarded as its user does it (docs/RUNTIMES.md, "The real-runtime
 * stage"): a lived-in temporary home, `warden init --profile NAME --home H`, `warden run
 * --profile NAME --home H` (the real daemon); the agent — a shell child — writes a grant
 * straight into the runtime's policy file: it is reverted within the deadline, the alert
 * names the grant, and the runtime's own check passes on what warden restored. Then a
 * sanctioned change with a grant: shown with its grant, checked by the runtime, approved on
 * a terminal, installed, and used by the runtime (it shows the new value, or where it has no
 * offline view, loads the file); a candidate the runtime refuses is refused with its words.
 * Runs under `npm run test:runtimes`; skipped with the reason elsewhere.
 */
import { after, afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CLI, waitFor } from '../helpers/root.js';
import { killOwned, own } from '../helpers/children.js';
import { ptyRun } from '../helpers/pty.js';
import { builtinFor, pickNode, probeIsolation, showVerdict, spawnBounded, validate, type ValidatorSpec } from '../../src/validators/index.js';
import { manifest, type Installed } from './cases.js';
import { GUARD_CASES, type GuardCase, type Sees } from './guard-cases.js';

/** The revert deadline: the guard's own is milliseconds; a loaded two-core machine gets slack. */
const DEADLINE_MS = 1000;
const m = manifest();
const iso = probeIsolation();
const tops: string[] = [];
const guards: { stop(): Promise<void> }[] = [];

afterEach(async () => {
  for (const g of guards.splice(0)) await g.stop();
  await killOwned();
});
after(() => { for (const t of tops.splice(0)) rmSync(t, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }); });

function why(runtime: string): string | false {
  if (!m) return 'run through npm run test:runtimes (it installs the pinned runtimes)';
  const e = m[runtime];
  if (!e) return `${runtime} is not in test/runtimes/pins.json`;
  if ('skip' in e) return e.skip;
  if (iso.isolation === 'none') return iso.reason;
  return false;
}

const ms = (t0: number): number => Math.round(performance.now() - t0);

function cli(env: NodeJS.ProcessEnv, args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { env, cwd: '/', encoding: 'utf8', timeout: 120_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

async function daemon(env: NodeJS.ProcessEnv, sel: string[]): Promise<void> {
  const proc = own(spawn(process.execPath, [CLI, 'run', ...sel], { env, cwd: '/', stdio: ['ignore', 'pipe', 'pipe'] }), `warden run ${sel.join(' ')}`);
  let out = '';
  let err = '';
  proc.stdout!.on('data', (d) => { out += String(d); });
  proc.stderr!.on('data', (d) => { err += String(d); });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  await waitFor(() => out.includes('ready\n') || proc.exitCode !== null, 30_000, 'warden run ready');
  assert.ok(out.includes('ready\n'), `warden run did not start: ${err}`);
  guards.push({ async stop() { if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM'); await exited; } });
}

interface AlertDoc { path: string; action: string; reason: string; grants?: { key: string; change: string; new?: unknown; words: string }[] }

function alerts(env: NodeJS.ProcessEnv, sel: string[]): AlertDoc[] {
  const r = cli(env, ['alerts', ...sel, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as { alerts?: AlertDoc[] } | AlertDoc[];
  return Array.isArray(doc) ? doc : doc.alerts ?? [];
}

/** The runtime's own command on a copy of the installed file, in a scratch home, without network. */
async function runtimeShows(c: GuardCase, s: Sees, spec: ValidatorSpec, installed: Installed, file: string): Promise<{ code: number | null; out: string }> {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'warden-rt-sees-')));
  tops.push(home);
  const copy = join(home, c.dir, c.file);
  mkdirSync(dirname(copy), { recursive: true });
  writeFileSync(copy, readFileSync(file), { mode: 0o600 });
  mkdirSync(join(home, 'work'));
  const program = join(installed.dir, s.bin.replaceAll('{arch}', process.arch));
  const node = pickNode(spec, installed.nodes);
  assert.equal(typeof node, 'string', `no Node for ${c.runtime}: ${JSON.stringify(node)}`);
  const script = /\.m?js$/.test(program);
  const env: Record<string, string> = {
    PATH: `${dirname(node as string)}:/usr/local/bin:/usr/bin:/bin`, HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'), XDG_CACHE_HOME: join(home, '.cache'), LANG: 'C.UTF-8', NO_COLOR: '1', TERM: 'dumb',
    ...Object.fromEntries(Object.entries(s.env).map(([k, v]) => [k, v.replaceAll('{home}', home)])),
  };
  const argv = [...(process.getuid?.() === 0 ? [] : ['-r']), '-n', '--', ...(script ? [node as string, program] : [program]), ...s.args];
  const o = await spawnBounded('unshare', argv, { cwd: join(home, 'work'), env, timeoutMs: 90_000 });
  return { code: o.exitCode, out: `${o.stdout}\n${o.stderr}` };
}

for (const c of GUARD_CASES) {
  test(`${c.runtime}: guarded with the two commands, the agent's direct grant is reverted and named, the runtime loads what warden restored, and a sanctioned change is checked, shown, approved and used`, { skip: why(c.runtime), timeout: 300_000 }, async (t) => {
    const installed = m![c.runtime] as Installed;
    const spec = builtinFor(c.runtime).find((s) => s.name === c.check) as ValidatorSpec;
    const top = realpathSync(mkdtempSync(join(tmpdir(), 'warden-rt-guard-')));
    tops.push(top);
    const home = join(top, 'home');
    const root = join(home, c.dir);
    const file = join(root, c.file);
    mkdirSync(root, { recursive: true });
    for (const [rel, text] of Object.entries(c.lived)) { mkdirSync(dirname(join(home, rel)), { recursive: true }); writeFileSync(join(home, rel), text); }
    writeFileSync(file, c.approved);
    // The runtimes cache the stage filled: warden's daemon finds each runtime's check there.
    const cache = dirname(dirname(installed.dir));
    const env: NodeJS.ProcessEnv = {
      ...process.env, HOME: home, XDG_STATE_HOME: join(top, 'state'), WARDEN_GUARD_STATE_DIR: join(top, 'no-guard-state'), WARDEN_GUARD_RUNTIME_DIR: join(top, 'no-guard-run'),
      NO_COLOR: '1', WARDEN_RUNTIMES_CACHE: cache,
    };
    for (const k of ['STATE_DIRECTORY', 'NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WARDEN_ROOT', 'XDG_CONFIG_HOME', 'WARDEN_RUNTIMES']) delete env[k];
    const sel = ['--profile', c.runtime, '--home', home];
    const times: string[] = [];

    // The two commands.
    let t0 = performance.now();
    const init = cli(env, ['init', ...sel, '--json']);
    assert.equal(init.code, 0, init.stdout + init.stderr);
    assert.equal((JSON.parse(init.stdout) as { root: string }).root, root);
    times.push(`init ${ms(t0)} ms`);
    t0 = performance.now();
    await daemon(env, sel);
    times.push(`run ready ${ms(t0)} ms`);

    // The agent: a shell child writes the grant straight into the file.
    const wrote = Date.now();
    const sh = spawnSync('sh', ['-c', 'printf "%s" "$1" > "$2"', 'sh', c.agent, file]);
    assert.equal(sh.status, 0, String(sh.stderr));
    await waitFor(() => readFileSync(file, 'utf8') === c.approved, 10_000, `${c.file} reverted`, 5);
    const took = Date.now() - wrote;
    times.push(`reverted ${took} ms`);
    assert.ok(took <= DEADLINE_MS, `reverted ${took} ms after the write, over the deadline of ${DEADLINE_MS} ms`);
    const alert = await waitFor(() => alerts(env, sel).find((a) => a.path === c.file && a.action === 'reverted'), 10_000, 'the alert');
    const named = (alert.grants ?? []).find((g) => g.key === c.grant.key && JSON.stringify(g.new ?? g.words).includes(c.grant.value));
    assert.ok(named, `the alert names ${c.grant.key} → ${c.grant.value}: ${JSON.stringify(alert.grants)}`);

    // The runtime's own check on what warden restored.
    const restored = await validate(spec, readFileSync(file), file, { packageDir: installed.dir, nodes: installed.nodes });
    assert.equal(restored.status, 'valid', showVerdict(restored, file));
    times.push(`${c.check} on the restored file ${restored.durationMs} ms`);

    // A sanctioned change with a grant: the daemon runs the runtime's check, shows the grant, the owner says yes on a terminal.
    const cand = join(top, `candidate-${c.file}`);
    writeFileSync(cand, c.sanctioned);
    t0 = performance.now();
    const ap = ptyRun([['\\[y/N\\]', 'y\r']], [process.execPath, CLI, 'apply', ...sel, file, '--from', cand], { env, cwd: '/', deadlineS: 150 });
    times.push(`apply (the runtime's check, then yes) ${ms(t0)} ms`);
    assert.equal(ap.code, 0, ap.out);
    assert.match(ap.out, new RegExp(`grant ${c.sanctionedWords.source}`), 'the prompt shows the grant');
    assert.match(ap.out, new RegExp(`accepted by ${c.runtime} ${c.check}`));
    assert.equal(readFileSync(file, 'utf8'), c.sanctioned, 'installed');

    // Used by the runtime.
    if (c.sees) {
      const seen = await runtimeShows(c, c.sees, spec, installed, file);
      assert.equal(seen.code, 0, seen.out.slice(0, 2000));
      assert.match(seen.out, c.sees.shows, seen.out.slice(0, 4000));
    } else {
      t.diagnostic(c.used ?? '');
      const v = await validate(spec, readFileSync(file), file, { packageDir: installed.dir, nodes: installed.nodes });
      assert.equal(v.status, 'valid', showVerdict(v, file));
    }

    // A candidate the runtime refuses: its words, nothing written, nothing left to approve.
    const bad = join(top, `invalid-${c.file}`);
    writeFileSync(bad, c.invalid.text);
    t0 = performance.now();
    const no = cli(env, ['apply', ...sel, file, '--from', bad]);
    times.push(`refusal ${ms(t0)} ms`);
    assert.equal(no.code, 1, no.stdout + no.stderr);
    assert.match(no.stderr, new RegExp(`${c.file.replace('.', '\\.')}: rejected by ${c.runtime} ${c.check} \\(exit \\d+, \\d+ ms\\)`), no.stderr);
    assert.match(no.stderr, c.invalid.says, no.stderr);
    assert.equal(readFileSync(file, 'utf8'), c.sanctioned, 'nothing written');
    const pending = cli(env, ['approve', ...sel, '--json']);
    assert.deepEqual(JSON.parse(pending.stdout), [], 'nothing left to approve');

    // Nothing else of the home was touched; the approved state holds.
    for (const [rel, text] of Object.entries(c.lived)) assert.equal(readFileSync(join(home, rel), 'utf8'), text, rel);
    const v = cli(env, ['verify', ...sel]);
    assert.equal(v.code, 0, v.stdout + v.stderr);
    console.log(`# ${c.runtime}: ${times.join(', ')}`);
  });
}
