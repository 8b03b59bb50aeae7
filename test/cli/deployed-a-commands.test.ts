/**
 * The owner's commands against a root that a deployed guard holds in deployment A (the
 * agent's user owns the protected files; the guard keeps CAP_CHOWN, CAP_FOWNER and
 * CAP_DAC_OVERRIDE, which `sudo -u warden` does not give): docs/DEPLOY.md, "Who runs which
 * command". Each caller is told the truth and a command that works. The deployment's
 * directories are stood in for by $WARDEN_GUARD_STATE_DIR / $WARDEN_GUARD_RUNTIME_DIR, owned
 * by a system uid playing the `warden` account (as test/cli/deployed-root.test.ts does).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURE, TEST_WARDEN_TOML, CLI } from '../helpers/root.js';
import { readableRepo } from '../helpers/readable-copy.js';

const WARDEN_UID = 900 + ((process.pid + 7) % 90); // a system uid (below UID_MIN)
const AGENT_UID = 56_000 + (process.pid % 1000);
const isRoot = process.geteuid?.() === 0;
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0;

const base = mkdtempSync(join(tmpdir(), 'warden-deployed-a-'));
after(() => rmSync(base, { recursive: true, force: true }));
const root = join(base, 'root');
const state = join(base, 'var-lib-warden-guard');
const runtime = join(base, 'run-warden-guard');
const env = { PATH: process.env.PATH, HOME: base, NO_COLOR: '1', WARDEN_GUARD_STATE_DIR: state, WARDEN_GUARD_RUNTIME_DIR: runtime };
/** The capabilities the deploy block's `warden init` runs with (README, Deploy). */
const GUARD_CAPS = '+chown,+fowner,+dac_override';

function chownR(p: string, uid: number): void {
  chownSync(p, uid, uid);
  for (const e of readdirSync(p, { withFileTypes: true })) {
    const q = join(p, e.name);
    if (e.isDirectory()) chownR(q, uid); else { chownSync(q, uid, uid); chmodSync(q, 0o644); }
  }
}

/** Run the CLI as root (null) or as uid `as`, with the guard's capabilities when `caps`. */
function warden(args: string[], as: number | null, cwd = base, caps = false): { code: number; out: string } {
  const who = ['setpriv', `--reuid=${as}`, `--regid=${as}`, '--clear-groups', ...(caps ? [`--inh-caps=${GUARD_CAPS}`, `--ambient-caps=${GUARD_CAPS}`] : [])];
  const cmd = as === null ? [process.execPath, CLI, ...args] : [...who, process.execPath, join(readableRepo(), 'dist', 'src', 'cli', 'main.js'), ...args];
  const r = spawnSync(cmd[0]!, cmd.slice(1), { env, cwd, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, out: r.stdout + r.stderr };
}

describe('deployment A: the owner\'s commands', { skip: !isRoot ? 'needs root to play three accounts' : !hasSetpriv ? 'needs setpriv' : false }, () => {
  it('init with the guard\'s capabilities, as the deploy block runs it', () => {
    // The agent owns the root and its files; credentials.toml is 0600, readable by the agent alone.
    chmodSync(base, 0o755);
    mkdirSync(root);
    for (const d of ['config', 'orgs', 'blocks']) cpSync(join(FIXTURE, d), join(root, d), { recursive: true });
    writeFileSync(join(root, 'config', 'warden.toml'), TEST_WARDEN_TOML);
    chownR(root, AGENT_UID);
    chmodSync(join(root, 'config', 'credentials.toml'), 0o600);
    for (const d of [state, runtime]) { mkdirSync(d, { mode: 0o700 }); chownSync(d, WARDEN_UID, WARDEN_UID); }
    chmodSync(runtime, 0o755);
    const init = warden(['init', '--root', root], WARDEN_UID, base, true);
    assert.equal(init.code, 0, init.out);
  });

  it('verify as the guard\'s account: a file only the agent may read, its mode and owner as approved, is not drift; it says so and how to check it', () => {
    const v = warden(['verify', '--root', root], WARDEN_UID);
    assert.doesNotMatch(v.out, /DRIFT/, v.out);
    assert.equal(v.code, 0, v.out);
    assert.match(v.out, /config\/credentials\.toml: this account may not read it; its mode 0600 and owner \d+:\d+ are as approved, its content was not checked/, v.out);
    assert.match(v.out, new RegExp(`sudo systemd-run --wait --pipe --collect --quiet -p User=${WARDEN_UID} -p AmbientCapabilities=CAP_DAC_READ_SEARCH warden verify --root ${root}`), v.out);
    const j = JSON.parse(warden(['verify', '--json', '--root', root], WARDEN_UID).out) as { clean: boolean; drift: unknown[]; unchecked: { path: string }[] };
    assert.deepEqual([j.clean, j.drift.length, j.unchecked.map((u) => u.path)], [true, 0, ['config/credentials.toml']]);
    // With the capability the advice names, its content is checked too: clean, nothing unchecked.
    const full = warden(['verify', '--root', root], WARDEN_UID, base, true);
    assert.equal(full.code, 0, full.out);
    assert.match(full.out, /^clean: 6 file\(s\) match the baseline$/m, full.out);
  });

  it('verify still reports a real change of that file\'s mode as drift', () => {
    chmodSync(join(root, 'config', 'credentials.toml'), 0o400);
    try {
      const v = warden(['verify', '--root', root], WARDEN_UID);
      assert.equal(v.code, 1, v.out);
      assert.match(v.out, /DRIFT config\/credentials\.toml: mode/, v.out);
    } finally { chmodSync(join(root, 'config', 'credentials.toml'), 0o600); }
  });

  it('status as the guard\'s account: that file is not drift either', () => {
    const s = warden(['status', '--root', root], WARDEN_UID);
    assert.doesNotMatch(s.out, /DRIFT/, s.out);
    assert.match(s.out, /files: 6 protected, 6 ok/, s.out);
    assert.match(s.out, /config\/credentials\.toml \(content not checked: this account may not read it; mode and owner as approved\)/, s.out);
    assert.notEqual(s.code, 1, s.out); // 3: no daemon runs here
  });

  it('status and why as the guard\'s account: the commands they point to name the account and the root', () => {
    // One alert with kept content, as the guard writes it (its store's alerts.jsonl is plain JSON lines).
    const id = 'mxtest0001-abcd';
    const alert = { id, time: new Date().toISOString(), path: 'orgs/bookclub.toml', action: 'reverted', reason: 'content', before: null, after: null, quarantine: `${state}/stores/x/quarantine/${id}`, by: { unknown: 'no witness running' }, advice: 'x' };
    const store = join(state, 'stores', readdirSync(join(state, 'stores'))[0]!);
    const line = JSON.stringify(alert) + '\n';
    const add = spawnSync('setpriv', [`--reuid=${WARDEN_UID}`, `--regid=${WARDEN_UID}`, '--clear-groups', 'sh', '-c', `printf '%s' "$1" >> "$2"`, 'sh', line, join(store, 'alerts.jsonl')], { encoding: 'utf8' });
    assert.equal(add.status, 0, add.stderr);
    const how = `sudo -u "#${WARDEN_UID}" warden`;
    const s = warden(['status', '--root', root], WARDEN_UID);
    assert.match(s.out, new RegExp(`see '${how} why orgs/bookclub\\.toml --root ${root}'`), s.out);
    const w = warden(['why', 'orgs/bookclub.toml', '--root', root], WARDEN_UID);
    assert.match(w.out, new RegExp(`what was rejected: '${how} diff ${id} --root ${root}'`), w.out);
  });

  it('notify test as root and as the agent: told who holds the root and what to run, never "not initialised"', () => {
    for (const [who, cwd, args] of [[null, base, ['notify', 'test', '--root', root]], [AGENT_UID, root, ['notify', 'test']]] as const) {
      const r = warden([...args], who, cwd);
      assert.equal(r.code, 2, r.out);
      assert.doesNotMatch(r.out, /not initialised/, r.out);
      assert.match(r.out, new RegExp(`Run it as the guard's account: sudo -u '#${WARDEN_UID}' warden notify test --root ${root}`), r.out);
    }
    assert.ok(!existsSync(join(root, 'snapshots')), 'no second store inside the root');
  });

  it('edit as root or the agent: the advised command keeps the caller\'s editor through sudo (which drops $EDITOR)', () => {
    for (const [who, cwd, args] of [[null, base, ['edit', 'orgs/bookclub.toml', '--root', root]], [AGENT_UID, root, ['edit', 'orgs/bookclub.toml']]] as const) {
      const r = warden([...args], who, cwd);
      assert.equal(r.code, 2, r.out);
      assert.match(r.out, new RegExp(`Run it as the guard's account: sudo -u '#${WARDEN_UID}' --preserve-env=EDITOR,VISUAL warden edit orgs/bookclub\\.toml --root ${root} `), r.out);
    }
  });
});
