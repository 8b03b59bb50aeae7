/**
 * Damage to the store's own layout (same user as in `npm start`): a directory
 * planted at snapshots/alerts.jsonl, and snapshots/quarantine planted as a symlink before a
 * symlink swap of credentials.toml. Against the real CLI and daemon.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_WARDEN_TOML, cli, makeRoot, readAlertsFile, readAlertsOf, startDaemon, waitFor, type Daemon, type TestRoot } from '../helpers/root.js';

const ORG = 'orgs/bookclub.toml';
const CREDS = 'config/credentials.toml';
/** A Node stack trace line: what a crash prints instead of a message. */
const STACK = /\n\s+at .+\(.*:\d+:\d+\)/;

let t: TestRoot;
let d: Daemon | null = null;
afterEach(async () => { await d?.stop(); d = null; t?.cleanup(); });

describe('a directory at snapshots/alerts.jsonl', () => {
  it('status and alerts say what is wrong instead of crashing', () => {
    t = makeRoot();
    assert.equal(cli(t, ['init']).code, 0);
    rmSync(t.p('snapshots/alerts.jsonl'), { force: true });
    mkdirSync(t.p('snapshots/alerts.jsonl'));
    const st = cli(t, ['status']);
    assert.doesNotMatch(st.stderr, STACK, st.stderr);
    assert.equal(st.code, 1, st.stdout + st.stderr);
    assert.match(st.stdout, /store damaged: .*alerts\.jsonl is not a regular file/);
    const sj = cli(t, ['status', '--json']);
    assert.match((JSON.parse(sj.stdout) as { store: { problems: string[] } }).store.problems.join('\n'), /alerts\.jsonl is not a regular file/);
    const al = cli(t, ['alerts']);
    assert.doesNotMatch(al.stderr, STACK, al.stderr);
    assert.equal(al.code, 2);
    assert.match(al.stderr, /alerts\.jsonl is not a regular file/);
    const aj = cli(t, ['alerts', '--json']);
    assert.match((JSON.parse(aj.stdout) as { error: string }).error, /alerts\.jsonl is not a regular file/);
  });

  it('while the guard runs: the directory is quarantined and replaced, and every alert is durable in the file', async () => {
    t = makeRoot();
    assert.equal(cli(t, ['init']).code, 0);
    d = await startDaemon(t);
    // Built aside and renamed into place in one step: the running guard must never see it half-made.
    mkdirSync(t.p('snapshots/.planting'));
    writeFileSync(t.p('snapshots/.planting/planted'), 'x');
    rmSync(t.p('snapshots/alerts.jsonl'), { force: true });
    renameSync(t.p('snapshots/.planting'), t.p('snapshots/alerts.jsonl'));
    writeFileSync(t.p(ORG), 'hourly_cap = 1\n');
    await waitFor(() => lstatSync(t.p('snapshots/alerts.jsonl')).isFile() && readAlertsOf(t).some((a) => a.path === ORG && a.action === 'reverted'), 15_000, 'the revert alert on disk');
    const alerts = readAlertsOf(t);
    const tamper = alerts.find((a) => a.reason === 'baseline-tampered' && a.path === 'snapshots/alerts.jsonl');
    assert.ok(tamper, JSON.stringify(alerts));
    const kept = /moved to (snapshots\/quarantine\/[^ ]+\/alerts\.jsonl)/.exec(tamper.detail ?? '')?.[1];
    assert.ok(kept, tamper.detail);
    assert.equal(readFileSync(t.p(`${kept}/planted`), 'utf8'), 'x', 'the planted directory is kept, not deleted');
    const st = cli(t, ['status', '--json']);
    assert.equal(st.code, 0, st.stdout + st.stderr);
    const al = cli(t, ['alerts', '--json']);
    assert.equal(al.code, 0, al.stderr);
    assert.ok((JSON.parse(al.stdout) as { id: string }[]).some((a) => a.id === tamper.id));
    // Durable: the same alerts after the guard is gone.
    await d.stop(); d = null;
    assert.ok(readAlertsOf(t).some((a) => a.path === ORG && a.action === 'reverted'));
  });
});

describe('snapshots/quarantine planted as a symlink', () => {
  it('then a symlink swap of credentials.toml: reverted once, the link is kept in the real quarantine, nothing written through it', async () => {
    t = makeRoot();
    assert.equal(cli(t, ['init']).code, 0);
    const approved = readFileSync(t.p(CREDS));
    d = await startDaemon(t);
    const trap = join(t.outside, 'q');
    mkdirSync(trap);
    rmSync(t.p('snapshots/quarantine'), { recursive: true, force: true });
    symlinkSync(trap, t.p('snapshots/quarantine'));
    writeFileSync(join(t.outside, 'creds.toml'), '[discord]\ntoken = "attacker"\napplication_id = "1"\n');
    symlinkSync(join(t.outside, 'creds.toml'), t.p('config/.swap'));
    renameSync(t.p('config/.swap'), t.p(CREDS));
    await waitFor(() => lstatSync(t.p(CREDS)).isFile() && readFileSync(t.p(CREDS)).equals(approved)
      && readAlertsOf(t).some((a) => a.path === CREDS && a.action === 'reverted'), 15_000, 'credentials restored');
    const alerts = readAlertsOf(t);
    const revert = alerts.find((a) => a.path === CREDS && a.action === 'reverted')!;
    assert.ok(revert.quarantine, 'the rejected link is kept');
    assert.ok(lstatSync(t.p(revert.quarantine)).isSymbolicLink(), 'kept as the link it was');
    assert.ok(lstatSync(t.p('snapshots/quarantine')).isDirectory(), 'the quarantine is a real directory again');
    assert.deepEqual(readdirSync(trap), [], 'nothing was written through the planted link');
    assert.equal(alerts.filter((a) => a.action === 'revert-failed').length, 0, 'no revert-failed at all');
    assert.ok(alerts.some((a) => a.reason === 'baseline-tampered' && a.path === 'snapshots/quarantine'));
    const ping = JSON.parse(cli(t, ['status', '--json']).stdout) as { daemon: { failing: string[] } };
    assert.deepEqual(ping.daemon.failing, [], 'no path left retrying');
    assert.ok(!existsSync(join(trap, revert.id)));
  });
});

describe('the store path replaced', () => {
  it('snapshots/ renamed away and a symlink put in its place: the guard keeps its store, reports, quarantines the link and moves the store back', async () => {
    t = makeRoot();
    assert.equal(cli(t, ['init']).code, 0);
    const ino = lstatSync(t.p('snapshots')).ino;
    d = await startDaemon(t);
    const fake = join(t.outside, 'fake-store');
    mkdirSync(fake);
    // The guard may move its store back between the agent's two steps (the symlink then
    // meets EEXIST): the agent tries again, until its link took the path once.
    for (let tries = 0; ; tries++) {
      renameSync(t.p('snapshots'), t.p('.hidden-store'));
      try { symlinkSync(fake, t.p('snapshots')); break; } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || tries >= 20) throw err;
        await waitFor(() => !existsSync(t.p('.hidden-store')), 15_000, 'the guard moved its store back');
      }
    }
    await waitFor(() => { const st = lstatSync(t.p('snapshots')); return st.isDirectory() && st.ino === ino && readAlertsOf(t).some((a) => a.reason === 'baseline-tampered' && a.path === 'snapshots'); }, 15_000, 'the real store back at its path, and reported');
    assert.ok(!existsSync(t.p('.hidden-store')));
    const tamper = readAlertsOf(t).find((a) => a.reason === 'baseline-tampered' && a.path === 'snapshots');
    assert.ok(tamper, 'reported');
    // The attack takes two steps (rename, then link); the guard may report the moment between them.
    assert.match(tamper.detail ?? '', /symbolic link|no longer warden's store|is gone/);
    assert.deepEqual(readdirSync(fake), [], 'nothing written through the link');
    // Still guarding, with alerts in the real store.
    writeFileSync(t.p(ORG), 'hourly_cap = 3\n');
    await waitFor(() => readAlertsOf(t).some((a) => a.path === ORG && a.action === 'reverted'), 15_000, 'revert recorded');
    assert.equal(cli(t, ['verify']).code, 0);
  });
});

describe('the state directory’s store renamed under a running guard', () => {
  it('reported once (not at every rescan); the guard keeps guarding on the store it holds', async () => {
    t = makeRoot({ wardenToml: TEST_WARDEN_TOML.replace('rescan_seconds = 30', 'rescan_seconds = 0.2') });
    const state = join(t.base, 'lib', 'warden-guard');
    mkdirSync(state, { recursive: true, mode: 0o700 });
    const env = { WARDEN_GUARD_STATE_DIR: state };
    assert.equal(cli(t, ['init'], { env }).code, 0);
    d = await startDaemon(t, ['--guard'], env);
    const [id] = readdirSync(join(state, 'stores'));
    const moved = join(state, 'stores', 'elsewhere');
    renameSync(join(state, 'stores', id!), moved);
    const tampers = () => readStoreAlerts(moved).filter((a) => a.reason === 'baseline-tampered');
    await waitFor(() => tampers().length >= 1, 10_000, 'the rename reported');
    assert.match(tampers()[0]!.detail ?? '', /no longer warden's store|is gone/);
    writeFileSync(t.p(ORG), 'hourly_cap = 4\n');
    await waitFor(() => readStoreAlerts(moved).some((a) => a.path === ORG && a.action === 'reverted'), 10_000, 'still reverting, alerts in the held store');
    // Absence needs a window: several rescan periods (0.2 s each) pass, still the one report.
    const t0 = Date.now();
    await waitFor(() => Date.now() - t0 > 1500, 5000, 'seven rescan periods');
    assert.equal(tampers().length, 1, 'one report for one unrepairable path');
    assert.ok(!existsSync(t.p('snapshots')), 'never fell back to a store inside the root');
  });
});

function readStoreAlerts(dir: string): { reason: string; path: string; action: string; detail?: string }[] {
  return readAlertsFile(join(dir, 'alerts.jsonl'));
}
