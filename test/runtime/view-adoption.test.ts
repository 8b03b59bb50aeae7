/**
 * The approved view in-process, against real files: a root in a temporary directory and a
 * manifest this test writes itself (no daemon, no CLI). It pins what a runtime sees in each
 * case: the state adopted, every reason it stays closed or keeps the last approved state (in
 * words), what it reads and what it does not. Fast: `npm run mutate -- runtime --sample N`
 * runs it first for every mutant of view.js and locate.js.
 */
import { after, describe, it, mock } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, closeSync, ftruncateSync, futimesSync, mkdirSync, mkdtempSync, openSync, fstatSync, renameSync, rmSync, symlinkSync, unlinkSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { openApprovedView, type ApprovedState, type ApprovedView } from '../../src/runtime/index.js';
import { locateManifest, readManifestFile } from '../../src/runtime/locate.js';
import { lstatProbe } from '../../src/runtime/sandbox.js';
import { serializeManifest, MANIFEST_FORMAT, MAX_MANIFEST_BYTES, type RuntimeManifest } from '../../src/store/manifest-format.js';
import { rootIdentityOf } from '../../src/store/manifest.js';
import { openRoot, safeClose } from '../../src/fsx/beneath.js';
import { canRead } from '../../src/policy/index.js';

/** Captured before any test mocks setTimeout, for deadlines that must still fire. */
const realSetTimeout = globalThis.setTimeout;
const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');
const temps: string[] = [];
/** Every view opened here, closed in `after` whatever a test's outcome (an open watch keeps the process alive). */
const opened: ApprovedView[] = [];
after(async () => {
  for (const v of opened) await v.close();
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const CONDITIONS = '[workspace."/secret/"]\nwhen = "discord:dm"\naction = "deny"\n';
const GUESTS = 'channels = ["555555555555555555"]\nfolders = ["/workspace/public/"]\n';
const CREDS = '[discord]\ntoken = "tok-1"\n';
const GUEST = '999999999999999999';
const GUEST_CTX = { kind: 'guild' as const, guild: '1', channel: '555555555555555555' };

type Kind = 'conditions' | 'guests' | 'credentials' | 'text' | 'org' | 'block';
interface Fixture {
  base: string; root: string; manifest: string;
  files: Record<string, { kind: Kind; text: string; mode: number }>;
  generation: number;
  /** Write a file into the root with its mode. */
  put(path: string, text: string, mode?: number): void;
  /** Publish a manifest of the fixture's files (as warden would, atomically by rename). */
  publish(over?: Partial<RuntimeManifest>, files?: RuntimeManifest['files']): void;
  /** The bytes publish() would write. */
  manifestBytes(over?: Partial<RuntimeManifest>, files?: RuntimeManifest['files']): Buffer;
  views: ApprovedView[];
  open(recheckMs?: number, usePolling?: boolean): ApprovedView;
}

function fixture(): Fixture {
  const base = mkdtempSync(join(tmpdir(), 'warden-io-view-'));
  temps.push(base);
  const root = join(base, 'root');
  for (const d of ['config', 'orgs', 'blocks/conditional', 'notes']) mkdirSync(join(root, d), { recursive: true });
  mkdirSync(join(base, 'run'));
  const f: Fixture = {
    base, root, manifest: join(base, 'run', 'manifest.json'), generation: 1, views: [],
    files: {
      'config/conditions.toml': { kind: 'conditions', text: CONDITIONS, mode: 0o644 },
      'config/guests.toml': { kind: 'guests', text: GUESTS, mode: 0o644 },
      'config/credentials.toml': { kind: 'credentials', text: CREDS, mode: 0o600 },
      'notes/readme.md': { kind: 'text', text: 'not used by the view\n', mode: 0o644 },
    },
    put(path, text, mode = 0o644) { writeFileSync(join(root, path), text); chmodSync(join(root, path), mode); },
    publish(over = {}, files) {
      const tmp = `${f.manifest}.tmp`;
      writeFileSync(tmp, f.manifestBytes(over, files));
      renameSync(tmp, f.manifest);
    },
    manifestBytes(over = {}, files) {
      const fd = openRoot(root);
      let id; try { id = rootIdentityOf(fd); } finally { safeClose(fd); }
      const m: RuntimeManifest = {
        format: MANIFEST_FORMAT, version: 1, root: id, generation: f.generation, updated: '2026-12-03T00:00:00Z',
        files: files ?? Object.fromEntries(Object.entries(f.files).map(([p, e]) => [p, { kind: e.kind, sha256: sha(e.text), size: Buffer.byteLength(e.text), mode: e.mode }])),
        ...over,
      } as RuntimeManifest;
      return Buffer.from(serializeManifest(m));
    },
    open(recheckMs = 0, usePolling = false) { const v = openApprovedView(root, { manifest: f.manifest, recheckMs, usePolling }); f.views.push(v); opened.push(v); return v; },
  };
  for (const [p, e] of Object.entries(f.files)) f.put(p, e.text, e.mode);
  return f;
}

const closeAll = async (f: Fixture) => { for (const v of f.views) await v.close(); };

/** Wait (with a deadline) until the view's state satisfies `ok`. */
async function until(v: ApprovedView, ok: (s: ApprovedState) => boolean, what: string, ms = 5000): Promise<ApprovedState> {
  if (ok(v.current())) return v.current();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { v.off('change', on); reject(new Error(`timed out after ${ms} ms waiting for ${what}; state: ${JSON.stringify({ ok: v.current().ok, reason: v.current().reason, generation: v.current().generation })}`)); }, ms);
    const on = (s: ApprovedState) => { if (ok(s)) { clearTimeout(timer); v.off('change', on); resolve(s); } };
    v.on('change', on);
  });
}

describe('the view adopts an approved state from the files themselves', () => {
  it('opens closed-then-ok on the first check: generation, hashes of the files it uses, credentials, policy', async () => {
    const f = fixture();
    f.generation = 7;
    f.publish();
    const v = f.open();
    const s = v.current();
    assert.equal(s.ok, true, String(s.reason));
    assert.equal(s.reason, null);
    assert.equal(s.generation, 7);
    assert.deepEqual({ ...s.files }, { 'config/conditions.toml': sha(CONDITIONS), 'config/credentials.toml': sha(CREDS), 'config/guests.toml': sha(GUESTS) }, 'the text file is not one the view uses');
    assert.deepEqual(JSON.parse(JSON.stringify(s.credentials)), { discord: { token: 'tok-1' } });
    assert.equal(canRead(s.policy, GUEST, GUEST_CTX, '/workspace/public/a.md'), true, 'built from the verified bytes');
    assert.equal(Object.isFrozen(s), true);
    assert.equal(v.manifestPath, f.manifest);
    await v.ready();
    const st = v.stats();
    assert.deepEqual({ checks: st.checks >= 1, manifestReads: st.manifestReads >= 1, fileReads: st.fileReads, adopted: st.adopted, builtOffLoop: st.builtOffLoop }, { checks: true, manifestReads: true, fileReads: 3, adopted: 1, builtOffLoop: 0 });
    await closeAll(f);
  });

  it('a new generation replaces the state; unchanged files are not read again; one change event', async () => {
    const f = fixture();
    f.publish();
    const v = f.open();
    await v.ready();
    const before = v.stats();
    const events: ApprovedState[] = [];
    v.on('change', (s) => events.push(s));
    const next = 'channels = ["555555555555555555"]\nfolders = ["/workspace/other/"]\n';
    f.files['config/guests.toml'] = { kind: 'guests', text: next, mode: 0o644 };
    f.put('config/guests.toml', next);
    f.generation = 2;
    f.publish();
    const s = await until(v, (x) => x.generation === 2, 'generation 2');
    assert.equal(s.ok, true);
    assert.equal(s.files['config/guests.toml'], sha(next));
    assert.equal(canRead(s.policy, GUEST, GUEST_CTX, '/workspace/other/x.md'), true);
    assert.equal(canRead(s.policy, GUEST, GUEST_CTX, '/workspace/public/a.md'), false);
    assert.equal(v.stats().fileReads - before.fileReads, 1, 'only the changed file was read');
    assert.equal(v.stats().adopted, 2);
    assert.equal(events.filter((e) => e.ok).length, 1, 'one change event for one new generation');
    await closeAll(f);
  });

  it('the same manifest bytes again read nothing and emit nothing', async () => {
    const f = fixture();
    f.publish();
    const v = f.open();
    await v.ready();
    let events = 0;
    v.on('change', () => { events++; });
    const reads = v.stats().fileReads;
    const checks = v.stats().checks;
    f.publish(); // identical bytes, new inode
    const deadline = Date.now() + 5000;
    while (v.stats().checks === checks && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.ok(v.stats().checks > checks, 'the rename was looked at');
    assert.equal(v.stats().fileReads, reads);
    assert.equal(v.stats().adopted, 1);
    assert.equal(events, 0);
    await closeAll(f);
  });

});

describe('what the view refuses, in words, and what it keeps meanwhile', () => {
  const closedWith = async (setup: (f: Fixture) => void, reason: RegExp | string) => {
    const f = fixture();
    setup(f);
    const v = f.open();
    const s = v.current();
    assert.equal(s.ok, false);
    if (typeof reason === 'string') assert.equal(s.reason, reason); else assert.match(String(s.reason), reason);
    assert.deepEqual(s.files, {});
    assert.deepEqual(s.credentials, {});
    assert.equal(s.generation, null);
    assert.equal(canRead(s.policy, GUEST, GUEST_CTX, '/workspace/public/a.md'), false, 'closed grants nothing');
    await closeAll(f);
    return f;
  };

  it('no manifest', async () => {
    const f = fixture();
    const v = f.open();
    assert.equal(v.current().reason, `no manifest at ${f.manifest} (is warden running for this root?)`);
    await closeAll(f);
  });

  it('the manifest is a symlink (never followed), a directory, too large, malformed', async () => {
    await closedWith((f) => { writeFileSync(join(f.base, 'real.json'), '{}'); symlinkSync(join(f.base, 'real.json'), f.manifest); }, /is a symlink, not the manifest$/);
    await closedWith((f) => { mkdirSync(f.manifest); }, /is not a regular file$/);
    await closedWith((f) => { writeFileSync(f.manifest, Buffer.alloc(MAX_MANIFEST_BYTES + 1, 0x20)); }, new RegExp(`is too large \\(${MAX_MANIFEST_BYTES + 1} bytes\\)$`));
    await closedWith((f) => { writeFileSync(f.manifest, '{"format": 1'); }, /^the manifest .* is malformed: /);
  });

  it('a FIFO as the manifest is not opened for a blocking read', async () => {
    const f = fixture();
    execFileSync('mkfifo', [f.manifest]);
    const v = f.open(); // would hang here if it were opened without O_NONBLOCK
    assert.match(String(v.current().reason), /is not a regular file$/);
    await closeAll(f);
  });

  it('the manifest of another root, or of the same path after the root was replaced', async () => {
    await closedWith((f) => { f.publish({ root: { path: '/elsewhere', dev: 1, ino: 2 } }); }, /was refused: it is the manifest of another root \("\/elsewhere", not ".*"\)$/);
    const f = fixture();
    f.publish();
    const moved = `${f.root}.old`;
    renameSync(f.root, moved);
    mkdirSync(f.root);
    const v = f.open();
    assert.match(String(v.current().reason), /was refused: it is the manifest of another directory at ".*" \(the root was replaced since\)$/);
    await closeAll(f);
  });

  it('the root itself cannot be opened', async () => {
    await closedWith((f) => { f.publish(); rmSync(f.root, { recursive: true }); }, new RegExp(`^cannot open the root .*: ENOENT$`));
  });

  const waiting = (gen: number, why: string) => `waiting for the files to match the approved manifest (generation ${gen}): ${why}`;

  it('each way a live file can differ from the manifest, with its reason', async () => {
    const cases: [string, (f: Fixture) => void, string][] = [
      ['same size, other bytes', (f) => f.put('config/conditions.toml', CONDITIONS.replace('deny', 'DENY')), 'config/conditions.toml does not hold the approved content'],
      ['other size', (f) => f.put('config/conditions.toml', `${CONDITIONS}# more\n`), 'config/conditions.toml is not readable or not its approved size'],
      ['other mode', (f) => chmodSync(join(f.root, 'config/credentials.toml'), 0o640), 'config/credentials.toml has mode 640, not the approved 600'],
      ['missing', (f) => unlinkSync(join(f.root, 'config/guests.toml')), 'config/guests.toml is missing or not a regular file'],
      ['a symlink to the right bytes', (f) => { writeFileSync(join(f.base, 'g.toml'), GUESTS); unlinkSync(join(f.root, 'config/guests.toml')); symlinkSync(join(f.base, 'g.toml'), join(f.root, 'config/guests.toml')); }, 'config/guests.toml is missing or not a regular file'],
      ['its directory a symlink', (f) => { renameSync(join(f.root, 'config'), join(f.base, 'config')); symlinkSync(join(f.base, 'config'), join(f.root, 'config')); }, 'config/conditions.toml cannot be reached (ENOTDIR)'],
    ];
    for (const [what, edit, why] of cases) {
      const f = fixture();
      f.publish();
      edit(f);
      const v = f.open();
      assert.equal(v.current().ok, false, what);
      assert.equal(v.current().reason, waiting(1, why), what);
      await closeAll(f);
    }
  });

  it('a manifest claiming more than 64 MiB is refused without reading', async () => {
    const f = fixture();
    const files = { 'config/conditions.toml': { kind: 'conditions', sha256: sha(CONDITIONS), size: 64 * 1024 * 1024 + 1, mode: 0o644 } } as RuntimeManifest['files'];
    f.publish({}, files);
    const v = f.open();
    assert.equal(v.current().reason, waiting(1, 'config/conditions.toml is too large'));
    assert.equal(v.stats().fileReads, 1);
    await closeAll(f);
  });

  it('after adoption: a newer manifest the files do not match yet keeps the last approved state, then adopts when they match', async () => {
    const f = fixture();
    f.publish();
    const v = f.open();
    await v.ready();
    const next = CONDITIONS.replace('/secret/', '/hidden/');
    f.files['config/conditions.toml'] = { kind: 'conditions', text: next, mode: 0o644 };
    f.generation = 2;
    f.publish(); // the manifest first: the file is still the old one
    const deadline = Date.now() + 5000;
    while (v.stats().checks < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(v.current().ok, true, 'the last approved state is kept');
    assert.equal(v.current().generation, 1);
    f.put('config/conditions.toml', next); // the file arrives: a root event while a manifest waits
    const s = await until(v, (x) => x.generation === 2, 'generation 2 once its file matches');
    assert.equal(s.files['config/conditions.toml'], sha(next));
    await closeAll(f);
  });

  it('the manifest removed after adoption: closed at once; put back: the held bytes serve it without a read', async () => {
    const f = fixture();
    f.publish();
    const v = f.open();
    await v.ready();
    const reads = v.stats().fileReads;
    renameSync(f.manifest, `${f.manifest}.away`);
    const closed = await until(v, (x) => !x.ok, 'closed');
    assert.equal(closed.reason, `no manifest at ${f.manifest} (is warden running for this root?)`);
    assert.deepEqual(closed.credentials, {});
    renameSync(`${f.manifest}.away`, f.manifest);
    const back = await until(v, (x) => x.ok, 'ok again');
    assert.equal(back.generation, 1);
    assert.equal(v.stats().fileReads, reads, 'recovered from the bytes it held');
    await closeAll(f);
  });

  it('a closed view that sees the same failure again emits one change, not one per look', async () => {
    const f = fixture();
    f.publish();
    const v = f.open();
    await v.ready();
    const events: ApprovedState[] = [];
    v.on('change', (s) => events.push(s));
    writeFileSync(f.manifest, 'not json');
    await until(v, (x) => !x.ok, 'closed');
    const n = v.stats().checks;
    const deadline = Date.now() + 5000;
    while (v.stats().checks < n + 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10)); // the retry looks again
    assert.ok(v.stats().checks >= n + 2, 'the retry kept looking');
    assert.equal(events.length, 1, `one change event: ${events.map((e) => e.reason).join(' | ')}`);
    await closeAll(f);
  });

  it('close() stops everything: no change after it', async () => {
    const f = fixture();
    f.publish();
    const v = f.open();
    await v.ready();
    await v.close();
    const checks = v.stats().checks;
    f.generation = 2;
    f.publish();
    // An absence has no condition to wait for: a window in which the rename's event would
    // have been delivered to an open view (the tests above see it within a few ms).
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(v.stats().checks, checks);
    assert.equal(v.current().generation, 1);
  });
});

describe('which watch channel sees what, and the stamp recheck for what no watch reports', () => {
  /** A fixed mtime (whole seconds: Node sets times as a double, so only a round value is put back exactly). */
  const T = 1_700_000_000;
  /** The manifest of the next generation written in place: same inode, same size, mtime put back, atime after it. */
  const rewriteKeepingMtime = (f: Fixture) => {
    f.generation = 2; // one digit, as generation 1: the same size
    const bytes = f.manifestBytes();
    const fd = openSync(f.manifest, 'r+');
    try {
      assert.equal(fstatSync(fd).size, bytes.length, 'the same size');
      ftruncateSync(fd, 0);
      writeSync(fd, bytes, 0, bytes.length, 0);
      futimesSync(fd, Date.now() / 1000, T);
    } finally { closeSync(fd); }
  };
  /** Wait with a real timer (some tests mock setTimeout). */
  const untilReal = (v: ApprovedView, ok: (s: ApprovedState) => boolean, what: string, ms = 5000): Promise<void> => new Promise((resolve, reject) => {
    const t0 = Date.now();
    const poll = () => { if (ok(v.current())) resolve(); else if (Date.now() - t0 > ms) reject(new Error(`timed out after ${ms} ms waiting for ${what}; state: ${JSON.stringify({ ok: v.current().ok, reason: v.current().reason, generation: v.current().generation })}`)); else realSetTimeout(poll, 5); };
    poll();
  });
  const pause = (ms: number) => new Promise((r) => realSetTimeout(r, ms));
  /** ready(), and the look it schedules once armed done (else that look, not the event under test, would see the edit). */
  const settled = async (v: ApprovedView) => {
    await v.ready();
    const t0 = Date.now();
    while (v.stats().checks < 2 && Date.now() - t0 < 5000) await pause(5);
    assert.ok(v.stats().checks >= 2, 'the look after arming was made');
  };

  it('polling: an in-place rewrite that keeps size and mtime is missed by the watch and found by the stamp recheck (ctime)', async () => {
    const f = fixture();
    f.publish();
    utimesSync(f.manifest, T, T);
    const blind = f.open(0, true); // no recheck: only the polling watch
    const rechecked = f.open(100, true);
    await settled(blind); await settled(rechecked);
    assert.equal(blind.current().generation, 1);
    rewriteKeepingMtime(f);
    await untilReal(rechecked, (s) => s.generation === 2, 'the recheck to adopt generation 2');
    // The control: the same watch without the recheck never hears of it (an inotify watch
    // would: its raw event arrives within milliseconds; a poll every 100 ms compares mtime).
    await pause(400);
    assert.equal(blind.current().generation, 1, 'a polling watch alone misses the edit: the recheck is what found it');
    await closeAll(f);
  });

  it('inotify: the same rewrite is reported by the raw event only (chokidar\'s change event compares mtime)', async () => {
    const f = fixture();
    f.publish();
    utimesSync(f.manifest, T, T);
    const v = f.open(0, false);
    await settled(v);
    rewriteKeepingMtime(f);
    await untilReal(v, (s) => s.generation === 2, 'generation 2 from the raw event');
    await closeAll(f);
  });

  it('polling: a manifest published by rename is reported by chokidar\'s events only (a polled raw event names no watched path)', async () => {
    const f = fixture();
    f.publish();
    const v = f.open(0, true);
    await settled(v);
    f.generation = 2;
    f.publish();
    await untilReal(v, (s) => s.generation === 2, 'generation 2 from the change event');
    await closeAll(f);
  });

  for (const [path, kind, a, b] of [
    ['config/guests.toml', 'guests', GUESTS, GUESTS.replace('public', 'other')],
    ['orgs/acme.toml', 'org', '# acme\n', '# acme, renamed\n'],
    ['blocks/conditional/note.md', 'block', 'one\n', 'two, longer\n'],
  ] as const) {
    it(`a file of ${path.split('/').slice(0, -1).join('/')}/ arriving while a newer manifest waits is looked at on its own event (the retry held still)`, async () => {
      const f = fixture();
      f.files[path] = { kind, text: a, mode: 0o644 };
      f.put(path, a);
      f.publish();
      const v = f.open(0);
      await settled(v);
      assert.equal(v.current().ok, true, String(v.current().reason));
      mock.timers.enable({ apis: ['setTimeout'] }); // the retry's timer never fires
      try {
        const checks = v.stats().checks;
        f.files[path] = { kind, text: b, mode: 0o644 };
        f.generation = 2;
        f.publish(); // the manifest first: the view waits for the file
        const t0 = Date.now();
        while (v.stats().checks === checks && Date.now() - t0 < 5000) await pause(5);
        assert.ok(v.stats().checks > checks, 'the manifest was looked at');
        assert.equal(v.current().generation, 1, 'the last approved state is kept while the file differs');
        f.put(path, b);
        await untilReal(v, (s) => s.generation === 2, `generation 2 once ${path} matches, from that file's event`);
      } finally { mock.timers.reset(); }
      await closeAll(f);
    });
  }
});

describe('a large policy replacing an adopted one is built off the loop', () => {
  it('built on the builder thread, adopted when built; current() stays the last state until then', async () => {
    const f = fixture();
    f.publish();
    const v = f.open();
    await v.ready();
    const rules = Array.from({ length: 400 }, (_, i) => `[workspace."/team-${i}/"]\nwhen = "discord:dm"\naction = "deny"\n`).join('\n');
    assert.ok(rules.length >= 16 * 1024);
    f.files['config/conditions.toml'] = { kind: 'conditions', text: rules, mode: 0o644 };
    f.put('config/conditions.toml', rules);
    f.generation = 2;
    f.publish();
    const s = await until(v, (x) => x.generation === 2, 'generation 2', 10_000);
    assert.equal(s.files['config/conditions.toml'], sha(rules));
    assert.equal(v.stats().builtOffLoop, 1);
    assert.equal(canRead(s.policy, '1', { kind: 'dm', channel: '1' }, '/workspace/team-3/x'), false);
    await closeAll(f);
  });

  it('a builder thread that dies mid-build: that generation is built on the loop instead (never left behind)', async () => {
    const f = fixture();
    const rules = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `[workspace."/${tag}-${i}/"]\nwhen = "discord:dm"\naction = "deny"\n`).join('\n');
    const first = rules(400, 'team');
    f.files['config/conditions.toml'] = { kind: 'conditions', text: first, mode: 0o644 };
    f.put('config/conditions.toml', first);
    f.publish();
    const v = f.open();
    await v.ready();
    assert.equal(v.current().ok, true);
    // White-box, the one way to make the thread die in-process: the view's builder (started
    // with the first large state) is terminated while it builds generation 2.
    const inner = v as unknown as { builder: { terminate(): Promise<number> } | null; building: unknown };
    assert.ok(inner.builder, 'a large first state starts the builder');
    const next = rules(3000, 'crew');
    f.files['config/conditions.toml'] = { kind: 'conditions', text: next, mode: 0o644 };
    f.put('config/conditions.toml', next);
    f.generation = 2;
    f.publish();
    const t0 = Date.now();
    while (!inner.building && v.current().generation === 1 && Date.now() - t0 < 5000) await new Promise((r) => setImmediate(r));
    assert.ok(inner.building, 'generation 2 was handed to the builder');
    void inner.builder?.terminate();
    const s = await until(v, (x) => x.generation === 2, 'generation 2 built on the loop after the builder died', 10_000);
    assert.equal(v.stats().builtOffLoop, 0, 'not built by the thread');
    assert.equal(canRead(s.policy, '1', { kind: 'dm', channel: '1' }, '/workspace/crew-7/x'), false);
    assert.equal(s.files['config/conditions.toml'], sha(next));
    await closeAll(f);
  });

  it('the first state is built on the loop even when large (usable at once)', async () => {
    const f = fixture();
    const rules = Array.from({ length: 400 }, (_, i) => `[workspace."/team-${i}/"]\nwhen = "discord:dm"\naction = "deny"\n`).join('\n');
    f.files['config/conditions.toml'] = { kind: 'conditions', text: rules, mode: 0o644 };
    f.put('config/conditions.toml', rules);
    f.publish();
    const v = f.open();
    assert.equal(v.current().ok, true);
    assert.equal(v.stats().builtOffLoop, 0);
    await closeAll(f);
  });
});

describe('where the manifest is looked for, and how it is read', () => {
  it('explicit option, then $WARDEN_MANIFEST (relative resolved), else the session location', () => {
    const dirs = { runtimeDir: '/nonexistent/run', stateDir: '/nonexistent/state' };
    assert.deepEqual(locateManifest('/r', { manifest: '/m.json', deployment: dirs }, {}), { path: '/m.json', setup: 'explicit', deploymentExpected: false });
    assert.deepEqual(locateManifest('/r', { deployment: dirs }, { WARDEN_MANIFEST: 'rel/m.json' }), { path: join(process.cwd(), 'rel/m.json'), setup: 'explicit', deploymentExpected: false });
    const s = locateManifest('/r', { deployment: dirs }, {});
    assert.equal(s.setup, 'session');
    assert.equal(s.deploymentExpected, false);
  });

  it('with the deployment installed, an explicit path still knows the deployment is expected', () => {
    const base = mkdtempSync(join(tmpdir(), 'warden-io-loc-'));
    temps.push(base);
    mkdirSync(join(base, 'run')); mkdirSync(join(base, 'state'));
    const dirs = { runtimeDir: join(base, 'run'), stateDir: join(base, 'state') };
    const d = locateManifest('/r', { deployment: dirs }, {});
    assert.equal(d.setup, 'deployment');
    assert.equal(d.deploymentExpected, true);
    assert.ok(d.path.startsWith(join(base, 'run')), d.path);
    assert.deepEqual(locateManifest('/r', { manifest: '/m.json', deployment: dirs }, {}), { path: '/m.json', setup: 'explicit', deploymentExpected: true });
    const missing = readManifestFile({ path: join(base, 'none.json'), setup: 'deployment', deploymentExpected: true });
    assert.deepEqual(missing, { ok: false, reason: `no manifest at ${join(base, 'none.json')} (the deployment is installed: is warden-guard running?)` });
  });

  it('reads the exact bytes of a regular file; an unreadable one gives its errno', () => {
    const base = mkdtempSync(join(tmpdir(), 'warden-io-loc-'));
    temps.push(base);
    const p = join(base, 'm.json');
    writeFileSync(p, '{"x": 1}\n');
    const r = readManifestFile({ path: p, setup: 'explicit', deploymentExpected: false });
    assert.ok(r.ok);
    assert.equal(r.raw.toString(), '{"x": 1}\n');
    writeFileSync(p, '');
    const e = readManifestFile({ path: p, setup: 'explicit', deploymentExpected: false });
    assert.ok(e.ok);
    assert.equal(e.raw.length, 0);
    const notDir = readManifestFile({ path: join(p, 'below'), setup: 'explicit', deploymentExpected: false });
    assert.deepEqual(notDir, { ok: false, reason: `cannot read the manifest ${join(p, 'below')}: ENOTDIR` });
  });
});

describe('the sandbox probe never follows a link', () => {
  it('dir, file, symlink (with its target), nothing for a FIFO or a missing path', () => {
    const base = mkdtempSync(join(tmpdir(), 'warden-io-probe-'));
    temps.push(base);
    mkdirSync(join(base, 'd'));
    writeFileSync(join(base, 'f'), 'x');
    symlinkSync('/etc', join(base, 'l'));
    execFileSync('mkfifo', [join(base, 'p')]);
    assert.deepEqual(lstatProbe(join(base, 'd')), { kind: 'dir' });
    assert.deepEqual(lstatProbe(join(base, 'f')), { kind: 'file' });
    assert.deepEqual(lstatProbe(join(base, 'l')), { kind: 'symlink', target: '/etc' });
    assert.equal(lstatProbe(join(base, 'p')), null);
    assert.equal(lstatProbe(join(base, 'missing')), null);
    const fd = openSync(join(base, 'f'), 'r'); closeSync(fd);
  });
});
