/**
 * A foreign object at a protected path that cannot be moved aside (docs/ARCHITECTURE.md,
 * invariant 19): a file system mounted at the root path while the guard was stopped (as an
 * admin who moves the root to its own file system does), one bind-mounted over orgs/ while
 * it runs, a root path whose parent is read-only. A mount point cannot be renamed (EBUSY), so
 * the guard used to refuse to start and, under Restart=always, stayed down for good. Now it
 * stays up, changes nothing in the object, alerts once (what stands there, that it was not
 * touched, the command to run), keeps guarding what it can and takes the path back by
 * itself when the object goes (umount). `warden rehome --here` is the owner's way to make
 * the new file system the root.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { CLI, TEST_WARDEN_TOML, cli, readAlertsFile, sha, testWorld, waitFor, type TestRoot } from '../helpers/root.js';
import type { Alert } from '../../src/store/alert-types.js';

const ORG = 'orgs/bookclub.toml';
const world = testWorld();
const mounted: string[] = [];
const states: string[] = [];
const sh = (cmd: string[]) => spawnSync(cmd[0] as string, cmd.slice(1), { encoding: 'utf8' });
const umount = (p: string) => { const r = sh(['umount', p]); if (r.status === 0) mounted.splice(mounted.indexOf(p), 1); return r; };
afterEach(async () => {
  for (const p of mounted.splice(0).reverse()) sh(['umount', '-l', p]);
  await world.cleanup();
  for (const s of states.splice(0)) rmSync(s, { recursive: true, force: true });
});

/** Can this process mount (root, not in a container that forbids it)? */
let canMount: string | null = null;
before(() => {
  const probe = join('/tmp', `warden-mount-probe-${process.pid}`);
  mkdirSync(probe, { recursive: true });
  const r = sh(['mount', '-t', 'tmpfs', '-o', 'size=64k', 'warden-probe', probe]);
  if (r.status === 0) sh(['umount', probe]); else canMount = `mount is not permitted here (${(r.stderr || '').trim()})`;
  rmSync(probe, { recursive: true, force: true });
});
after(() => { for (const p of mounted.splice(0)) sh(['umount', '-l', p]); });

function mountTmpfs(at: string, mode = '0755', uid = 0): void {
  const r = sh(['mount', '-t', 'tmpfs', '-o', `size=4m,mode=${mode},uid=${uid},gid=${uid}`, 'warden-test', at]);
  assert.equal(r.status, 0, r.stderr);
  mounted.push(at);
}

function picture(path: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (p: string, rel: string): void => {
    const st = lstatSync(p);
    const head = `${st.uid}:${st.gid}:${(st.mode & 0o7777).toString(8)}`;
    if (st.isFile()) out[rel] = `file ${head} ${sha(readFileSync(p))}`;
    else if (st.isDirectory()) { out[rel] = `dir ${head}`; for (const n of readdirSync(p).sort()) walk(join(p, n), rel === '.' ? n : `${rel}/${n}`); }
    else out[rel] = `other ${head}`;
  };
  walk(path, '.');
  return out;
}

/** A root initialised with its store in a guard state directory (the deployment's layout). */
function deployedRoot(toml = TEST_WARDEN_TOML, stateOutside = false): { t: TestRoot; env: NodeJS.ProcessEnv; alerts: () => Alert[] } {
  const t = world.root({ wardenToml: toml });
  const state = stateOutside ? mkdtempSync(join(tmpdir(), 'warden-test-state-')) : join(t.base, 'guard-state');
  if (stateOutside) states.push(state); else mkdirSync(state, { mode: 0o700 });
  chmodSync(state, 0o700);
  const env = { WARDEN_GUARD_STATE_DIR: state };
  const init = cli(t, ['init'], { env });
  assert.equal(init.code, 0, init.stderr);
  const alerts = (): Alert[] => {
    const stores = join(state, 'stores');
    return readAlertsFile(join(stores, readdirSync(stores)[0] ?? '', 'alerts.jsonl'));
  };
  return { t, env, alerts };
}

const blockedAt = (path: string) => (a: Alert) => a.path === path && a.reason === 'revert-failed' && (a.also ?? []).some((r) => r === 'root-replaced' || r === 'dir-replaced');

/** Some file systems refuse birth times etc.; waits are bounded, never sleep-and-hope. */
const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a mount at a protected path: never acted on, the guard never stays down', () => {
  it('a tmpfs mounted at the root path while the guard is stopped: it starts, changes nothing in it, alerts once with the command, and takes the root back after umount', async (ctx) => {
    if (canMount) return ctx.skip(canMount);
    const { t, env, alerts } = deployedRoot();
    const approved = readFileSync(t.p(ORG), 'utf8');
    mountTmpfs(t.root, '0755');
    mkdirSync(join(t.root, 'config'));
    writeFileSync(join(t.root, 'config', 'warden.toml'), 'not warden\'s\n', { mode: 0o640 });
    writeFileSync(join(t.root, 'inside.txt'), 'the admin\'s own\n', { mode: 0o600 });
    const beforePic = picture(t.root);
    const d = await world.daemon(t, ['--guard'], env);
    const a = await waitFor(() => alerts().find(blockedAt('.')), 5_000, 'the alert that the root path is blocked');
    assert.match(a.detail ?? '', /a directory warden did not make \(owned by uid 0, gid 0, mode 0755\) stands at /);
    assert.match(a.detail ?? '', /EBUSY: it is a mount point/);
    assert.match(a.detail ?? '', /warden changed nothing in it/);
    assert.match(a.advice, /'warden rehome --here'/);
    assert.match(a.advice, new RegExp(`'umount ${t.root}'`));
    // It stays up, and touches nothing, for as long as the mount stands; one alert only.
    await settle(1_500);
    assert.equal(d.proc.exitCode, null, `the guard is still running: ${d.stderr()}`);
    assert.deepEqual(picture(t.root), beforePic, 'nothing in the mounted file system changed');
    assert.equal(alerts().filter(blockedAt('.')).length, 1, JSON.stringify(alerts()));
    // A sanctioned change is refused meanwhile: it would write at the root path.
    const ap = cli(t, ['apply', ORG, '--from', '-'], { env, input: '# no\n' });
    assert.notEqual(ap.code, 0, ap.stdout);
    assert.match(ap.stderr + ap.stdout, /not guarding it/);
    assert.deepEqual(picture(t.root), beforePic);
    // The guard holds nothing open in it: a plain umount works, and the root is guarded again.
    const u = umount(t.root);
    assert.equal(u.status, 0, `umount: ${u.stderr}`);
    const t0 = Date.now();
    await waitFor(() => d.stderr().includes('names the recorded root directory again'), 5_000, 'the guard takes the root back');
    process.stdout.write(`# root taken back ${Date.now() - t0} ms after umount\n`);
    writeFileSync(t.p(ORG), 'members = ["agent"]\n');
    await waitFor(() => readFileSync(t.p(ORG), 'utf8') === approved, 5_000, 'an edit reverted in the root taken back');
    assert.equal(cli(t, ['verify'], { env }).code, 0);
  });

  it('the all-in-one warden run (its witness in this process) on a tmpfs mounted at the root path: up, untouched, the root taken back after umount', async (ctx) => {
    if (canMount) return ctx.skip(canMount);
    const { t, env, alerts } = deployedRoot();
    const approved = readFileSync(t.p(ORG), 'utf8');
    mountTmpfs(t.root, '0755');
    writeFileSync(join(t.root, 'inside.txt'), 'the admin\'s own\n', { mode: 0o600 });
    const beforePic = picture(t.root);
    const d = await world.daemon(t, [], env);
    await waitFor(() => alerts().find(blockedAt('.')), 5_000, 'the alert that the root path is blocked');
    assert.deepEqual(picture(t.root), beforePic);
    assert.equal(umount(t.root).status, 0);
    await waitFor(() => d.stderr().includes('names the recorded root directory again'), 5_000, 'the root taken back');
    writeFileSync(t.p(ORG), 'members = ["agent"]\n');
    await waitFor(() => readFileSync(t.p(ORG), 'utf8') === approved, 5_000, 'an edit reverted');
    assert.equal(d.proc.exitCode, null);
  });

  it('a directory bind-mounted over orgs/ while the guard runs: left as it is, one alert, the rest still guarded; after umount orgs/ is guarded again', async (ctx) => {
    if (canMount) return ctx.skip(canMount);
    const { t, env, alerts } = deployedRoot(TEST_WARDEN_TOML.replace('rescan_seconds = 30', 'rescan_seconds = 1'));
    const approvedOrg = readFileSync(t.p(ORG), 'utf8');
    const approvedCfg = readFileSync(t.p('config/warden.toml'), 'utf8');
    const d = await world.daemon(t, ['--guard'], env);
    const foreign = join(t.base, 'foreign');
    mkdirSync(foreign, { mode: 0o750 });
    chmodSync(foreign, 0o750);
    writeFileSync(join(foreign, 'bookclub.toml'), 'members = ["someone-else"]\n', { mode: 0o640 });
    chownSync(join(foreign, 'bookclub.toml'), 4242, 4242);
    chownSync(foreign, 4242, 4242);
    const beforePic = picture(foreign);
    const r = sh(['mount', '--bind', foreign, t.p('orgs')]);
    assert.equal(r.status, 0, r.stderr);
    mounted.push(t.p('orgs'));
    const a = await waitFor(() => alerts().find(blockedAt('orgs')), 5_000, 'the alert that orgs/ is blocked');
    assert.match(a.detail ?? '', /owned by uid 4242/);
    assert.match(a.detail ?? '', /EBUSY/);
    // Still guarding the rest: an edit of config/warden.toml is reverted.
    writeFileSync(t.p('config/warden.toml'), approvedCfg + '# edited\n');
    await waitFor(() => readFileSync(t.p('config/warden.toml'), 'utf8') === approvedCfg, 5_000, 'config/warden.toml reverted meanwhile');
    await settle(2_500); // two rescans
    assert.deepEqual(picture(foreign), beforePic, 'nothing in the mounted directory changed');
    assert.equal(alerts().filter(blockedAt('orgs')).length, 1);
    assert.equal(d.proc.exitCode, null);
    const u = umount(t.p('orgs'));
    assert.equal(u.status, 0, u.stderr);
    await settle(1_500); // a rescan looks at orgs/ again
    writeFileSync(t.p(ORG), 'members = ["agent"]\n');
    await waitFor(() => readFileSync(t.p(ORG), 'utf8') === approvedOrg, 5_000, 'orgs/ guarded again after umount');
    assert.deepEqual(picture(foreign), beforePic);
  });

  it('a foreign directory at the root path whose parent is read-only: the guard stays up, and moves it aside once the parent is writable again', async (ctx) => {
    if (canMount) return ctx.skip(canMount);
    const { t, env, alerts } = deployedRoot(TEST_WARDEN_TOML, true); // the store outside the read-only parent
    const approved = readFileSync(t.p(ORG), 'utf8');
    renameSync(t.root, join(t.base, 'old-root'));
    mkdirSync(t.root, { mode: 0o755 });
    writeFileSync(join(t.root, 'inside.txt'), 'root\'s\n');
    const beforePic = picture(t.root);
    // The parent made read-only (a read-only bind mount of it on itself).
    let r = sh(['mount', '--bind', t.base, t.base]);
    assert.equal(r.status, 0, r.stderr);
    mounted.push(t.base);
    r = sh(['mount', '-o', 'remount,bind,ro', t.base]);
    assert.equal(r.status, 0, r.stderr);
    const d = await world.daemon(t, ['--guard'], env);
    const a = await waitFor(() => alerts().find(blockedAt('.')), 5_000, 'the alert that the root path is blocked');
    assert.match(a.detail ?? '', /EROFS/);
    assert.deepEqual(picture(t.root), beforePic);
    r = sh(['mount', '-o', 'remount,bind,rw', t.base]);
    assert.equal(r.status, 0, r.stderr);
    // The retry (backoff) moves it aside whole and puts the approved tree back.
    await waitFor(() => { try { return readFileSync(t.p(ORG), 'utf8') === approved; } catch { return false; } }, 20_000, 'the approved tree back at the root path', 100);
    const moved = alerts().find((x) => x.reason === 'changed-while-stopped' || x.reason === 'root-replaced');
    assert.ok(moved?.quarantine, JSON.stringify(alerts()));
    assert.equal(d.proc.exitCode, null);
    assert.ok(moved.quarantine.startsWith('/'), moved.quarantine);
    assert.deepEqual(picture(moved.quarantine), beforePic, 'moved whole, unchanged');
  });
});

describe('a root whose store is inside it (a session), the store hidden by a mount', () => {
  it('the guard says the path names another directory (not "not initialised", not exit 78: systemd would never try again), and changes nothing', async (ctx) => {
    if (canMount) return ctx.skip(canMount);
    const t = world.root({ init: true });
    mountTmpfs(t.root, '0755');
    const r = spawnSync(process.execPath, [CLI, 'run', '--guard', '--root', t.root], { env: t.env, encoding: 'utf8', timeout: 30_000 });
    assert.notEqual(r.status, 78, r.stderr);
    assert.notEqual(r.status, 0, r.stderr);
    assert.match(r.stderr, /its store \(.*\/snapshots\) is not at the root path: the path names another directory now/);
    assert.match(r.stderr, /warden rehome --here/);
    assert.deepEqual(readdirSync(t.root), [], 'nothing written into the mount');
    assert.equal(umount(t.root).status, 0);
    // The store itself removed (no mount): said as such.
    rmSync(t.p('snapshots'), { recursive: true });
    const g = spawnSync(process.execPath, [CLI, 'run', '--guard', '--root', t.root], { env: t.env, encoding: 'utf8', timeout: 30_000 });
    assert.notEqual(g.status, 0);
    assert.match(g.stderr, /its store \(.*\) is gone: warden will not start from nothing/);
  });
});

describe('warden rehome --here: the owner adopts a new file system at the root path', () => {
  it('refused while the guard runs; with it stopped, records the mount as the root and writes the approved tree; the guard then guards it', async (ctx) => {
    if (canMount) return ctx.skip(canMount);
    const { t, env, alerts } = deployedRoot();
    const approved = readFileSync(t.p(ORG), 'utf8');
    const orgMode = lstatSync(t.p(ORG)).mode & 0o7777;
    mountTmpfs(t.root, (lstatSync(t.root).mode & 0o7777).toString(8));
    writeFileSync(join(t.root, 'notes.txt'), 'the owner\'s\n', { mode: 0o644 });
    const d = await world.daemon(t, ['--guard'], env);
    await waitFor(() => alerts().find(blockedAt('.')), 5_000, 'the blocked alert');
    const busy = cli(t, ['rehome', '--here'], { env });
    assert.equal(busy.code, 1, busy.stdout + busy.stderr);
    assert.match(busy.stderr, /is running for this root: stop it first/);
    await d.stop();
    const r = cli(t, ['rehome', '--here'], { env });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /is recorded as the root/);
    assert.match(r.stdout, new RegExp(ORG.replace('.', '\\.')));
    assert.equal(readFileSync(t.p(ORG), 'utf8'), approved, 'the approved tree written into the new file system');
    assert.equal(lstatSync(t.p(ORG)).mode & 0o7777, orgMode);
    assert.equal(readFileSync(join(t.root, 'notes.txt'), 'utf8'), 'the owner\'s\n', 'what the owner put there stays');
    assert.equal(cli(t, ['verify'], { env }).code, 0);
    const n = alerts().length;
    const d2 = await world.daemon(t, ['--guard'], env);
    writeFileSync(t.p(ORG), 'members = ["agent"]\n');
    await waitFor(() => readFileSync(t.p(ORG), 'utf8') === approved, 5_000, 'an edit on the new file system reverted');
    assert.ok(lstatSync(t.root).dev !== lstatSync(t.base).dev, 'the root is still the mount');
    assert.ok(!alerts().slice(n).some(blockedAt('.')), 'no blocked alert after the owner adopted it');
    await d2.stop();
  });

  it('refuses a symlink at the root path and a directory of another owner; nothing is recorded', () => {
    const { t, env } = deployedRoot();
    renameSync(t.root, join(t.base, 'old-root'));
    symlinkSync(join(t.base, 'old-root'), t.root);
    // The CLI resolves the root path (a symlink names another root, whose key is not this one's).
    const s = cli(t, ['rehome', '--here'], { env });
    assert.notEqual(s.code, 0, s.stdout + s.stderr);
    assert.doesNotMatch(s.stdout, /is recorded as the root/);
    rmSync(t.root);
    mkdirSync(t.root, { mode: 0o755 });
    chownSync(t.root, 4243, 4243);
    const o = cli(t, ['rehome', '--here'], { env });
    assert.equal(o.code, 1, o.stdout + o.stderr);
    assert.match(o.stderr, /owned by uid 4243, not by the root's approved owner \(uid 0\) or root: warden will not adopt it/);
    const v = cli(t, ['verify'], { env });
    assert.notEqual(v.code, 0, 'the root is still not the recorded one');
  });
});
