/**
 * The runtime manifest (docs/CONTRACT.md §Runtime view): published at init, at guard start and after every
 * accepted change (apply, rm, cred, accept, a warden.toml reload), by the daemon or by a
 * command applying under the lock; hashes only; where `warden status --json` says.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, linkSync, mkdtempSync, readFileSync, realpathSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { expectedLocation, parseManifest, publishLocation, serializeManifest, type RuntimeManifest } from '../../src/store/manifest-format.js';
import { cli, readAlertsOf, secretValues, sha, startDaemon, testWorld, waitFor, type TestRoot } from '../helpers/root.js';

const world = testWorld();
after(() => world.cleanup());
const initRoot = (): TestRoot => world.root({ init: true });
const read = (path: string): RuntimeManifest => {
  const p = parseManifest(readFileSync(path));
  if (!p.ok) throw new Error(p.problem);
  return p.manifest;
};
const manifestOf = (t: TestRoot) => read(t.p('snapshots/manifest.json'));
const statusGen = (t: TestRoot): number => JSON.parse(cli(t, ['status', '--json']).stdout).generation;

/** The manifest describes exactly the files on disk now (they are approved and the guard is at rest). */
function assertDescribesDisk(t: TestRoot, m: RuntimeManifest): void {
  for (const [path, e] of Object.entries(m.files)) {
    const bytes = readFileSync(t.p(path));
    assert.equal(e.sha256, sha(bytes), `${path} hash`);
    assert.equal(e.size, bytes.length, `${path} size`);
    assert.equal(e.mode, statSync(t.p(path)).mode & 0o7777, `${path} mode`);
  }
}

describe('the runtime manifest', () => {
  it('is published by init: every protected file by hash, size and mode, no value, readable (0644)', () => {
    const t = initRoot();
    const path = t.p('snapshots/manifest.json');
    const raw = readFileSync(path, 'utf8');
    const m = manifestOf(t);
    assert.equal(m.generation, 1);
    assert.equal(m.root.path, realpathSync(t.root));
    assert.equal(m.root.ino, statSync(t.root).ino);
    assert.deepEqual(Object.keys(m.files).sort(), ['blocks/conditional/nsfw.md', 'config/conditions.toml', 'config/credentials.toml', 'config/guests.toml', 'config/warden.toml', 'orgs/bookclub.toml']);
    assert.equal(m.files['config/credentials.toml']?.kind, 'credentials');
    assertDescribesDisk(t, m);
    for (const v of secretValues(t)) assert.ok(!raw.includes(v), 'no credential value in the manifest');
    assert.equal(statSync(path).mode & 0o777, 0o644);
    const st = JSON.parse(cli(t, ['status', '--json']).stdout).runtime_manifest;
    assert.deepEqual({ path: st.path, setup: st.setup, generation: st.generation, current: st.current }, { path, setup: 'session', generation: 1, current: true });
  });

  it('a command applying under the lock (no daemon) publishes the new generation', () => {
    const t = initRoot();
    const next = readFileSync(t.p('config/guests.toml'), 'utf8') + '# reviewed\n';
    assert.equal(cli(t, ['apply', 'config/guests.toml', '--from', '-'], { input: next }).code, 0);
    const m = manifestOf(t);
    assert.equal(m.generation, 2);
    assert.equal(m.generation, statusGen(t));
    assertDescribesDisk(t, m);
  });

  it('the daemon publishes at start, and after apply, rm, cred set, accept and a warden.toml reload', { timeout: 120_000 }, async () => {
    const t = initRoot();
    unlinkSync(t.p('snapshots/manifest.json'));
    const d = await startDaemon(t);
    try {
      // At start, once startup verification is done.
      assert.equal(manifestOf(t).generation, 1, 'published at guard start');
      const step = (what: string, args: string[], input = '') => {
        const before = manifestOf(t).generation;
        const r = cli(t, args, { input });
        assert.equal(r.code, 0, `${what}: ${r.stderr}`);
        const m = manifestOf(t);
        assert.ok(m.generation > before, `${what} bumped the manifest (${before} → ${m.generation})`);
        assert.equal(m.generation, statusGen(t), `${what}: manifest and baseline agree`);
        return m;
      };
      writeFileSync(join(t.base, 'extra.toml'), 'members = ["777777777777777777"]\nchannels = ["666666666666666666"]\nfolders = ["/workspace/extra/"]\ncommands = []\nhourly_cap = 5\n');
      assert.ok('orgs/extra.toml' in step('apply', ['apply', 'orgs/extra.toml', '--from', join(t.base, 'extra.toml')]).files);
      assert.ok(!('orgs/extra.toml' in step('rm', ['rm', 'orgs/extra.toml']).files));
      const app = '222222222222222222';
      const token = `${Buffer.from(app).toString('base64').replace(/=+$/, '')}.NEW000.rotated-token`;
      const m = step('cred set', ['cred', 'set', 'discord.token', 'discord.application_id'], `${token}\n${app}\n`);
      assert.ok(!readFileSync(t.p('snapshots/manifest.json'), 'utf8').includes(token), 'no value after a rotation either');
      await waitFor(() => sha(readFileSync(t.p('config/credentials.toml'))) === m.files['config/credentials.toml']?.sha256, 10_000, 'credentials written');
      // accept: a direct edit is reverted, then accepted through the sanctioned path.
      const edited = readFileSync(t.p('config/guests.toml'), 'utf8') + '# accepted later\n';
      // (Written by rename, so the guard sees the whole edit at once, never an emptied file first.)
      writeFileSync(t.p('config/.guests.new'), edited);
      chmodSync(t.p('config/.guests.new'), statSync(t.p('config/guests.toml')).mode & 0o7777); // a content change only
      renameSync(t.p('config/.guests.new'), t.p('config/guests.toml'));
      await waitFor(() => readAlertsOf(t).some((a) => a.path === 'config/guests.toml' && a.action === 'reverted'), 10_000, 'the revert');
      const alert = readAlertsOf(t).find((a) => a.path === 'config/guests.toml' && a.action === 'reverted')!;
      assert.equal(step('accept', ['accept', alert.id]).files['config/guests.toml']?.sha256, sha(edited));
      // warden.toml: a sanctioned change reloads it live; the reload's own commit (newly protected files) publishes too.
      writeFileSync(t.p('config/settings.json'), '{"a":1}\n');
      const toml = readFileSync(t.p('config/warden.toml'), 'utf8') + '\n[[protect]]\npath = "config/settings.json"\nkind = "text"\n';
      const w = step('warden.toml', ['apply', 'config/warden.toml', '--from', '-'], toml);
      await waitFor(() => 'config/settings.json' in manifestOf(t).files, 10_000, 'the reload to adopt the newly protected file');
      assert.ok(manifestOf(t).generation >= w.generation);
      assertDescribesDisk(t, manifestOf(t));
    } finally {
      await d.stop();
    }
  });

  it('a start with nothing changed keeps the manifest as it is; an altered, re-moded or hard-linked one is replaced', { timeout: 120_000 }, async () => {
    const t = initRoot();
    const path = t.p('snapshots/manifest.json');
    const restart = async () => { const d = await startDaemon(t); await d.stop(); };
    await restart();
    const good = readFileSync(path);
    const ino = statSync(path).ino;
    await restart();
    assert.equal(statSync(path).ino, ino, 'the same file: not written again');
    assert.deepEqual(readFileSync(path), good);
    // Altered while the guard was stopped (same length: one hex digit of a hash): put back.
    const s = good.toString('utf8');
    const i = s.indexOf('"sha256": "') + 11;
    writeFileSync(path, s.slice(0, i) + (s[i] === '0' ? '1' : '0') + s.slice(i + 1));
    await restart();
    assert.deepEqual(readFileSync(path), good, 'an altered manifest is replaced at start');
    assert.notEqual(statSync(path).ino, ino);
    chmodSync(path, 0o666);
    await restart();
    assert.equal(statSync(path).mode & 0o777, 0o644, 'a manifest of another mode is replaced');
    // A second name could change it behind the guard's back: replaced by a file of its own.
    const other = join(t.base, 'other-name.json');
    linkSync(path, other);
    await restart();
    assert.equal(statSync(path).nlink, 1, 'a hard-linked manifest is replaced');
    assert.deepEqual(readFileSync(path), good);
  });

  it('under systemd it goes into $RUNTIME_DIRECTORY, not into the store', { timeout: 60_000 }, async () => {
    const t = initRoot();
    unlinkSync(t.p('snapshots/manifest.json'));
    const run = mkdtempSync(join(tmpdir(), 'warden-i15-run-'));
    const d = await startDaemon(t, ['--guard'], { RUNTIME_DIRECTORY: run });
    try {
      const m = read(join(run, 'manifest.json'));
      assert.equal(m.root.path, realpathSync(t.root));
      assert.equal(statSync(join(run, 'manifest.json')).mode & 0o777, 0o644, 'readable by the runtime even under UMask=0077');
      assert.throws(() => statSync(t.p('snapshots/manifest.json')), /ENOENT/);
    } finally {
      await d.stop();
      rmSync(run, { recursive: true, force: true });
    }
  });
});

describe('manifest format and location', () => {
  const good: RuntimeManifest = { format: 'warden-runtime-manifest', version: 1, root: { path: '/r', dev: 1, ino: 2 }, generation: 3, updated: 'x', files: { 'orgs/a.toml': { kind: 'org', sha256: 'a'.repeat(64), size: 1, mode: 0o644 } } };

  it('parses what it writes, and refuses anything else', () => {
    const raw = serializeManifest(good);
    const parsed = parseManifest(raw);
    // The file table is a null-prototype record (TOML and path names are data): same entries, no prototype.
    assert.ok(parsed.ok && Object.getPrototypeOf(parsed.manifest.files) === null, 'files has no prototype');
    assert.deepEqual(JSON.parse(JSON.stringify(parsed)), { ok: true, manifest: good });
    for (let n = 1; n < raw.length - 2; n += 7) assert.equal(parseManifest(raw.subarray(0, n)).ok, false, `truncated at ${n}`);
    const bad = (m: unknown) => parseManifest(Buffer.from(JSON.stringify(m)));
    assert.match((bad({ ...good, format: 'x' }) as { problem: string }).problem, /format/);
    assert.match((bad({ ...good, generation: -1 }) as { problem: string }).problem, /generation/);
    assert.match((bad({ ...good, root: { path: 'rel', dev: 1, ino: 2 } }) as { problem: string }).problem, /root/);
    assert.match((bad({ ...good, files: { '../x': good.files['orgs/a.toml'] } }) as { problem: string }).problem, /plain relative path/);
    assert.match((bad({ ...good, files: { 'orgs/a.toml': { ...good.files['orgs/a.toml'], sha256: 'A'.repeat(64) } } }) as { problem: string }).problem, /sha256/);
    assert.match((bad({ ...good, files: { 'orgs/a.toml': { ...good.files['orgs/a.toml'], kind: 'evil' } } }) as { problem: string }).problem, /kind/);
  });

  it('publishes into the unit\'s RuntimeDirectory, the deployment\'s when run with its STATE_DIRECTORY, else beside the store', () => {
    assert.deepEqual(publishLocation('/r', { RUNTIME_DIRECTORY: '/run/warden-guard' }), { setup: 'deployment', path: '/run/warden-guard/manifest.json', dir: '/run/warden-guard' });
    assert.deepEqual(publishLocation('/r', { STATE_DIRECTORY: '/var/lib/warden-guard' }), { setup: 'deployment', path: '/run/warden-guard/manifest.json', dir: '/run/warden-guard' });
    assert.deepEqual(publishLocation('/r', {}), { setup: 'session', path: '/r/snapshots/manifest.json', rel: 'snapshots/manifest.json' });
  });

  it('a runtime expects the deployment\'s manifest whenever the deployment is installed', () => {
    const dirs = { runtimeDir: '/run/warden-guard', stateDir: '/var/lib/warden-guard' };
    assert.equal(expectedLocation('/r', () => false, dirs).path, '/r/snapshots/manifest.json');
    assert.equal(expectedLocation('/r', (p) => p === dirs.stateDir, dirs).path, '/run/warden-guard/manifest.json', 'even while the guard is stopped');
    assert.equal(expectedLocation('/r', (p) => p === dirs.runtimeDir, dirs).setup, 'deployment');
  });
});

describe('init --force', () => {
  it('publishes the new baseline, and a view moves to it even when the generation number repeats', { timeout: 60_000 }, async () => {
    const { openApprovedView } = await import('../../src/runtime/index.js');
    const t = initRoot();
    const view = openApprovedView(t.root, { deployment: { runtimeDir: join(t.base, 'none'), stateDir: join(t.base, 'none2') } });
    try {
      await view.ready();
      const before = view.current();
      assert.equal(before.ok, true);
      const next = readFileSync(t.p('orgs/bookclub.toml'), 'utf8') + '# re-baselined\n';
      writeFileSync(t.p('orgs/.b.new'), next);
      chmodSync(t.p('orgs/.b.new'), statSync(t.p('orgs/bookclub.toml')).mode & 0o7777);
      renameSync(t.p('orgs/.b.new'), t.p('orgs/bookclub.toml'));
      // A direct edit with no daemon running: the view keeps the approved state.
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(view.current(), before);
      const r = cli(t, ['init', '--force']);
      assert.equal(r.code, 0, r.stderr);
      const m = manifestOf(t);
      assert.equal(m.files['orgs/bookclub.toml']?.sha256, sha(next));
      await waitFor(() => view.current().files['orgs/bookclub.toml'] === sha(next), 10_000, 'the view to adopt the new baseline');
      assert.equal(view.current().generation, m.generation);
    } finally {
      await view.close();
    }
  });
});
