/**
 * Recovery of a store that fails authentication (fast tier): the plan compares the disk with
 * the last approved state in history, validates every file, and adopting it writes a new
 * baseline past the sealed generation, keeps the failed index and reports the recovery.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { adoptRecovery, planRecovery } from '../../src/changes/recover-store.js';
import { openRoot, safeClose } from '../../src/fsx/beneath.js';
import { Store } from '../../src/store/store.js';
import { readSeal, sealPath } from '../../src/store/keys.js';
import { WardenError } from '../../src/common/errors.js';
import type { TestRoot } from '../helpers/root.js';
import { readAlertsOf } from '../helpers/root.js';
import { modeOf, op, roots, text, tomlWith, writer, b64 } from './in-process-root.js';

const R = roots();
after(() => R.cleanup());

const ORG = 'orgs/bookclub.toml';
const CRED = 'config/credentials.toml';

async function withOpen<T>(t: TestRoot, fn: (rootFd: number, store: Store) => Promise<T>): Promise<T> {
  const store = Store.open(t.root);
  const fd = openRoot(t.root);
  try { return await fn(fd, store); } finally { safeClose(fd); store.close(); }
}
const plan = (t: TestRoot) => withOpen(t, (fd, s) => planRecovery(t.root, fd, s));
const head = (t: TestRoot) => spawnSync('git', ['-C', t.p('snapshots/history'), 'rev-parse', 'HEAD'], { encoding: 'utf8' }).stdout.trim();

describe('plan', () => {
  it('names what differs from the last history commit, shows modes, validates, keeps history\'s approval mode', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty') });
    const org = text(t.p(ORG)).replace('hourly_cap = 20', 'hourly_cap = 50');
    writeFileSync(t.p(ORG), org);
    // A planted warden.toml on disk cannot lower the approval mode of the recovery.
    writeFileSync(t.p('config/warden.toml'), tomlWith('none'));
    const p = await plan(t);
    const commit = head(t);
    assert.equal(p.commit, commit);
    assert.equal(p.approval, 'tty');
    assert.deepEqual(p.changed.sort(), ['config/warden.toml', ORG]);
    assert.deepEqual(p.errors, []);
    assert.ok(p.summary.startsWith(`compared with the last approved state: history commit ${commit.slice(0, 10)} (snapshots/history)\n`), p.summary);
    assert.match(p.summary, /- hourly_cap = 20\n {2}\+ hourly_cap = 50/);
    assert.match(p.summary, /files to adopt, with their modes on disk \(history keeps no modes\):\n {2}blocks\/conditional\/nsfw\.md {2}mode 0644\n/);
    assert.equal(p.scan.files.length, 6);
  });

  it('history approval "none" is kept; credentials by fingerprint only; a file gone from disk is listed', async () => {
    const t = await R.init();
    writeFileSync(t.p(CRED), text(t.p(CRED)).replace('sk-ant-EXAMPLE-not-a-real-key', 'sk-ant-PLANTED-0001'));
    rmSync(t.p(ORG));
    const p = await plan(t);
    assert.equal(p.approval, 'none');
    assert.deepEqual(p.changed.sort(), [CRED, ORG]);
    assert.match(p.summary, /config\/credentials\.toml \(fingerprints\)/);
    assert.ok(!p.summary.includes('PLANTED'), 'no credential value');
  });

  it('nothing differs: said so', async () => {
    const t = await R.init();
    const p = await plan(t);
    assert.deepEqual(p.changed, []);
    assert.match(p.summary, /\n {2}no file differs from it\n/);
  });

  it('no history: every file is new, approval tty', async () => {
    const t = await R.init({ wardenToml: tomlWith('none') });
    rmSync(t.p('snapshots/history'), { recursive: true });
    const p = await plan(t);
    assert.equal(p.commit, null);
    assert.equal(p.approval, 'tty');
    assert.equal(p.changed.length, 6);
    assert.ok(p.summary.startsWith('no history to compare with (snapshots/history is missing or empty): every file is shown as new'));
  });

  it('a history without warden.toml: approval tty (never the disk\'s "none")', async () => {
    const t = await R.init({ wardenToml: tomlWith('none') });
    const git = (...a: string[]) => spawnSync('git', ['-C', t.p('snapshots/history'), ...a], { encoding: 'utf8' });
    const rm = git('rm', '-q', '--cached', 'config/warden.toml');
    assert.equal(rm.status, 0, rm.stderr);
    const c = git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '-m', 'drop warden.toml');
    assert.equal(c.status, 0, c.stderr);
    const p = await plan(t);
    assert.equal(p.commit, head(t));
    assert.equal(p.approval, 'tty');
    assert.deepEqual(p.changed, ['config/warden.toml']);
  });

  it('a history whose warden.toml says approval "none" only in a comment or another key: tty', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty').replace(/^(approval = .*)$/m, '# approval = "none" was the old setting\n$1') });
    const p = await plan(t);
    assert.equal(p.approval, 'tty');
  });

  it('invalid files are located errors, and adopting is refused, changing nothing', async () => {
    const t = await R.init();
    writeFileSync(t.p(ORG), 'members = [\n');
    writeFileSync(t.p('config/guests.toml'), 'channels = "not a list"\nfolders = []\n');
    const p = await plan(t);
    assert.ok(p.errors.some((e) => e.file === ORG && typeof e.line === 'number'), JSON.stringify(p.errors));
    assert.ok(p.errors.some((e) => e.file === 'config/guests.toml'), JSON.stringify(p.errors));
    const index = readFileSync(t.p('snapshots/baseline/index'));
    await withOpen(t, async (fd, s) => {
      await assert.rejects(adoptRecovery(t.root, fd, s, p, 'tester'), (e: unknown) => e instanceof WardenError && e.exitCode === 1 && e.message === 'refused: some files on disk are invalid; fix them first (warden is not running, so edit them directly), then run this again. Nothing was adopted.' && e.details.length === p.errors.length);
    });
    assert.deepEqual(readFileSync(t.p('snapshots/baseline/index')), index);
    assert.deepEqual(readAlertsOf(t), []);
  });

  it('a credential file that does not parse is an error too', async () => {
    const t = await R.init();
    writeFileSync(t.p(CRED), '[discord\n');
    const p = await plan(t);
    assert.ok(p.errors.some((e) => e.file === CRED), JSON.stringify(p.errors));
  });
});

describe('adopt', () => {
  it('a new baseline past the sealed generation; the failed index kept in quarantine; the recovery reported', async () => {
    const t = await R.init();
    const org = text(t.p(ORG)).replace('hourly_cap = 20', 'hourly_cap = 51');
    writeFileSync(t.p(ORG), org);
    // The failed index as it would be found: warden's own, with its bytes altered.
    const failed = readFileSync(t.p('snapshots/baseline/index'));
    failed[failed.length - 2] = failed[failed.length - 2]! ^ 1;
    assert.ok(failed.length > 512, String(failed.length));
    writeFileSync(t.p('snapshots/baseline/index'), failed);
    const p = await plan(t);
    const commit = head(t);
    const r = await withOpen(t, (fd, s) => adoptRecovery(t.root, fd, s, p, 'tester'));
    assert.equal(r.state.index.generation, 2);
    assert.match(String(readSeal(sealPath(t.root))), /^2 /);
    const alerts = readAlertsOf(t);
    assert.equal(alerts.length, 1);
    const a = alerts[0]!;
    assert.equal(a.reason, 'baseline-tampered');
    assert.equal(a.path, 'snapshots/baseline/index');
    assert.equal(a.quarantine, `snapshots/quarantine/${a.id}/index`);
    assert.deepEqual(readFileSync(t.p(a.quarantine!)), failed, 'kept whole');
    assert.equal(modeOf(t.p(a.quarantine!)), 0o600, 'the failed index kept owner-only');
    assert.equal(modeOf(t.p(a.quarantine!.replace(/\/index$/, ''))), 0o700);
    assert.equal(a.detail, `recovered by 'warden init --force' (tester): the store did not authenticate; the owner approved the files on disk as the new baseline after seeing 1 path(s) differ from history ${commit.slice(0, 10)} (${ORG})`);
    assert.equal(a.advice, "If you did not run this recovery, someone with a terminal did: check 'warden history' and the files it names.");
    const w = writer(t, { prepare: false });
    try {
      assert.equal(w.loaded.state.index.generation, 2);
      assert.equal(w.loaded.state.bytesOf(w.loaded.store.fd, ORG)?.toString(), org);
    } finally { w.close(); }
    const log = spawnSync('git', ['-C', t.p('snapshots/history'), 'log', '-1', '--format=%B'], { encoding: 'utf8' }).stdout;
    assert.match(log, new RegExp(`init --force \\(recovery after the store failed authentication; 1 path\\(s\\) differed from history ${commit.slice(0, 10)}\\)`));
  });

  it('after a recovery with no history, the next request is approved as the adopted warden.toml says (tty: a pending request, nothing applied)', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty') });
    rmSync(t.p('snapshots/history'), { recursive: true });
    writeFileSync(t.p('snapshots/baseline/index'), 'not an index');
    const p = await plan(t);
    assert.equal(p.approval, 'tty');
    await withOpen(t, (fd, s) => adoptRecovery(t.root, fd, s, p, 'tester'));
    const before = text(t.p(ORG));
    const { reply } = await op(t, { action: 'propose', changes: [{ path: ORG, content_b64: b64(before.replace('hourly_cap = 20', 'hourly_cap = 22')) }], command: 'apply' } as never);
    assert.equal(reply.ok, true, JSON.stringify(reply));
    assert.equal(reply.applied, undefined, JSON.stringify(reply));
    assert.equal((reply.pending as { approval?: string } | undefined)?.approval, 'tty', JSON.stringify(reply));
    assert.equal(text(t.p(ORG)), before, 'nothing applied before the answer');
  });

  it('nothing differed and no history: said so in the alert', async () => {
    const t = await R.init();
    rmSync(t.p('snapshots/history'), { recursive: true });
    rmSync(t.p('snapshots/baseline/index'));
    const p = await plan(t);
    await withOpen(t, (fd, s) => adoptRecovery(t.root, fd, s, { ...p, changed: [] }, 'tester'));
    const a = readAlertsOf(t)[0]!;
    assert.equal(a.quarantine, null, 'no index to keep');
    assert.equal(a.detail, "recovered by 'warden init --force' (tester): the store did not authenticate; the owner approved the files on disk as the new baseline after seeing 0 path(s) differ from no history");
    assert.equal(existsSync(t.p('snapshots/baseline/index')), true);
  });
});
