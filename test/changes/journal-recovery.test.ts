/**
 * The intent journal against a real store (fast tier): manifests written the way a crash
 * leaves them (writeIntent, then none, some or all of the files replaced, with or without the
 * baseline commit), recovered in-process: rolled back, rolled forward, or refused as forged
 * or replayed, with the alerts and the files and baseline each outcome must leave.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { recoverJournal, removeIntent, writeIntent, type Intent, type JournalFile } from '../../src/changes/journal.js';
import { sha256Hex } from '../../src/store/baseline.js';
import { hmacHex } from '../../src/store/keys.js';
import type { Alert } from '../../src/store/alert-types.js';
import type { TestRoot } from '../helpers/root.js';
import { roots, text, writer, modeOf } from './in-process-root.js';

const R = roots();
after(() => R.cleanup());

const ORG = 'orgs/bookclub.toml';
const GUESTS = 'config/guests.toml';
const CRED = 'config/credentials.toml';

interface Planned { t: TestRoot; intent: Intent; old: Record<string, Buffer | null>; neu: Record<string, Buffer | null>; gen: number }

/** An initialised root and an intent (written) changing `paths` to new content (null: removed). */
async function planned(changes: Record<string, string | null>, opts: { mode?: number; commit?: boolean; id?: string; bump?: number } = {}): Promise<Planned> {
  const t = await R.init();
  const w = writer(t, { prepare: false });
  try {
    const { state, store } = w.loaded;
    // Earlier changes of another file: the baseline's generation moves on.
    for (let i = 0; i < (opts.bump ?? 0); i++) {
      const e = state.entry('config/conditions.toml')!;
      state.commit(store.fd, [{ path: 'config/conditions.toml', kind: e.kind, bytes: Buffer.concat([state.bytesOf(store.fd, 'config/conditions.toml')!, Buffer.from(`# ${i}\n`)]), mode: e.mode, uid: e.uid, gid: e.gid }]);
    }
    const gen = state.index.generation;
    const blobs = new Map<string, Buffer>();
    const old: Record<string, Buffer | null> = {};
    const neu: Record<string, Buffer | null> = {};
    const files: JournalFile[] = Object.entries(changes).map(([path, next]) => {
      const e = state.entry(path);
      const o = e ? state.bytesOf(store.fd, path) : null;
      const n = next === null ? null : Buffer.from(next);
      old[path] = o; neu[path] = n;
      if (o) blobs.set(sha256Hex(o), o);
      if (n) blobs.set(sha256Hex(n), n);
      return { path, kind: e?.kind ?? 'org', mode: opts.mode ?? e?.mode ?? 0o644, uid: e?.uid ?? 0, gid: e?.gid ?? 0, old: o ? sha256Hex(o) : null, new: n ? sha256Hex(n) : null };
    });
    const intent: Intent = { version: 2, id: opts.id ?? 'abc123def456', created: '2026-12-01T10:00:00.000Z', command: 'cred rotate discord', user: 'tester', generation: gen, files };
    writeIntent(store.fd, w.env.key, intent, blobs);
    if (opts.commit) state.commit(store.fd, files.map((f) => ({ path: f.path, kind: f.kind, bytes: neu[f.path] ?? null, mode: f.mode, uid: f.uid, gid: f.gid })));
    return { t, intent, old, neu, gen };
  } finally { w.close(); }
}

function put(t: TestRoot, path: string, b: Buffer | null): void {
  if (b === null) rmSync(t.p(path), { force: true }); else writeFileSync(t.p(path), b);
}

/** Recover in a fresh writer (the next start), as prepareWriter does first. */
function recover(t: TestRoot) {
  const w = writer(t, { prepare: false });
  try {
    const alerts: Alert[] = [];
    // Synchronous from here to the count after: no other work of the process opens or closes a descriptor meanwhile.
    const fds = readdirSync('/proc/self/fd').length;
    const r = recoverJournal(w.loaded.rootFd, w.loaded.store, w.loaded.state, w.loaded.config, w.env.key, (a) => alerts.push(a));
    assert.equal(readdirSync('/proc/self/fd').length, fds, 'recovery leaves no descriptor open');
    return { r, alerts, gen: w.loaded.state.index.generation, sha: (p: string) => w.loaded.state.entry(p)?.sha256 ?? null, mode: (p: string) => w.loaded.state.entry(p)?.mode ?? null };
  } finally { w.close(); }
}

const journalDir = (t: TestRoot) => t.p('snapshots/journal');
const sha = (b: Buffer | null) => (b ? sha256Hex(b) : null);

describe('writeIntent', () => {
  it('writes every blob and then the authenticated manifest, all 0600, blobs named by their hash', async () => {
    const p = await planned({ [ORG]: 'members = []\nchannels = []\nfolders = []\ncommands = []\nhourly_cap = 1\n' });
    const names = readdirSync(journalDir(p.t)).sort();
    const f = p.intent.files[0]!;
    assert.deepEqual(names, [`${f.new}.blob`, `${f.old}.blob`, 'intent'].sort());
    for (const n of names) assert.equal(modeOf(join(journalDir(p.t), n)), 0o600, n);
    assert.deepEqual(readFileSync(join(journalDir(p.t), `${f.new}.blob`)), p.neu[ORG]);
    const raw = readFileSync(join(journalDir(p.t), 'intent'));
    const nl = raw.indexOf(0x0a);
    const body = raw.subarray(nl + 1);
    const w = writer(p.t, { prepare: false });
    try { assert.equal(raw.subarray(0, nl).toString(), `warden-intent 1 hmac-sha256=${hmacHex(w.env.key, body)}`); } finally { w.close(); }
    assert.deepEqual(JSON.parse(body.toString()), p.intent);
    assert.equal(statSync(journalDir(p.t)).mode & 0o777, 0o700);
  });
  it('replaces a blob left altered by an earlier attempt, keeps an intact one', async () => {
    const p = await planned({ [ORG]: 'x = 1\n' });
    const f = p.intent.files[0]!;
    const blobNew = join(journalDir(p.t), `${f.new}.blob`);
    writeFileSync(blobNew, 'garbage');
    const w = writer(p.t, { prepare: false });
    try {
      writeIntent(w.loaded.store.fd, w.env.key, p.intent, new Map([[f.new!, p.neu[ORG]!], [f.old!, p.old[ORG]!]]));
    } finally { w.close(); }
    assert.deepEqual(readFileSync(blobNew), p.neu[ORG]);
    assert.equal(modeOf(blobNew), 0o600);
  });
  it('removeIntent removes the manifest, its blobs and stray files, and keeps the directory', async () => {
    const p = await planned({ [ORG]: 'x = 1\n' });
    writeFileSync(join(journalDir(p.t), 'intent.tmp-1'), 'stray');
    const w = writer(p.t, { prepare: false });
    try { removeIntent(w.loaded.store.fd); removeIntent(w.loaded.store.fd); } finally { w.close(); }
    assert.deepEqual(readdirSync(journalDir(p.t)), []);
  });
});

describe('recovery', () => {
  it('no manifest: nothing to recover (null); stray files of an unfinished write are cleared', async () => {
    const t = await R.init();
    mkdirSync(journalDir(t), { recursive: true });
    writeFileSync(join(journalDir(t), 'deadbeef.blob'), 'left over');
    const { r, alerts } = recover(t);
    assert.equal(r, null);
    assert.deepEqual(alerts, []);
    assert.deepEqual(readdirSync(journalDir(t)), []);
  });

  it('no journal directory at all: nothing to recover, nothing reported', async () => {
    const t = await R.init();
    rmSync(journalDir(t), { recursive: true, force: true });
    const { r, alerts } = recover(t);
    assert.equal(r, null);
    assert.deepEqual(alerts, []);
  });

  it('interrupted after the first of two files: rolled back, both as approved before, baseline unchanged, one reverted alert per file', async () => {
    const next = { [ORG]: text(join(process.cwd(), 'test/fixtures/example-root', ORG)).replace('hourly_cap = 20', 'hourly_cap = 7'), [GUESTS]: 'channels = []\nfolders = []\n' };
    const p = await planned(next);
    put(p.t, ORG, p.neu[ORG]!); // file 1 replaced, file 2 not
    const { r, alerts, gen, sha: approved } = recover(p.t);
    assert.equal(r?.outcome, 'rolled-back');
    assert.equal(r?.id, 'abc123def456');
    assert.deepEqual(r?.paths, [ORG, GUESTS]);
    assert.deepEqual(r?.changes, [], 'the baseline already approved the old content');
    assert.equal(gen, p.gen);
    assert.deepEqual(readFileSync(p.t.p(ORG)), p.old[ORG]);
    assert.deepEqual(readFileSync(p.t.p(GUESTS)), p.old[GUESTS]);
    assert.equal(approved(ORG), sha(p.old[ORG]!));
    assert.equal(alerts.length, 2);
    for (const [i, a] of alerts.entries()) {
      const path = [ORG, GUESTS][i]!;
      assert.equal(a.path, path);
      assert.equal(a.reason, 'half-applied');
      assert.equal(a.action, 'reverted');
      assert.deepEqual(a.before, { sha256: sha(p.old[path]!), size: p.old[path]!.length, mode: p.intent.files[i]!.mode });
      assert.equal(a.after, null);
      assert.equal(a.detail, `an interrupted change of ${ORG}, ${GUESTS} ('warden cred rotate discord' by tester, 2026-12-01T10:00:00.000Z) was found; rolled back to the content approved before it`);
      assert.equal(a.advice, `Nothing was changed. Run the change again (e.g. 'warden cred rotate GROUP') once the cause of the interruption is gone.`);
      assert.equal(a.credential_changes, undefined);
    }
    assert.deepEqual(readdirSync(journalDir(p.t)), [], 'the journal is removed');
    // Idempotent: nothing left to recover.
    assert.equal(recover(p.t).r, null);
  });

  it('rolled back with the intent\'s mode, and a file the change removed comes back', async () => {
    const p = await planned({ [ORG]: null, [GUESTS]: 'channels = []\nfolders = []\n' }, { mode: 0o640 });
    rmSync(p.t.p(ORG)); // the removal happened, the edit did not
    const { r, alerts, gen } = recover(p.t);
    assert.equal(r?.outcome, 'rolled-back');
    assert.deepEqual(readFileSync(p.t.p(ORG)), p.old[ORG]);
    assert.equal(modeOf(p.t.p(ORG)), 0o640);
    assert.deepEqual(readFileSync(p.t.p(GUESTS)), p.old[GUESTS]);
    assert.equal(modeOf(p.t.p(GUESTS)), 0o644, 'a file already holding its target content is not rewritten');
    // The baseline's modes (0644) differ from the intent's: recorded as a change.
    assert.deepEqual(r?.changes.map((c) => [c.path, c.mode, sha(c.bytes)]), [[ORG, 0o640, sha(p.old[ORG]!)], [GUESTS, 0o640, sha(p.old[GUESTS]!)]]);
    assert.equal(gen, p.gen + 1);
    assert.equal(alerts.length, 2);
  });

  it('every file already new: rolled forward, the baseline committed once, flagged alerts', async () => {
    const p = await planned({ [ORG]: 'members = []\nchannels = []\nfolders = []\ncommands = []\nhourly_cap = 3\n', [GUESTS]: 'channels = []\nfolders = []\n' });
    put(p.t, ORG, p.neu[ORG]!); put(p.t, GUESTS, p.neu[GUESTS]!);
    const { r, alerts } = recover(p.t);
    assert.equal(r?.outcome, 'rolled-forward');
    assert.deepEqual(r?.changes.map((c) => [c.path, sha(c.bytes)]), [[ORG, sha(p.neu[ORG]!)], [GUESTS, sha(p.neu[GUESTS]!)]]);
    const after1 = recover(p.t);
    assert.equal(after1.r, null);
    assert.equal(after1.gen, p.gen + 1, 'one commit');
    assert.equal(after1.sha(ORG), sha(p.neu[ORG]!));
    assert.equal(after1.sha(GUESTS), sha(p.neu[GUESTS]!));
    for (const a of alerts) {
      assert.equal(a.action, 'flagged');
      assert.equal(a.reason, 'half-applied');
      assert.match(a.detail ?? '', /was found; every file already held the new content: completed \(rolled forward\)$/);
      assert.equal(a.advice, `Nothing to do: the change is complete. Check it with 'warden history ${a.path}'.`);
      assert.equal(a.before?.sha256, sha(p.neu[a.path]!));
    }
  });

  it('the baseline commit was durable, a file still old: rolled forward, the file written, no second commit', async () => {
    const p = await planned({ [ORG]: 'members = []\nchannels = []\nfolders = []\ncommands = []\nhourly_cap = 4\n', [GUESTS]: 'channels = []\nfolders = []\n' }, { commit: true });
    put(p.t, ORG, p.neu[ORG]!); // GUESTS still old on disk
    const { r, alerts, gen } = recover(p.t);
    assert.equal(r?.outcome, 'rolled-forward');
    assert.deepEqual(r?.changes, []);
    assert.equal(gen, p.gen + 1);
    assert.deepEqual(readFileSync(p.t.p(GUESTS)), p.neu[GUESTS]);
    assert.equal(recover(p.t).gen, p.gen + 1, 'never past +1');
    assert.ok(alerts.every((a) => a.action === 'flagged' && / the baseline already approved the new content: completed \(rolled forward\)$/.test(a.detail ?? '')), JSON.stringify(alerts.map((a) => a.detail)));
  });

  it('rolled forward removes a file the change removed', async () => {
    const p = await planned({ [ORG]: null, [GUESTS]: 'channels = []\nfolders = []\n' }, { commit: true });
    const { r } = recover(p.t);
    assert.equal(r?.outcome, 'rolled-forward');
    assert.equal(existsSync(p.t.p(ORG)), false);
    assert.deepEqual(readFileSync(p.t.p(GUESTS)), p.neu[GUESTS]);
  });

  it('a removed file whose directory is gone too counts as removed: rolled forward, nothing recreated', async () => {
    const p = await planned({ [ORG]: null, [GUESTS]: 'channels = []\nfolders = []\n' });
    rmSync(p.t.p('orgs'), { recursive: true });
    put(p.t, GUESTS, p.neu[GUESTS]!);
    const { r, gen } = recover(p.t);
    assert.equal(r?.outcome, 'rolled-forward');
    assert.equal(existsSync(p.t.p('orgs')), false);
    assert.equal(gen, p.gen + 1);
  });

  it('a credential file in the journal: its alert lists the credential changes (names, never values)', async () => {
    const cred = text(join(process.cwd(), 'test/fixtures/example-root', CRED)).replace('sk-ant-EXAMPLE-not-a-real-key', 'sk-ant-OTHER-value-0000');
    const p = await planned({ [CRED]: cred, [GUESTS]: 'channels = []\nfolders = []\n' });
    const { alerts } = recover(p.t);
    const a = alerts.find((x) => x.path === CRED);
    assert.ok(a?.credential_changes && a.credential_changes.length > 0, JSON.stringify(a));
    assert.ok(!JSON.stringify(alerts).includes('sk-ant-OTHER-value-0000'));
    assert.equal(alerts.find((x) => x.path === GUESTS)?.credential_changes, undefined);
  });

  it('a file at a journalled path over max_bytes, or a link: not the new content, rolled back', async () => {
    const p = await planned({ [ORG]: 'members = []\nchannels = []\nfolders = []\ncommands = []\nhourly_cap = 5\n', [GUESTS]: 'channels = []\nfolders = []\n' });
    writeFileSync(p.t.p(ORG), ''); truncateSync(p.t.p(ORG), 2 * 1048576);
    rmSync(p.t.p(GUESTS)); symlinkSync(join(p.t.outside, 'target.txt'), p.t.p(GUESTS));
    const { r } = recover(p.t);
    assert.equal(r?.outcome, 'rolled-back');
    assert.deepEqual(readFileSync(p.t.p(ORG)), p.old[ORG]);
    assert.deepEqual(readFileSync(p.t.p(GUESTS)), p.old[GUESTS]);
    assert.equal(text(join(p.t.outside, 'target.txt')), 'outside content\n', 'the link was replaced, not followed');
  });
});

describe('a manifest that must not be obeyed', () => {
  async function refused(mutate: (p: Planned) => void, opts: { bump?: number } = {}) {
    const p = await planned({ [ORG]: 'members = []\nchannels = []\nfolders = []\ncommands = []\nhourly_cap = 6\n', [GUESTS]: 'channels = []\nfolders = []\n' }, opts);
    put(p.t, ORG, p.neu[ORG]!);
    mutate(p);
    const before = readFileSync(p.t.p(ORG));
    const { r, alerts, gen } = recover(p.t);
    assert.deepEqual(r, { outcome: 'tampered', id: null, paths: [], changes: [] });
    assert.equal(gen, p.gen, 'the baseline is untouched');
    assert.deepEqual(readFileSync(p.t.p(ORG)), before, 'no file is touched');
    assert.equal(alerts.length, 1);
    const a = alerts[0]!;
    assert.equal(a.reason, 'baseline-tampered');
    assert.equal(a.action, 'flagged');
    assert.equal(a.path, 'snapshots/journal/intent');
    assert.equal(a.quarantine, `snapshots/quarantine/${a.id}/journal`);
    assert.ok(existsSync(join(p.t.p(a.quarantine!), 'intent')), 'the journal is kept in quarantine');
    assert.equal(existsSync(journalDir(p.t)), false, 'and is gone from the store');
    assert.equal(a.advice, `warden's store was edited outside warden; check who wrote to snapshots/. The protected files are kept as last approved.`);
    return a.detail;
  }
  const bodyOf = (p: Planned) => readFileSync(join(journalDir(p.t), 'intent'));
  function resign(p: Planned, edit: (i: Record<string, unknown>) => unknown) {
    const w = writer(p.t, { prepare: false });
    try {
      const raw = bodyOf(p);
      const body = Buffer.from(JSON.stringify(edit(JSON.parse(raw.subarray(raw.indexOf(0x0a) + 1).toString()))));
      writeFileSync(join(journalDir(p.t), 'intent'), Buffer.concat([Buffer.from(`warden-intent 1 hmac-sha256=${hmacHex(w.env.key, body)}\n`), body]));
    } finally { w.close(); }
  }

  it('an HMAC that does not verify', async () => {
    const d = await refused((p) => { const raw = bodyOf(p); writeFileSync(join(journalDir(p.t), 'intent'), Buffer.concat([raw, Buffer.from(' ')])); });
    assert.equal(d, 'an intent journal was found that warden did not write (its HMAC does not verify); it was moved into quarantine and not obeyed');
  });
  it('no header line at all', async () => {
    const d = await refused((p) => { writeFileSync(join(journalDir(p.t), 'intent'), JSON.stringify(p.intent)); });
    assert.match(d ?? '', /\(its HMAC does not verify\)/);
  });
  it('a header that is not warden\'s', async () => {
    const d = await refused((p) => { const raw = bodyOf(p); writeFileSync(join(journalDir(p.t), 'intent'), Buffer.concat([Buffer.from('warden-intent 2 '), raw])); });
    assert.match(d ?? '', /\(its HMAC does not verify\)/);
  });
  it('an authentic body that is not JSON', async () => {
    const d = await refused((p) => {
      const w = writer(p.t, { prepare: false });
      try { const body = Buffer.from('{not json'); writeFileSync(join(journalDir(p.t), 'intent'), Buffer.concat([Buffer.from(`warden-intent 1 hmac-sha256=${hmacHex(w.env.key, body)}\n`), body])); } finally { w.close(); }
    });
    assert.match(d ?? '', /\(its body is malformed\)/);
  });
  it('an authentic body whose files are not a list of files is malformed, never thrown on', async () => {
    for (const files of [5, null, 'x', [null], [{ path: 7, old: null, new: null }], [{ path: 'a', old: 5, new: null }]]) {
      const d = await refused((p) => resign(p, (i) => ({ ...i, files })));
      assert.match(d ?? '', /\(its body is malformed\)/, JSON.stringify(files));
    }
  });
  it('a blob missing, or altered', async () => {
    const d = await refused((p) => { rmSync(join(journalDir(p.t), `${p.intent.files[1]!.new}.blob`)); });
    assert.match(d ?? '', new RegExp(`\\(the blob for ${GUESTS} is missing or altered\\)`));
    const d2 = await refused((p) => { writeFileSync(join(journalDir(p.t), `${p.intent.files[0]!.old}.blob`), 'altered'); });
    assert.match(d2 ?? '', new RegExp(`\\(the blob for ${ORG} is missing or altered\\)`));
  });
  it('a manifest that is not a regular file', async () => {
    const d = await refused((p) => { rmSync(join(journalDir(p.t), 'intent')); mkdirSync(join(journalDir(p.t), 'intent')); });
    assert.match(d ?? '', /^an intent journal was found that warden did not write \(the manifest is not a regular file \(E[A-Z]+\)\)/);
  });
  it('a replay of a transaction two generations back', async () => {
    const d = await refused((p) => resign(p, (i) => ({ ...i, generation: p.gen - 2 })), { bump: 2 });
    assert.equal(d, 'an intent journal was found that does not belong to the current baseline (it was written at baseline generation 1, and the baseline is at generation 3): a replay of an earlier transaction; it was moved into quarantine and not obeyed');
  });
  it('a manifest naming a generation the baseline has not reached', async () => {
    const d = await refused((p) => resign(p, (i) => ({ ...i, generation: p.gen + 1 })));
    assert.match(d ?? '', /\(it was written at baseline generation 2, and the baseline is at generation 1\)/);
  });
  it('one generation back (the transaction\'s own commit) is obeyed', async () => {
    const p = await planned({ [ORG]: 'members = []\nchannels = []\nfolders = []\ncommands = []\nhourly_cap = 8\n', [GUESTS]: 'channels = []\nfolders = []\n' }, { bump: 1 });
    resign(p, (i) => ({ ...i, generation: p.gen - 1 }));
    const { r } = recover(p.t);
    assert.equal(r?.outcome, 'rolled-back');
  });
  it('a replay whose approved content is neither its old nor its new', async () => {
    const d = await refused((p) => {
      // The baseline moved on (one commit, so the generation alone still fits).
      const w = writer(p.t, { prepare: false });
      try { const e = w.loaded.state.entry(GUESTS)!; w.loaded.state.commit(w.loaded.store.fd, [{ path: GUESTS, kind: e.kind, bytes: Buffer.from('channels = ["1"]\nfolders = []\n'), mode: e.mode, uid: e.uid, gid: e.gid }]); } finally { w.close(); }
      p.gen += 1;
    });
    assert.match(d ?? '', new RegExp(`\\(the approved content of ${GUESTS} is neither the transaction's old nor its new content\\)`));
  });
  it('an old manifest version, or no generation', async () => {
    const d = await refused((p) => resign(p, (i) => ({ ...i, version: 1 })));
    assert.match(d ?? '', /\(it names no baseline generation\)/);
    const d2 = await refused((p) => resign(p, (i) => { const { generation: _g, ...rest } = i; return rest; }));
    assert.match(d2 ?? '', /\(it names no baseline generation\)/);
  });
});

describe('a writer start', () => {
  it('recovers first and records the recovery in history', async () => {
    const p = await planned({ [ORG]: 'members = []\nchannels = []\nfolders = []\ncommands = []\nhourly_cap = 9\n', [GUESTS]: 'channels = []\nfolders = []\n' });
    put(p.t, ORG, p.neu[ORG]!); put(p.t, GUESTS, p.neu[GUESTS]!);
    const { waitFor } = await import('../helpers/wait-for.js');
    const { spawnSync } = await import('node:child_process');
    const subject = () => spawnSync('git', ['-C', p.t.p('snapshots/history'), 'log', '-1', '--format=%B'], { encoding: 'utf8' }).stdout;
    const w = writer(p.t);
    try {
      assert.deepEqual(w.alerts.map((a) => [a.reason, a.path]), [['half-applied', ORG], ['half-applied', GUESTS]]);
      assert.equal(w.loaded.state.entry(ORG)?.sha256, sha(p.neu[ORG]!));
      // Recorded in the background while the writer holds the store.
      await waitFor(() => subject().includes(`command: warden recover rolled-forward ${ORG} ${GUESTS}\nuser: warden\n`), 20_000, 'the recovery commit in history');
    } finally { w.close(); }
  });
});
