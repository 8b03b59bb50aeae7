/**
 * The owner's day on a root a deployed guard holds, as root, the agent and the guard's
 * account run it (docs/DEPLOY.md, "Who runs which command"). `warden notify test` needs no
 * store and runs for anyone: it must never say "not initialised: run 'warden init'" (the
 * root is initialised, in the guard's store) nor make a store. The fix a credentials-mode
 * warning names is the command that works there: a chmod is a direct edit the guard
 * reverts, and a plain 'warden apply' finds no store. The deployment's directories are
 * stood in for by $WARDEN_GUARD_STATE_DIR / $WARDEN_GUARD_RUNTIME_DIR, owned by a system
 * uid playing the `warden` account.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURE, TEST_WARDEN_TOML, CLI } from '../helpers/root.js';
import { readableRepo } from '../helpers/readable-copy.js';

const WARDEN_UID = 900 + ((process.pid + 7) % 90); // a system uid (below UID_MIN)
const AGENT_UID = 56_000 + (process.pid % 1000);
const isRoot = process.geteuid?.() === 0;
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0;

const base = mkdtempSync(join(tmpdir(), 'warden-deployed-walk-'));
after(() => rmSync(base, { recursive: true, force: true }));
const root = join(base, 'root');
const state = join(base, 'var-lib-warden-guard');
const runtime = join(base, 'run-warden-guard');
const env = { PATH: process.env.PATH, HOME: base, NO_COLOR: '1', WARDEN_GUARD_STATE_DIR: state, WARDEN_GUARD_RUNTIME_DIR: runtime };

function chownR(p: string, uid: number): void {
  chownSync(p, uid, uid);
  for (const e of readdirSync(p, { withFileTypes: true })) {
    const q = join(p, e.name);
    if (e.isDirectory()) chownR(q, uid); else { chownSync(q, uid, uid); chmodSync(q, 0o644); }
  }
}

function warden(args: string[], as: number | null, cwd = base): { code: number; out: string } {
  const cmd = as === null ? [process.execPath, CLI, ...args] : ['setpriv', `--reuid=${as}`, `--regid=${as}`, '--clear-groups', process.execPath, join(readableRepo(), 'dist', 'src', 'cli', 'main.js'), ...args];
  const r = spawnSync(cmd[0]!, cmd.slice(1), { env, cwd, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, out: r.stdout + r.stderr };
}

let made: { code: number; out: string } | null = null;
/** The root, the deployment's directories and the guard account's baseline (once); init's output. */
function deployed(): { code: number; out: string } {
  if (made) return made;
  chmodSync(base, 0o755);
  mkdirSync(root);
  for (const d of ['config', 'orgs', 'blocks']) cpSync(join(FIXTURE, d), join(root, d), { recursive: true });
  writeFileSync(join(root, 'config', 'warden.toml'), `${TEST_WARDEN_TOML}\n[notify.desktop]\nenabled = false\n\n[notify.journal]\nenabled = true\n`);
  chownR(root, WARDEN_UID);
  for (const d of [state, runtime]) { mkdirSync(d, { mode: 0o700 }); chownSync(d, WARDEN_UID, WARDEN_UID); }
  chmodSync(runtime, 0o755);
  made = warden(['init', '--root', root], WARDEN_UID);
  return made;
}

const skip = !isRoot ? 'needs root to play three accounts' : !hasSetpriv ? 'needs setpriv' : false;

describe('notify test on a root held by a deployed guard', { skip }, () => {
  it('root and the agent are told who holds the root and the command that tests through its notifier, never "not initialised", and no second store', () => {
    const init = deployed();
    assert.equal(init.code, 0, init.out);

    for (const [who, cwd] of [[null, base], [AGENT_UID, root]] as const) {
      const r = warden(who === null ? ['notify', 'test', '--root', root] : ['notify', 'test'], who, cwd);
      assert.doesNotMatch(r.out, /not initialised/, `${who ?? 'root'}: ${r.out}`);
      assert.equal(r.code, 2, `${who ?? 'root'}: ${r.out}`);
      // The token is the notifier's alone; the guard's account's `notify test` goes through it (cli/notify-relay.ts, its kit row).
      assert.match(r.out, new RegExp(`guarded by the deployed warden guard .*sudo -u '#${WARDEN_UID}' warden notify test --root ${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`, 's'), `${who ?? 'root'}: ${r.out}`);
    }
    assert.ok(!existsSync(join(root, 'snapshots')), 'no store inside the root');
    assert.ok(!existsSync(join(base, '.local', 'state', 'warden')), 'no store in the caller\'s state directory');
  });
});

describe('a credentials file readable by others, on a root held by a deployed guard', { skip }, () => {
  it('every account is told the sanctioned change as the guard\'s account, never a chmod the guard reverts', () => {
    const init = deployed();
    // An account with no name is "#uid", quoted for the shell ('…' or "…", both work).
    const fix = new RegExp(`fix: sudo -u (['"])#${WARDEN_UID}\\1 warden apply config/credentials\\.toml --mode 0600 --root ${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm');
    assert.match(init.out, fix, `init, as the guard's account: ${init.out}`);
    const runs: [string, string[], number | null, string][] = [
      ['check, as root', ['check', '--root', root], null, base],
      ['check, as the agent', ['check'], AGENT_UID, root],
      ['status, as the guard\'s account', ['status', '--root', root], WARDEN_UID, base],
      ['check, as the guard\'s account', ['check', '--root', root], WARDEN_UID, base],
    ];
    for (const [what, args, who, cwd] of runs) {
      const r = warden(args, who, cwd);
      assert.match(r.out, /config\/credentials\.toml holds credentials and is readable by others \(mode 0644\)/, `${what}: ${r.out}`);
      assert.match(r.out, fix, `${what}: ${r.out}`);
    }
  });
});

describe('init on a root held by a deployed guard', { skip }, () => {
  it('root and the agent are pointed at the baseline that is there, not at an init that refuses', () => {
    assert.equal(deployed().code, 0);
    for (const [who, args, cwd] of [[null, ['init', '--root', root], base], [AGENT_UID, ['init'], root]] as const) {
      const r = warden([...args], who, cwd);
      assert.equal(r.code, 2, r.out);
      assert.match(r.out, /already guarded by the deployed warden guard/, r.out);
      assert.match(r.out, new RegExp(`sudo -u '#${WARDEN_UID}' warden status --root ${root.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`), r.out);
      assert.doesNotMatch(r.out, /warden init --root/, `advised to run an init that refuses: ${r.out}`);
    }
  });
});

describe('the one-time code\'s message from a deployed guard', { skip }, () => {
  it('names the deny that works there: as the guard\'s account, with the root', () => {
    assert.equal(deployed().code, 0);
    const r2 = join(base, 'root-2');
    mkdirSync(r2);
    for (const d of ['config', 'orgs', 'blocks']) cpSync(join(FIXTURE, d), join(r2, d), { recursive: true });
    writeFileSync(join(r2, 'config', 'warden.toml'), `${TEST_WARDEN_TOML.replace('approval = "none"', 'approval = "owner-code"')}\n[notify.discord]\ntoken_file = "/nonexistent/discord-token"\n`);
    chownR(r2, WARDEN_UID);
    assert.equal(warden(['init', '--root', r2], WARDEN_UID).code, 0);
    const next = join(base, 'next-2.toml');
    writeFileSync(next, readFileSync(join(r2, 'orgs/bookclub.toml'), 'utf8').replace(/hourly_cap = \d+/, 'hourly_cap = 21'));
    chmodSync(next, 0o644);
    const ap = warden(['apply', 'orgs/bookclub.toml', '--from', next, '--root', r2, '--json'], WARDEN_UID);
    assert.equal(ap.code, 0, ap.out);
    const id = (JSON.parse(ap.out.slice(ap.out.indexOf('{'))) as { pending: { id: string } }).pending.id;
    const store = join(state, 'stores', readdirSync(join(state, 'stores')).find((d) => existsSync(join(state, 'stores', d, 'outbox', 'messages.jsonl')))!);
    const text = readFileSync(join(store, 'outbox', 'messages.jsonl'), 'utf8');
    assert.ok(text.includes(`'sudo -u \\"#${WARDEN_UID}\\" warden deny ${id} --root ${r2}'`), text);
  });
});
