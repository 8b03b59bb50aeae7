/**
 * docs/CONTRACT.md §Threat model ("swapping a parent directory for a symlink") and §Detection ("the promise is about
 * paths"), below a recursive glob: the approved deep/a/one.txt is reached through deep/a,
 * which no setting names. The agent (another user owning the root) moves the glob's base
 * away, swaps deep/a for a link, and the real daemon puts the approved tree back at the
 * path; a sanctioned change records a new directory on the way and drops one that leads to
 * no approved file any more (src/guard/dirs-on-the-way.ts).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_WARDEN_TOML, cli, readAlertsOf, testWorld, waitFor, type Daemon, type TestRoot } from '../helpers/root.js';
import { cleanupAll, killOwned } from '../helpers/children.js';

/** renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE), as a shell command taking a and b. */
const EXCHANGE = `python3 -c 'import ctypes,os,sys; l=ctypes.CDLL(None,use_errno=True); r=l.renameat2(-100,sys.argv[1].encode(),-100,sys.argv[2].encode(),2); sys.exit(0 if r==0 else os.strerror(ctypes.get_errno()))'`;

const world = testWorld();
const users: string[] = [];
after(() => cleanupAll([() => killOwned(), () => world.cleanup(), ...users.map((u) => () => { const r = spawnSync('userdel', [u], { encoding: 'utf8' }); if (r.status !== 0) throw new Error(`userdel ${u}: ${r.stderr}`); })]));

describe('the directories on the way to a file below a recursive glob, under the real daemon', () => {
  let t: TestRoot;
  let d: Daemon;
  let uid = 0;
  let gid = 0;
  /** The agent's shell: a command run as the agent's user. */
  const agent = (script: string) => {
    const r = spawnSync('sh', ['-c', script], { uid, gid, encoding: 'utf8', cwd: t.base });
    assert.equal(r.status, 0, `the agent's ${script}: ${r.stderr}`);
  };
  const alertsFor = (path: string) => readAlertsOf(t).filter((a) => a.path === path);

  before(async () => {
    t = world.root({ wardenToml: `${TEST_WARDEN_TOML}\n[[protect]]\npath = "deep/**/*.txt"\nkind = "text"\n`, init: false });
    mkdirSync(t.p('deep/a/b'), { recursive: true });
    writeFileSync(t.p('deep/a/one.txt'), 'one\n');
    writeFileSync(t.p('deep/a/b/two.txt'), 'two\n');
    const name = `wtgd${Math.random().toString(36).slice(2, 8)}`;
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
    users.push(name);
    uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
    gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
    // The agent owns the root, the directory above it and deep/ (in deployment A the root sits in its home).
    chmodSync(t.base, 0o755);
    execFileSync('chown', [`${uid}:${gid}`, t.base, t.root]);
    execFileSync('chown', ['-R', `${uid}:${gid}`, t.p('deep')]);
    chmodSync(t.p('deep/a'), 0o750);
    const init = cli(t, ['init']);
    assert.equal(init.code, 0, init.stderr);
    d = await world.daemon(t);
  });

  it('the glob\'s base moved out of the root: the approved files below it are back at their paths, each alerted', async () => {
    agent('mv root/deep deep-away');
    await waitFor(() => existsSync(t.p('deep/a/b/two.txt')) && existsSync(t.p('deep/a/one.txt')) && alertsFor('deep/a/one.txt').length > 0 && alertsFor('deep/a/b/two.txt').length > 0, 15_000, 'both files put back and alerted');
    assert.equal(readFileSync(t.p('deep/a/one.txt'), 'utf8'), 'one\n');
    assert.equal(readFileSync(t.p('deep/a/b/two.txt'), 'utf8'), 'two\n');
    const st = statSync(t.p('deep/a'));
    assert.deepEqual([st.mode & 0o7777, st.uid, st.gid], [0o750, uid, gid], 'deep/a with its approved mode and owner');
    assert.ok(alertsFor('deep/a').length > 0, 'deep/a alerted as a directory put back');
    // A directory's advice offers no file command for it.
    assert.doesNotMatch(alertsFor('deep/a')[0]!.advice ?? '', /warden (edit|apply) deep\/a/);
    const v = cli(t, ['verify']);
    assert.equal(v.code, 0, v.stdout + v.stderr);
  });

  it('a directory on the way swapped for a link to the agent\'s own: nothing written there, the approved tree back', async () => {
    const before = alertsFor('deep/a/one.txt').length;
    // One atomic exchange (renameat2 RENAME_EXCHANGE): no moment with nothing at deep/a.
    agent(`mkdir -p mine && echo "the agent's" > mine/one.txt && ln -s "$PWD/mine" link && ${EXCHANGE} link root/deep/a`);
    await waitFor(() => lstatSync(t.p('deep/a')).isDirectory() && existsSync(t.p('deep/a/one.txt')) && alertsFor('deep/a/one.txt').length > before, 15_000, 'deep/a a directory again with its file');
    assert.equal(readFileSync(t.p('deep/a/one.txt'), 'utf8'), 'one\n');
    assert.equal(readFileSync(join(t.base, 'mine/one.txt'), 'utf8'), 'the agent\'s\n', 'nothing written through the link');
    assert.ok(alertsFor('deep/a').some((a) => a.reason === 'symlink'), JSON.stringify(alertsFor('deep/a')));
  });

  it('a sanctioned file in a new directory records it; removing the last file there drops it', async () => {
    const a = cli(t, ['apply', 'deep/c/three.txt', '--from', '-'], { input: 'three\n' });
    assert.equal(a.code, 0, a.stderr);
    assert.equal(readFileSync(t.p('deep/c/three.txt'), 'utf8'), 'three\n');
    agent('mv root/deep/c root/deep/c-away');
    await waitFor(() => existsSync(t.p('deep/c/three.txt')), 15_000, 'deep/c and its file put back');
    assert.equal(readFileSync(t.p('deep/c/three.txt'), 'utf8'), 'three\n');
    const r = cli(t, ['rm', 'deep/c/three.txt']);
    assert.equal(r.code, 0, r.stderr);
    // No approved file below deep/c any more: the agent may remove it, nothing puts it back.
    const alertsBefore = alertsFor('deep/c').length;
    agent('rmdir root/deep/c');
    const v = cli(t, ['verify']);
    assert.equal(v.code, 0, v.stdout + v.stderr);
    assert.equal(existsSync(t.p('deep/c')), false);
    assert.equal(alertsFor('deep/c').length, alertsBefore);
    assert.equal(d.proc.exitCode, null, 'the guard runs on');
  });
});
