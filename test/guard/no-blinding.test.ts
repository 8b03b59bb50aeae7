/**
 * The guard runs as the root's owner, not as root, and cannot be blinded: a root or protected
 * directory chmodded unreadable is put back and edits made meanwhile reverted; verify and
 * status report an unreadable root instead of crashing. Needs root to make the user.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { makeRoot, readAlertsOf, startDaemon, waitFor, TEST_WARDEN_TOML, type Daemon, type TestRoot } from '../helpers/root.js';
import { cleanups, daemons, roots } from '../helpers/fresh-guard.js';
import { readableCli } from '../helpers/readable-copy.js';

const ORG = 'orgs/bookclub.toml';

/** A throwaway user who owns the root and runs warden: root bypasses every permission, the owner does not. */
function asUser(t: TestRoot): { uid: number; gid: number; cli(args: string[]): { code: number; stdout: string; stderr: string }; daemon(): Promise<Daemon> } {
  const name = `wt12${Math.random().toString(36).slice(2, 8)}`;
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
  cleanups.push(() => { spawnSync('userdel', [name]); });
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
  execFileSync('chown', ['-R', `${uid}:${gid}`, t.base]);
  const env = { ...t.env, HOME: t.base };
  return {
    uid, gid,
    cli(args) {
      const r = spawnSync(process.execPath, [readableCli(), ...args, '--root', t.root], { env, uid, gid, encoding: 'utf8', timeout: 60_000 });
      return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
    },
    async daemon() {
      const d = await startDaemon(t, ['--guard'], { HOME: t.base }, 20_000, { uid, gid });
      daemons.push(d);
      return d;
    },
  };
}

function freshAsUser(rescanSeconds = 5): { t: TestRoot; u: ReturnType<typeof asUser> } {
  const t = makeRoot({ wardenToml: TEST_WARDEN_TOML.replace('rescan_seconds = 30', `rescan_seconds = ${rescanSeconds}`) });
  roots.push(t);
  const u = asUser(t);
  const init = u.cli(['init']);
  assert.equal(init.code, 0, init.stderr);
  return { t, u };
}

describe('no blinding (the guard runs as the root\'s owner, not as root)', () => {
  it('chmod 0300 ROOT is put back, and an edit made meanwhile is reverted', async () => {
    const { t, u } = freshAsUser();
    const rootMode = statSync(t.root).mode & 0o7777;
    const org = readFileSync(t.p(ORG), 'utf8');
    await u.daemon();
    chmodSync(t.root, 0o300);
    writeFileSync(t.p(ORG), 'members = ["blinded"]\n');
    await waitFor(() => (statSync(t.root).mode & 0o7777) === rootMode && readFileSync(t.p(ORG), 'utf8') === org, 10_000, 'root mode and the file back');
    await waitFor(() => readAlertsOf(t).some((a) => a.path === '.' && a.reason === 'mode'), 5_000, 'an alert for the root');
  });

  it('chmod 0100 config is put back, and edits below it are reverted', async () => {
    const { t, u } = freshAsUser();
    const mode = statSync(t.p('config')).mode & 0o7777;
    const cond = readFileSync(t.p('config/conditions.toml'), 'utf8');
    await u.daemon();
    writeFileSync(t.p('config/conditions.toml'), '# blinded\n');
    chmodSync(t.p('config'), 0o100);
    await waitFor(() => (statSync(t.p('config')).mode & 0o7777) === mode && readFileSync(t.p('config/conditions.toml'), 'utf8') === cond, 10_000, 'config mode and the file back');
    assert.ok(readAlertsOf(t).some((a) => a.path === 'config' && a.reason === 'mode'));
  });

  it('verify and status report an unreadable root instead of crashing', () => {
    const { t, u } = freshAsUser();
    chmodSync(t.root, 0o300);
    try {
      for (const cmd of ['verify', 'status']) {
        const r = u.cli([cmd]);
        assert.ok(!/internal error|EACCES|at .*\.js:\d+/.test(r.stderr), `${cmd} does not crash: ${r.stderr}`);
        assert.equal(r.code, cmd === 'verify' ? 1 : r.code);
        assert.match(r.stdout, /DRIFT \.:? \(?mode/, `${cmd} names the root's mode`);
      }
    } finally { chmodSync(t.root, 0o755); }
  });
});
