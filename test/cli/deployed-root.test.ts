/**
 * A root held by a deployed guard, asked by another account (docs/DEPLOY.md, "Who runs
 * which command"): root and the agent are told the truth and the command that works,
 * never "not initialised", and `init` never makes a second store. The deployment's
 * directories are stood in for by $WARDEN_GUARD_STATE_DIR / $WARDEN_GUARD_RUNTIME_DIR
 * (the packaging override), owned by a system uid playing the `warden` account.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURE, TEST_WARDEN_TOML, CLI } from '../helpers/root.js';
import { readableRepo } from '../helpers/readable-copy.js';

const WARDEN_UID = 900 + (process.pid % 90); // a system uid (below UID_MIN)
const AGENT_UID = 55_000 + (process.pid % 1000);
const isRoot = process.geteuid?.() === 0;
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0;

const base = mkdtempSync(join(tmpdir(), 'warden-deployed-'));
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

describe('a root held by a deployed guard', { skip: !isRoot ? 'needs root to play three accounts' : !hasSetpriv ? 'needs setpriv' : false }, () => {
  it('root and the agent are told who holds it and what to run; init makes no second store', () => {
    chmodSync(base, 0o755);
    mkdirSync(root);
    for (const d of ['config', 'orgs', 'blocks']) cpSync(join(FIXTURE, d), join(root, d), { recursive: true });
    writeFileSync(join(root, 'config', 'warden.toml'), TEST_WARDEN_TOML.replace('approval = "none"', 'approval = "tty"'));
    chownR(root, WARDEN_UID);
    chmodSync(root, 0o1777); // the agent may add files (and could make snapshots/)
    for (const d of [state, runtime]) { mkdirSync(d, { mode: 0o700 }); chownSync(d, WARDEN_UID, WARDEN_UID); }
    chmodSync(runtime, 0o755);
    const init = warden(['init', '--root', root], WARDEN_UID);
    assert.equal(init.code, 0, init.out);
    const own = warden(['status', '--root', root], WARDEN_UID);
    assert.match(own.out, /files: 6 protected, 6 ok/, `the guard's own account sees its store: ${own.out}`);

    // As the guard's account, what a message advises is the command that works there.
    const next = join(base, 'next.toml');
    writeFileSync(next, readFileSync(join(root, 'orgs/bookclub.toml'), 'utf8').replace(/hourly_cap = \d+/, 'hourly_cap = 21'));
    chmodSync(next, 0o644);
    const ap = warden(['apply', 'orgs/bookclub.toml', '--from', next, '--root', root], WARDEN_UID);
    assert.equal(ap.code, 0, ap.out);
    assert.match(ap.out, new RegExp(`'sudo -u "#${WARDEN_UID}" warden approve [a-z0-9]+ --root ${root}'`), ap.out);

    const asRoot = warden(['status', '--root', root], null);
    assert.equal(asRoot.code, 2, asRoot.out);
    assert.doesNotMatch(asRoot.out, /not initialised/);
    assert.match(asRoot.out, new RegExp(`guarded by the deployed warden guard \\(account #${WARDEN_UID}\\)`));
    assert.match(asRoot.out, new RegExp(`Run it as the guard's account: sudo -u '#${WARDEN_UID}' warden status --root ${root}`));

    const asAgent = warden(['status'], AGENT_UID, root);
    assert.equal(asAgent.code, 2, asAgent.out);
    assert.doesNotMatch(asAgent.out, /not initialised/);
    assert.match(asAgent.out, /you \(uid \d+\) cannot read/);
    assert.match(asAgent.out, /sudo -u '#\d+' warden status --root /);

    const edit = warden(['edit', 'orgs/bookclub.toml'], AGENT_UID, root);
    assert.match(edit.out, /sudo -u '#\d+' --preserve-env=EDITOR,VISUAL warden edit orgs\/bookclub\.toml --root /);

    for (const who of [AGENT_UID, null]) {
      const i = warden(['init', '--root', root], who);
      assert.equal(i.code, 2, i.out);
      assert.match(i.out, /already guarded by the deployed warden guard.*makes none/s);
      assert.ok(!existsSync(join(root, 'snapshots')), 'no second store inside the root');
    }
    assert.ok(!existsSync(join(base, '.local', 'state', 'warden')), 'no second store in the caller\'s state directory');
  });
});

describe('advice in alerts from a deployed guard', () => {
  it('names the command that works there: as the guard\'s account, with the root', async () => {
    const { deployedAdvice } = await import('../../src/guard/classify.js');
    const plain = "Change it with 'warden edit orgs/bookclub.toml' (or 'warden apply orgs/bookclub.toml --from FILE').";
    assert.equal(deployedAdvice(plain, null), plain);
    assert.equal(deployedAdvice(plain, { account: 'warden', root: '/home/agent/agent root' }),
      "Change it with 'sudo -u warden --preserve-env=EDITOR,VISUAL warden edit orgs/bookclub.toml --root \"/home/agent/agent root\"' (or 'sudo -u warden warden apply orgs/bookclub.toml --from FILE --root \"/home/agent/agent root\"').");
  });
});

describe('the guard unit names the root it holds', () => {
  it('ExecStart=… run --guard --root ROOT, as install-units renders it', async () => {
    const { unitRoot } = await import('../../src/store/deployed.js');
    assert.equal(unitRoot('[Service]\nExecStart=/usr/bin/node /usr/local/lib/node_modules/warden/dist/src/cli/main.js run --guard --root /home/agent/agent-root\n'), '/home/agent/agent-root');
    assert.equal(unitRoot('ExecStart=/usr/bin/node main.js run --notifier --root /x\n'), null);
    assert.equal(unitRoot('# ExecStart=node main.js run --guard --root /x\n'), null);
  });
});

describe('a root named only by the guard unit (after a reboot, before the guard started)', { skip: !isRoot ? 'needs root to own the state directory as another uid' : false }, () => {
  it('still counts as held', async () => {
    const { deployedGuardFor } = await import('../../src/store/deployed.js');
    const other = join(base, 'other-root');
    const st2 = join(base, 'state-2');
    mkdirSync(other, { recursive: true });
    mkdirSync(st2, { recursive: true, mode: 0o700 });
    chownSync(st2, WARDEN_UID, WARDEN_UID);
    const e = { WARDEN_GUARD_STATE_DIR: st2, WARDEN_GUARD_RUNTIME_DIR: join(base, 'run-2') };
    const unit = join(base, 'warden-guard.service');
    writeFileSync(unit, `[Service]\nExecStart=/usr/bin/node /opt/warden/main.js run --guard --root ${join(base, 'elsewhere')}\n`);
    assert.equal(deployedGuardFor(other, e, unit), null, 'a unit for another root');
    writeFileSync(unit, `[Service]\nExecStart=/usr/bin/node /opt/warden/main.js run --guard --root ${other}\n`);
    assert.equal(deployedGuardFor(other, e, unit)?.seen, 'unit');
  });
});
