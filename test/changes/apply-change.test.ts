/**
 * Applying a sanctioned change against a real root (fast tier, approval "none"): what the
 * reply says, what is written (content, mode, baseline, history), and every refusal with its
 * exact message and located errors, changing nothing.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyChanges, checkBase, checkChanges, currentBase, StaleError } from '../../src/changes/apply.js';
import { sha256Hex } from '../../src/store/baseline.js';
import { WardenError } from '../../src/common/errors.js';
import { treeSnapshot, type TestRoot } from '../helpers/root.js';
import { b64, modeOf, op, roots, text, TEST_WARDEN_TOML, writer } from './in-process-root.js';

const R = roots();
after(() => R.cleanup());

const ORG = 'orgs/bookclub.toml';
const GUESTS = 'config/guests.toml';
const CRED = 'config/credentials.toml';
const PROTECTED = 'is not a protected path (protected are config/{warden,conditions,guests,credentials}.toml, orgs/*.toml, blocks/conditional/*.md and the [[protect]] entries of config/warden.toml)';

const orgWith = (t: TestRoot, cap: number) => text(t.p(ORG)).replace(/hourly_cap = \d+/, `hourly_cap = ${cap}`);
const propose = (t: TestRoot, changes: { path: string; content_b64: string | null; keep?: boolean; mode?: number }[], extra: Record<string, unknown> = {}) =>
  op(t, { action: 'propose', changes, command: 'apply', ...extra } as never);
const headOf = (t: TestRoot) => spawnSync('git', ['-C', t.p('snapshots/history'), 'log', '-1', '--format=%H %s'], { encoding: 'utf8' }).stdout.trim();
const approved = (t: TestRoot, path: string) => { const w = writer(t, { prepare: false }); try { return { e: w.loaded.state.entry(path) ?? null, gen: w.loaded.state.index.generation }; } finally { w.close(); } };

describe('apply (approval none)', () => {
  it('one file: baseline, then the file, then history; the reply names generation, paths, commit and the diff', async () => {
    const t = await R.init();
    const next = orgWith(t, 21);
    const { reply } = await propose(t, [{ path: ORG, content_b64: b64(next) }]);
    assert.equal(reply.ok, true, JSON.stringify(reply));
    assert.equal(reply.applied?.generation, 2);
    assert.deepEqual(reply.applied?.paths, [ORG]);
    const head = headOf(t);
    assert.equal(reply.applied?.commit, head.split(' ')[0]);
    assert.match(head, /apply/);
    assert.match(reply.summary ?? '', /- hourly_cap = 20\n {2}\+ hourly_cap = 21/);
    assert.equal(text(t.p(ORG)), next);
    assert.equal(modeOf(t.p(ORG)), 0o644, 'the approved mode is kept');
    const a = approved(t, ORG);
    assert.equal(a.e?.sha256, sha256Hex(Buffer.from(next)));
    assert.equal(a.gen, 2);
    assert.deepEqual(readdirSync(t.p('snapshots/journal')), [], 'one file never goes through the journal');
  });

  it('a mode change keeps the approved content ("keep") and sets the mode on disk and in the baseline', async () => {
    const t = await R.init();
    const before = readFileSync(t.p(ORG));
    const { reply } = await propose(t, [{ path: ORG, content_b64: null, keep: true, mode: 0o600 }]);
    assert.equal(reply.ok, true, JSON.stringify(reply));
    assert.deepEqual(readFileSync(t.p(ORG)), before);
    assert.equal(modeOf(t.p(ORG)), 0o600);
    assert.equal(approved(t, ORG).e?.mode, 0o600);
    assert.match(reply.summary ?? '', /0644/);
    assert.match(reply.summary ?? '', /0600/);
  });

  it('content and a new mode at once; a path given as ./path is the same path', async () => {
    const t = await R.init();
    const next = orgWith(t, 9);
    const { reply } = await propose(t, [{ path: `./${ORG}`, content_b64: b64(next), mode: 0o640 }]);
    assert.deepEqual(reply.applied?.paths, [ORG], JSON.stringify(reply));
    assert.equal(modeOf(t.p(ORG)), 0o640);
    assert.equal(text(t.p(ORG)), next);
  });

  it('several files: one baseline commit through the journal, the journal removed after', async () => {
    const t = await R.init();
    const guests = 'channels = []\nfolders = []\n';
    const { reply } = await propose(t, [{ path: ORG, content_b64: b64(orgWith(t, 5)) }, { path: GUESTS, content_b64: b64(guests) }]);
    assert.deepEqual(reply.applied, { generation: 2, paths: [ORG, GUESTS], commit: headOf(t).split(' ')[0] });
    assert.equal(text(t.p(GUESTS)), guests);
    assert.equal(text(t.p(ORG)), orgWith(t, 5));
    assert.deepEqual(readdirSync(t.p('snapshots/journal')), []);
    assert.equal(approved(t, GUESTS).e?.sha256, sha256Hex(Buffer.from(guests)));
  });

  it('removing an org: the file and its baseline entry go', async () => {
    const t = await R.init();
    const { reply } = await propose(t, [{ path: ORG, content_b64: null }]);
    assert.equal(reply.ok, true, JSON.stringify(reply));
    assert.equal(existsSync(t.p(ORG)), false);
    assert.equal(approved(t, ORG).e, null);
  });

  it('a new org file: created 0644 with its directory entry in the baseline', async () => {
    const t = await R.init();
    const org = 'members = ["777777777777777777"]\nchannels = []\nfolders = []\ncommands = []\nhourly_cap = 2\n';
    const { reply } = await propose(t, [{ path: 'orgs/chess.toml', content_b64: b64(org) }]);
    assert.equal(reply.ok, true, JSON.stringify(reply));
    assert.equal(text(t.p('orgs/chess.toml')), org);
    assert.equal(modeOf(t.p('orgs/chess.toml')), 0o644);
    assert.equal(approved(t, 'orgs/chess.toml').e?.kind, 'org');
  });

  it('a history that cannot record: the change stays applied, the reply says commit null', async () => {
    const t = await R.init();
    rmSync(t.p('snapshots/history'), { recursive: true, force: true });
    writeFileSync(t.p('snapshots/history'), 'not a repository');
    const { reply } = await propose(t, [{ path: ORG, content_b64: b64(orgWith(t, 3)) }]);
    assert.equal(reply.ok, true, JSON.stringify(reply));
    assert.equal(reply.applied?.commit, null);
    assert.equal(text(t.p(ORG)), orgWith(t, 3));
  });
});

describe('several files, new files, and the order of the request', () => {
  const NEWORG = 'members = ["777777777777777777"]\nchannels = []\nfolders = []\ncommands = []\nhourly_cap = 2\n';
  it('three files at once, one of them new: all written through the journal, the new one 0644 and in the baseline as an org', async () => {
    const t = await R.init();
    const guests = 'channels = []\nfolders = []\n';
    const { reply } = await propose(t, [{ path: ORG, content_b64: b64(orgWith(t, 7)) }, { path: 'orgs/chess.toml', content_b64: b64(NEWORG) }, { path: GUESTS, content_b64: b64(guests) }]);
    assert.deepEqual(reply.applied, { generation: 2, paths: [ORG, 'orgs/chess.toml', GUESTS], commit: headOf(t).split(' ')[0] }, JSON.stringify(reply));
    assert.equal(text(t.p('orgs/chess.toml')), NEWORG);
    assert.equal(modeOf(t.p('orgs/chess.toml')), 0o644);
    assert.equal(text(t.p(ORG)), orgWith(t, 7));
    assert.equal(text(t.p(GUESTS)), guests);
    const n = approved(t, 'orgs/chess.toml');
    assert.deepEqual([n.e?.kind, n.e?.sha256, n.e?.mode, n.gen], ['org', sha256Hex(Buffer.from(NEWORG)), 0o644, 2]);
    assert.equal(approved(t, GUESTS).e?.sha256, sha256Hex(Buffer.from(guests)));
    assert.ok(existsSync(join(t.p('snapshots/blobs'), sha256Hex(Buffer.from(NEWORG)))), 'the new file has its blob');
    assert.deepEqual(readdirSync(t.p('snapshots/journal')), []);
    const files = spawnSync('git', ['-C', t.p('snapshots/history'), 'show', '--name-only', '--format=', 'HEAD'], { encoding: 'utf8' }).stdout.trim().split('\n').sort();
    assert.ok(files.includes('orgs/chess.toml'), files.join());
  });

  it('a new credential file (listed in warden.toml, absent at init) is created 0600, stored in secrets/ (0600), never in blobs/', async () => {
    const NEWCRED = 'config/extra-cred.toml';
    const t = R.make({ wardenToml: TEST_WARDEN_TOML.replace('files = ["config/credentials.toml"]', `files = ["config/credentials.toml", "${NEWCRED}"]`) });
    const { initRoot } = await import('../../src/changes/init.js');
    await initRoot(t.root, { force: false });
    assert.equal(existsSync(t.p(NEWCRED)), false);
    const body = '[extra]\nkey = "value-new-cred-0001"\n';
    const sha = sha256Hex(Buffer.from(body));
    // Alone (no journal), then in a request of two (through the journal).
    const { reply } = await propose(t, [{ path: NEWCRED, content_b64: b64(body) }]);
    assert.equal(reply.ok, true, JSON.stringify(reply));
    assert.equal(text(t.p(NEWCRED)), body);
    assert.equal(modeOf(t.p(NEWCRED)), 0o600, 'a credential file is created owner-only');
    assert.deepEqual([approved(t, NEWCRED).e?.kind, approved(t, NEWCRED).e?.mode], ['credentials', 0o600]);
    assert.equal(modeOf(join(t.p('snapshots/secrets'), sha)), 0o600);
    assert.equal(existsSync(join(t.p('snapshots/blobs'), sha)), false);
    assert.ok(!text(t.p('snapshots/baseline/index')).includes('value-new-cred-0001'));
    const NEW2 = 'config/extra-cred2.toml';
    const t2 = R.make({ wardenToml: TEST_WARDEN_TOML.replace('files = ["config/credentials.toml"]', `files = ["config/credentials.toml", "${NEW2}"]`) });
    await initRoot(t2.root, { force: false });
    const r2 = await propose(t2, [{ path: ORG, content_b64: b64(orgWith(t2, 8)) }, { path: NEW2, content_b64: b64(body) }]);
    assert.equal(r2.reply.ok, true, JSON.stringify(r2.reply));
    assert.equal(modeOf(t2.p(NEW2)), 0o600, 'through the journal too');
    assert.equal(modeOf(join(t2.p('snapshots/secrets'), sha)), 0o600);
    assert.deepEqual(readdirSync(t2.p('snapshots/journal')), []);
  });

  it('warden.toml not first in the request: the new settings still load, and a newly protected file is adopted', async () => {
    const t = await R.init();
    mkdirSync(t.p('notes'));
    writeFileSync(t.p('notes/todo.md'), 'later\n', { mode: 0o640 });
    const protect = `${TEST_WARDEN_TOML}\n[[protect]]\npath = "notes/todo.md"\n`;
    const w = writer(t, { prepare: false });
    try {
      const r = applyChanges(w.env.ctx, [{ path: ORG, content: Buffer.from(orgWith(t, 11)) }, { path: GUESTS, content: Buffer.from('channels = []\nfolders = []\n') }, { path: 'config/warden.toml', content: Buffer.from(protect) }], 'apply', 'tester');
      assert.deepEqual(r.paths, [ORG, GUESTS, 'config/warden.toml', 'notes/todo.md']);
      assert.equal(r.newConfig?.protect[0]?.path, 'notes/todo.md');
      assert.equal(r.generation, 3);
      assert.deepEqual([w.loaded.state.entry('notes/todo.md')?.kind, w.loaded.state.entry('notes/todo.md')?.mode], ['text', 0o640]);
      assert.equal(text(t.p('config/warden.toml')), protect);
      assert.equal(text(t.p(ORG)), orgWith(t, 11));
      await r.history;
    } finally { w.close(); }
    assert.deepEqual(readdirSync(t.p('snapshots/journal')), []);
  });
});

describe('refusals change nothing', () => {
  async function refusal(t: TestRoot, changes: Parameters<typeof propose>[1], extra: Record<string, unknown> = {}) {
    const snap = treeSnapshot(t.root);
    const { reply } = await propose(t, changes, extra);
    assert.equal(reply.ok, false, JSON.stringify(reply));
    assert.deepEqual(treeSnapshot(t.root), snap, 'nothing on disk changed');
    return reply;
  }
  let t: TestRoot;
  it('setup', async () => { t = await R.init(); });

  it('a path that is not protected', async () => {
    const r = await refusal(t, [{ path: 'notes/x.toml', content_b64: b64('a = 1\n') }]);
    assert.equal(r.error, `notes/x.toml ${PROTECTED}`);
    assert.equal(r.exitCode, 2);
  });
  it('the same path twice', async () => {
    const r = await refusal(t, [{ path: ORG, content_b64: b64('a') }, { path: `./${ORG}`, content_b64: b64('b') }]);
    assert.equal(r.error, `${ORG} appears twice in one change`);
  });
  it('keep or remove a file the baseline does not have', async () => {
    assert.equal((await refusal(t, [{ path: 'orgs/new.toml', content_b64: null, keep: true, mode: 0o600 }])).error, 'orgs/new.toml is not in the baseline; give its content with --from');
    assert.equal((await refusal(t, [{ path: 'orgs/new.toml', content_b64: null }])).error, 'orgs/new.toml is not in the baseline; nothing to remove');
  });
  it('content over max_bytes', async () => {
    const r = await refusal(t, [{ path: ORG, content_b64: b64(Buffer.alloc(1048577, 0x61)) }]);
    assert.equal(r.error, `${ORG}: proposed content is 1048577 bytes, over max_bytes (1048576)`);
  });
  it('exactly max_bytes is not refused for its size', async () => {
    const r = await refusal(t, [{ path: ORG, content_b64: b64(Buffer.alloc(1048576, 0x61)) }]);
    assert.equal(r.error, 'refused: the proposed content is invalid; nothing was changed');
  });
  it('a mode that is not a plain file mode, and a removed file with a mode', async () => {
    assert.equal((await refusal(t, [{ path: ORG, content_b64: null, keep: true, mode: 0o4755 }])).error, `${ORG}: mode 2541 is not a file mode from 0000 to 0777 (no setuid, setgid or sticky bits)`);
    assert.equal((await refusal(t, [{ path: ORG, content_b64: null, keep: true, mode: -1 }])).error, `${ORG}: mode -1 is not a file mode from 0000 to 0777 (no setuid, setgid or sticky bits)`);
    assert.equal((await refusal(t, [{ path: ORG, content_b64: null, keep: true, mode: 1.5 }])).error, `${ORG}: mode 1.5 is not a file mode from 0000 to 0777 (no setuid, setgid or sticky bits)`);
    assert.equal((await refusal(t, [{ path: ORG, content_b64: null, mode: 0o600 }])).error, `${ORG}: a removed file has no mode`);
  });
  it('a name longer than a file system name', async () => {
    const long = `orgs/${'a'.repeat(300)}.toml`;
    const r = await refusal(t, [{ path: long, content_b64: b64('x') }]);
    assert.equal(r.error, `${long.slice(0, 80)}…: "${'a'.repeat(32)}…" is 305 bytes long; names warden protects may have at most ${r.error?.match(/at most (\d+)/)?.[1]} bytes (the file system allows 255, and warden's temp file adds its own); nothing was changed`);
  });
  it('invalid TOML: located errors (file, line), exit 1', async () => {
    const r = await refusal(t, [{ path: ORG, content_b64: b64('members = [\n') }]);
    assert.equal(r.error, 'refused: the proposed content is invalid; nothing was changed');
    assert.equal(r.exitCode, 1);
    assert.equal(r.details?.length, 1);
    assert.equal(r.details?.[0]?.file, ORG);
    assert.equal(typeof r.details?.[0]?.line, 'number');
  });
  it('a policy error in a valid TOML file is located too', async () => {
    const r = await refusal(t, [{ path: ORG, content_b64: b64(orgWith(t, 1).replace('hourly_cap = 1', 'hourly_cap = "many"')) }]);
    assert.ok(r.details?.some((d) => d.file === ORG && /hourly_cap/.test(`${d.key ?? ''} ${d.message}`)), JSON.stringify(r.details));
  });
  it('bytes that are not text', async () => {
    const r = await refusal(t, [{ path: ORG, content_b64: b64(Buffer.from([0x61, 0, 0x62])) }]);
    assert.deepEqual(r.details, [{ file: ORG, message: 'the proposed content is not text: it holds a NUL byte at byte 1 (a binary file?); a TOML file is UTF-8 text' }]);
    const c = await refusal(t, [{ path: CRED, content_b64: b64(Buffer.from([0xff, 0xfe])) }]);
    assert.deepEqual(c.details, [{ file: CRED, message: 'the proposed content is not text: it is not valid UTF-8 (at byte 0); a TOML file is UTF-8 text' }]);
  });
  it('a credential file that does not parse: located errors, never applied', async () => {
    const r = await refusal(t, [{ path: CRED, content_b64: b64('[discord]\ntoken = "abc\n') }]);
    assert.equal(r.error, 'refused: the proposed content is invalid; nothing was changed');
    assert.deepEqual(r.details, [{ file: CRED, line: 2, column: 13, message: 'control characters are not allowed in strings' }], 'the parse error itself, not a group rule on what parsed');
    assert.ok(!JSON.stringify(r).includes('abc'), 'no value in the reply');
  });
  it('a credential file or guests.toml removed', async () => {
    assert.deepEqual((await refusal(t, [{ path: CRED, content_b64: null }])).details, [{ file: CRED, message: 'a credential file is edited, never removed' }]);
    assert.deepEqual((await refusal(t, [{ path: GUESTS, content_b64: null }])).details, [{ file: GUESTS, message: 'only org, block and extra protected files can be removed; guests files are edited instead' }]);
  });
  it('a credential group whose check fails in the new state: located at the group key, no value shown', async () => {
    const cred = text(t.p(CRED)).replace('application_id = "111111111111111111"', 'application_id = "222222222222222229"');
    const r = await refusal(t, [{ path: CRED, content_b64: b64(cred) }], { command: 'cred set discord.application_id' });
    assert.equal(r.details?.length, 1, JSON.stringify(r.details));
    assert.equal(r.details?.[0]?.file, CRED);
    assert.equal(r.details?.[0]?.key, 'discord');
    assert.match(r.details?.[0]?.message ?? '', /discord-token/);
    assert.ok(!JSON.stringify(r).includes('222222222222222229'), 'no credential value in the reply');
  });
  it('a name that is not UTF-8, short: named without an ellipsis', async () => {
    const r = await refusal(t, [{ path: 'orgs/\ud800.toml', content_b64: b64('x') }]);
    assert.match(String(r.error), /^orgs\/.+\.toml: the name is not valid UTF-8; warden never approves such a name; nothing was changed$/);
    assert.ok(!String(r.error).includes('…'));
  });
  it('a block file without its rule in a request of several files: no pairing advice, other errors as they are', async () => {
    const r = await refusal(t, [{ path: 'blocks/conditional/sfw.md', content_b64: b64('be nice\n') }, { path: GUESTS, content_b64: b64('channels = []\nfolders = []\n') }]);
    const msgs = (r.details ?? []).map((d) => d.message);
    assert.ok(msgs.some((m) => m.startsWith('block file has no rule: add [blocks.sfw] to config/conditions.toml (until then it never loads)')), JSON.stringify(msgs));
    assert.ok(msgs.every((m) => !m.includes('a block file and its rule change together')), JSON.stringify(msgs));
  });
  it('a block file without its rule: one request is told how to pair them', async () => {
    const r = await refusal(t, [{ path: 'blocks/conditional/sfw.md', content_b64: b64('be nice\n') }]);
    assert.ok(r.details?.some((d) => d.message === 'must start with a "+++" line opening the TOML front matter'), 'an error that is not about pairing gets no advice');
    assert.ok(r.details?.some((d) => /^block file has no rule: add \[blocks\.sfw\] to config\/conditions\.toml \(until then it never loads\); a block file and its rule change together, in one request: to add one, 'warden apply blocks/.test(d.message)), JSON.stringify(r.details));
  });
  it('a proposal made against another approved state: stale, with its paths', async () => {
    const r = await refusal(t, [{ path: ORG, content_b64: b64(orgWith(t, 2)) }], { base: { [ORG]: 'f'.repeat(64) } });
    assert.equal(r.stale, true);
    assert.deepEqual(r.paths, [ORG]);
    assert.equal(r.error, `${ORG} changed since this change was proposed; nothing was applied`);
    assert.equal(r.exitCode, 1);
  });
});

describe('the apply module directly', () => {
  it('checkBase / currentBase: the approved hashes, null for an absent path', async () => {
    const t = await R.init();
    const w = writer(t, { prepare: false });
    try {
      const base = currentBase(w.env.ctx, [ORG, 'orgs/none.toml']);
      assert.deepEqual({ ...base }, { [ORG]: sha256Hex(readFileSync(t.p(ORG))), 'orgs/none.toml': null });
      checkBase(w.env.ctx, base);
      assert.throws(() => checkBase(w.env.ctx, { ...base, 'orgs/none.toml': 'a'.repeat(64) }), (e: unknown) => e instanceof StaleError && e.stalePaths.join() === 'orgs/none.toml');
      const checked = checkChanges(w.env.ctx, [{ path: ORG, content: null, keep: true }]);
      assert.deepEqual(checked.map((c) => [c.path, c.kind, c.content?.equals(readFileSync(t.p(ORG)))]), [[ORG, 'org', true]]);
      assert.throws(() => checkChanges(w.env.ctx, [{ path: ORG, content: Buffer.from('x = [') }]), (e: unknown) => e instanceof WardenError && e.exitCode === 1 && e.details.length === 1);
    } finally { w.close(); }
  });

  it('warden.toml that protects a new path adopts the file on disk; dropping the entry drops it', async () => {
    const t = await R.init();
    mkdirSync(t.p('notes'));
    writeFileSync(t.p('notes/todo.md'), 'a todo\n', { mode: 0o640 });
    const protect = `${TEST_WARDEN_TOML}\n[[protect]]\npath = "notes/todo.md"\n`;
    let w = writer(t, { prepare: false });
    try {
      const r = applyChanges(w.env.ctx, [{ path: 'config/warden.toml', content: Buffer.from(protect) }], 'edit config/warden.toml', 'tester');
      assert.deepEqual(r.paths, ['config/warden.toml', 'notes/todo.md']);
      assert.equal(r.newConfig?.protect[0]?.path, 'notes/todo.md');
      assert.equal(r.generation, 3, 'the change, then the adoption');
      const e = w.loaded.state.entry('notes/todo.md');
      assert.deepEqual([e?.kind, e?.mode, e?.sha256], ['text', 0o640, sha256Hex(Buffer.from('a todo\n'))]);
      assert.match(String(await r.history), /^[0-9a-f]{40}$/);
    } finally { w.close(); }
    w = writer(t, { prepare: false });
    try {
      const r = applyChanges(w.env.ctx, [{ path: 'config/warden.toml', content: Buffer.from(TEST_WARDEN_TOML) }], 'edit config/warden.toml', 'tester');
      assert.deepEqual(r.paths, ['config/warden.toml', 'notes/todo.md']);
      assert.equal(w.loaded.state.entry('notes/todo.md'), undefined);
      assert.equal(text(t.p('notes/todo.md')), 'a todo\n', 'an unprotected file is left alone');
      await r.history;
    } finally { w.close(); }
  });

  it('a file that becomes a credential file is re-stored as one: out of blobs/, into secrets/', async () => {
    const t = await R.init();
    writeFileSync(t.p('config/extra.toml'), '[anthropic2]\nkey = "value-extra-1"\n');
    const withExtra = `${TEST_WARDEN_TOML}\n[[protect]]\npath = "config/extra.toml"\n`;
    let w = writer(t, { prepare: false });
    try { await applyChanges(w.env.ctx, [{ path: 'config/warden.toml', content: Buffer.from(withExtra) }], 'edit', 'tester').history; } finally { w.close(); }
    const sha = sha256Hex(readFileSync(t.p('config/extra.toml')));
    assert.ok(existsSync(join(t.p('snapshots/blobs'), sha)), 'adopted as text: in blobs/');
    const asCred = withExtra.replace('files = ["config/credentials.toml"]', 'files = ["config/credentials.toml", "config/extra.toml"]').replace(/\n\[\[protect\]\]\npath = "config\/extra.toml"\n/, '\n');
    w = writer(t, { prepare: false });
    try {
      const r = applyChanges(w.env.ctx, [{ path: 'config/warden.toml', content: Buffer.from(asCred) }], 'edit', 'tester');
      await r.history;
      assert.equal(w.loaded.state.entry('config/extra.toml')?.kind, 'credentials');
    } finally { w.close(); }
    assert.equal(existsSync(join(t.p('snapshots/blobs'), sha)), false, 'the text blob is dropped');
    assert.ok(existsSync(join(t.p('snapshots/secrets'), sha)), 'stored as a secret');
  });
});

describe('credential groups across files', () => {
  const TWO = TEST_WARDEN_TOML.replace('files = ["config/credentials.toml"]', 'files = ["config/credentials.toml", "config/discord-app.toml"]')
    + '\n[credentials.groups.anthropic]\nkeys = ["api_key", "org_id"]\n';
  async function twoFileRoot(): Promise<TestRoot> {
    const t = R.make({ wardenToml: TWO });
    writeFileSync(t.p(CRED), text(t.p(CRED)).replace(/^application_id = .*\n/m, '').replace('api_key = "sk-ant-EXAMPLE-not-a-real-key"', 'api_key = "sk-ant-EXAMPLE-not-a-real-key"\norg_id = "org-1"'));
    writeFileSync(t.p('config/discord-app.toml'), '[discord]\napplication_id = "111111111111111111"\n');
    const { initRoot } = await import('../../src/changes/init.js');
    await initRoot(t.root, { force: false });
    return t;
  }
  it('a failed check is located in the file where the group begins, not the file changed', async () => {
    const t = await twoFileRoot();
    const { reply } = await propose(t, [{ path: 'config/discord-app.toml', content_b64: b64('[discord]\napplication_id = "222222222222222229"\n') }]);
    assert.equal(reply.ok, false, JSON.stringify(reply));
    assert.deepEqual(reply.details?.map((d) => [d.file, d.key]), [[CRED, 'discord']]);
  });
  it('half a group without a check is refused; the key re-entered unchanged ("confirmed") completes it', async () => {
    const t = await twoFileRoot();
    const next = b64(text(t.p(CRED)).replace('sk-ant-EXAMPLE-not-a-real-key', 'sk-ant-NEW-key-0002'));
    const half = (await propose(t, [{ path: CRED, content_b64: next }], { command: 'cred set anthropic.api_key' })).reply;
    assert.equal(half.ok, false);
    assert.deepEqual(half.details?.map((d) => [d.file, d.key]), [[CRED, 'anthropic']]);
    assert.match(half.details?.[0]?.message ?? '', /^half-applied: anthropic\.api_key would change but anthropic\.org_id would not; keys of group anthropic change together, so these must come along: anthropic\.org_id/);
    const malformed = (await propose(t, [{ path: CRED, content_b64: next }], { command: 'cred rotate anthropic', confirmed: ['anthropic org_id', 'anthropic.org_id.x'] })).reply;
    assert.equal(malformed.ok, false, 'a confirmed key that is not GROUP.KEY counts for nothing');
    const ok = (await propose(t, [{ path: CRED, content_b64: next }], { command: 'cred rotate anthropic', confirmed: ['anthropic.org_id'] })).reply;
    assert.equal(ok.ok, true, JSON.stringify(ok));
    assert.match(text(t.p(CRED)), /sk-ant-NEW-key-0002/);
  });
});

describe('history and the protected set', () => {
  const body = (t: TestRoot) => spawnSync('git', ['-C', t.p('snapshots/history'), 'log', '-1', '--format=%B'], { encoding: 'utf8' }).stdout;
  it('a mode change is written in the history commit; a content change alone is not', async () => {
    const t = await R.init();
    await propose(t, [{ path: ORG, content_b64: null, keep: true, mode: 0o600 }]);
    assert.match(body(t), /mode: orgs\/bookclub\.toml 0644 → 0600\n/);
    await propose(t, [{ path: ORG, content_b64: b64(orgWith(t, 4)) }]);
    assert.doesNotMatch(body(t), /mode: /);
    await propose(t, [{ path: ORG, content_b64: b64(orgWith(t, 5)), mode: 0o600 }]);
    assert.doesNotMatch(body(t), /mode: /, 'the same mode again is no mode change');
  });

  it('reconcile: new protected directories get their modes, a name that is not UTF-8 is never adopted, a re-stored credential file is said', async () => {
    const t = await R.init();
    mkdirSync(t.p('notes/sub'), { recursive: true, mode: 0o750 });
    writeFileSync(t.p('notes/sub/a.md'), 'a\n');
    writeFileSync(Buffer.from(`${t.p('notes/sub')}/b\xff.md`, 'latin1'), 'b\n');
    const { reconcileProtectedSet } = await import('../../src/changes/apply.js');
    const { protectedSet } = await import('../../src/config/protected-set.js');
    const { wardenConfigSchema } = await import('../../src/config/warden-config.js');
    writeFileSync(t.p('config/extra.toml'), '[x]\nk = "v"\n');
    let w = writer(t, { prepare: false });
    try { await applyChanges(w.env.ctx, [{ path: 'config/warden.toml', content: Buffer.from(`${TEST_WARDEN_TOML}\n[[protect]]\npath = "config/extra.toml"\n`) }], 'edit', 'tester').history; } finally { w.close(); }
    w = writer(t, { prepare: false });
    try {
      const cfg = wardenConfigSchema.parse({ credentials: { files: ['config/credentials.toml', 'config/extra.toml'] }, protect: [{ path: 'notes/sub/*.md' }] });
      const notes: string[] = [];
      const out = reconcileProtectedSet(w.env.ctx, protectedSet(cfg), 1 << 20, (l) => notes.push(l));
      assert.deepEqual(out.map((c) => [c.path, c.kind, c.bytes?.toString() ?? null]).sort(), [['config/extra.toml', 'credentials', '[x]\nk = "v"\n'], ['notes/sub/a.md', 'text', 'a\n']]);
      assert.deepEqual(notes, ["<4>warden: config/extra.toml is now a credential file: re-stored as one (values out of snapshots/blobs and out of the history's current tree); its earlier content is still in older commits of snapshots/history (git): if it held secrets, rotate them"]);
      assert.equal(w.loaded.state.index.dirs['notes/sub']?.mode, 0o750);
      assert.ok(w.loaded.state.index.dirs['notes'], 'every ancestor directory');
      assert.equal(w.env.ctx.pset.kindOf('notes/sub/a.md'), 'text', 'the context uses the new set');
    } finally { w.close(); }
  });

  it('dropStaleBlobs keeps a blob that a text file still uses', async () => {
    const t = await R.init();
    const { dropStaleBlobs } = await import('../../src/changes/apply.js');
    const w = writer(t, { prepare: false });
    try {
      const bytes = readFileSync(t.p(ORG));
      const sha = sha256Hex(bytes);
      dropStaleBlobs(w.loaded.store.fd, w.loaded.state, [{ path: 'config/x.toml', kind: 'credentials', bytes, mode: 0o600, uid: 0, gid: 0 }]);
      assert.ok(existsSync(join(t.p('snapshots/blobs'), sha)), 'orgs/bookclub.toml still uses it');
      const other = readFileSync(t.p(GUESTS));
      dropStaleBlobs(w.loaded.store.fd, w.loaded.state, [{ path: 'orgs/x.toml', kind: 'org', bytes: other, mode: 0o600, uid: 0, gid: 0 }, { path: 'config/y.toml', kind: 'credentials', bytes: null, mode: 0o600, uid: 0, gid: 0 }]);
      assert.ok(existsSync(join(t.p('snapshots/blobs'), sha256Hex(other))), 'only credential changes drop blobs');
    } finally { w.close(); }
  });
});

describe('the approved content gone from the store after loading', () => {
  it('a mode change (keep), and a change of several files, refuse and change nothing', async () => {
    const t = await R.init();
    const { changeOp } = await import('../../src/changes/approvals.js');
    const w = writer(t, { prepare: false });
    try {
      rmSync(join(t.p('snapshots/blobs'), w.loaded.state.entry(ORG)!.sha256));
      const snap = treeSnapshot(t.root);
      const keep = await changeOp({ action: 'propose', changes: [{ path: ORG, content_b64: null, keep: true, mode: 0o600 }] }, w.env);
      assert.deepEqual(keep, { ok: false, error: `the approved content of ${ORG} is not available; nothing was changed`, details: [], exitCode: 2 });
      const two = await changeOp({ action: 'propose', changes: [{ path: GUESTS, content_b64: b64('channels = []\nfolders = []\n') }, { path: ORG, content_b64: b64(orgWith(t, 6)) }] }, w.env);
      assert.equal(two.ok, false);
      assert.equal(two.error, `the approved content of ${ORG} is not available; nothing was changed`);
      assert.deepEqual(treeSnapshot(t.root), snap);
      assert.equal(w.loaded.state.index.generation, 1);
    } finally { w.close(); }
  });
});
