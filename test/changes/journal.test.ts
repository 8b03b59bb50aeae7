/**
 * The intent journal under attack, through the real CLI and daemon:
 *   - a genuine (HMAC-valid) manifest copied from an earlier transaction and planted again
 *     is a replay: never obeyed, moved into quarantine, reported as baseline-tampered;
 *   - a huge sparse file at a journalled path does not crash recovery (bounded read).
 * The interrupted transactions come from the crash seam (WARDEN_TEST_CRASH_AT, src/changes/seam.ts).
 */
import { it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, readFileSync, readdirSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, readAlertsOf, startDaemon, waitFor, fileSha, type Daemon, type TestRoot } from '../helpers/root.js';
import { discordPair, makeTwoFileRoot, run } from './helpers.js';

const CRED = 'config/credentials.toml';
const APP = 'config/discord-app.toml';
let t: TestRoot;
let d: Daemon | null = null;

afterEach(async () => {
  if (d) await d.stop();
  d = null;
  t.cleanup();
});

function setup(): void {
  t = makeTwoFileRoot();
  const r = cli(t, ['init']);
  assert.equal(r.code, 0, r.stderr);
}

const shas = () => ({ cred: fileSha(t.p(CRED)), app: fileSha(t.p(APP)) });

/** Rotate discord (no daemon: under the lock); with `crashAt` the CLI SIGKILLs itself at that step. */
async function rotate(seed: string, crashAt?: string): Promise<void> {
  const v = discordPair(seed);
  const r = await run(t, ['cred', 'rotate', 'discord'], { input: `${v.token}\n${v.application_id}\n`, env: crashAt ? { WARDEN_TEST_CRASH_AT: crashAt } : {} });
  if (crashAt) {
    assert.notEqual(r.code, 0, 'the seam killed the command');
    assert.ok(existsSync(t.p('snapshots/journal/intent')), `the journal survived the crash at ${crashAt}`);
  } else {
    assert.equal(r.code, 0, r.stderr);
  }
}

/** Copy the journal aside (what an attacker who can read snapshots/ keeps for later). */
function saveJournal(): string {
  const saved = join(t.base, `saved-journal-${Math.random().toString(36).slice(2)}`);
  cpSync(t.p('snapshots/journal'), saved, { recursive: true });
  return saved;
}

function plant(saved: string): void {
  cpSync(saved, t.p('snapshots/journal'), { recursive: true });
  assert.ok(existsSync(t.p('snapshots/journal/intent')));
}

function assertQuarantinedReplay(alertsBefore: number): void {
  const fresh = readAlertsOf(t).slice(alertsBefore);
  const tamper = fresh.filter((a) => a.reason === 'baseline-tampered' && a.path === 'snapshots/journal/intent');
  assert.equal(tamper.length, 1, `one baseline-tampered alert for the journal: ${JSON.stringify(fresh)}`);
  const a = tamper[0]!;
  assert.equal(a.quarantine, `snapshots/quarantine/${a.id}/journal`);
  assert.match(a.detail ?? '', /not obeyed/);
  assert.ok(existsSync(t.p(`${a.quarantine}/intent`)), 'the planted manifest is kept in quarantine');
  assert.equal(statSync(t.p(`snapshots/quarantine/${a.id}`)).mode & 0o777, 0o700);
  assert.equal(existsSync(t.p('snapshots/journal/intent')), false, 'the journal is gone from snapshots/journal');
  assert.deepEqual(fresh.filter((a) => a.reason === 'half-applied'), [], 'the replayed transaction was not rolled anywhere');
}

it('a replayed intent from an earlier transaction is not obeyed: quarantined, baseline-tampered, nothing changed', { timeout: 120_000 }, async () => {
  setup();
  const v0 = shas();
  // T1 (v0 → v1) dies after its baseline commit; the attacker keeps a copy of its journal.
  await rotate('1111', 'baseline');
  const t1 = saveJournal();
  // T2 (v1 → v2): its writer first recovers T1 (rolled forward), then rotates.
  await rotate('2222');
  const v2 = shas();
  assert.notDeepEqual(v2, v0);
  // The genuine, HMAC-valid T1 manifest is planted again. Obeying it would roll the set back to v0.
  plant(t1);
  const n = readAlertsOf(t).length;
  d = await startDaemon(t);
  assertQuarantinedReplay(n);
  assert.deepEqual(shas(), v2, 'the credential set is still v2');
  await d.stop();
  d = null;
  const v = cli(t, ['verify']);
  assert.equal(v.code, 0, `the baseline still approves v2: ${v.stdout}${v.stderr}`);
});

it('a replayed intent whose hashes still match is refused by generation: later changes in between', { timeout: 120_000 }, async () => {
  setup();
  await rotate('3333', 'baseline');
  const t1 = saveJournal();
  // The writer of an unrelated change recovers T1 (forward, the set is v1) and moves the generation on.
  const org = readFileSync(t.p('orgs/bookclub.toml'), 'utf8');
  const a = await run(t, ['apply', 'orgs/bookclub.toml', '--from', '-'], { input: `${org}\n# a sanctioned edit\n` });
  assert.equal(a.code, 0, a.stderr);
  const v1 = shas();
  // Replay T1 and garble one live file: obeying T1 (not every file holds the new content) would roll back to v0.
  plant(t1);
  writeFileSync(t.p(APP), '[discord]\napplication_id = "999999999999999999"\n');
  const n = readAlertsOf(t).length;
  d = await startDaemon(t);
  assertQuarantinedReplay(n);
  // The guard put the garbled file back to what the baseline approves (v1).
  await waitFor(() => fileSha(t.p(APP)) === v1.app, 20_000, 'discord-app.toml restored');
  assert.deepEqual(shas(), v1);
});

it('a genuine crash after the baseline commit, a file edited while stopped: rolled forward to the approved new content', { timeout: 120_000 }, async () => {
  setup();
  await rotate('4444', 'baseline');
  // The files hold v1 now (they are written before the baseline); remember and garble one.
  const v1 = shas();
  writeFileSync(t.p(APP), '[discord]\napplication_id = "999999999999999999"\n');
  const n = readAlertsOf(t).length;
  d = await startDaemon(t);
  const fresh = readAlertsOf(t).slice(n);
  assert.ok(!fresh.some((x) => x.reason === 'baseline-tampered'), 'a genuine journal is not called a replay');
  const half = fresh.filter((x) => x.reason === 'half-applied');
  assert.equal(half.length, 2, JSON.stringify(fresh));
  assert.ok(half.every((x) => /rolled forward/.test(x.detail ?? '')));
  assert.deepEqual(shas(), v1);
  assert.deepEqual(readdirSync(t.p('snapshots/journal')), []);
});

it('a huge sparse file at a journalled path does not crash recovery: read at most max_bytes, rolled back', { timeout: 120_000 }, async () => {
  setup();
  const v0 = shas();
  // The intent is durable, no file replaced yet.
  await rotate('5555', 'journal');
  // 5 GiB (sparse): more than any Buffer can hold, far more than max_bytes (1 MiB).
  truncateSync(t.p(CRED), 5 * 1024 ** 3);
  const n = readAlertsOf(t).length;
  d = await startDaemon(t);
  const half = readAlertsOf(t).slice(n).filter((x) => x.reason === 'half-applied');
  assert.equal(half.length, 2);
  assert.ok(half.every((x) => x.action === 'reverted'), 'rolled back: the oversized file is not the new content');
  assert.deepEqual(shas(), v0);
  assert.deepEqual(readdirSync(t.p('snapshots/journal')), []);
});

it('a kill after the first file of a two-file rotation: rolled back, both files as approved before, the baseline unchanged', { timeout: 120_000 }, async () => {
  setup();
  const v0 = shas();
  // The first file holds the new content, the second still the old: recovery must not complete
  // a change only some of its files hold (the journal's "every file is new" test, not "some").
  await rotate('6666', 'file-1');
  const mid = shas();
  assert.ok((mid.cred !== v0.cred) !== (mid.app !== v0.app), `exactly one file was replaced before the kill: ${JSON.stringify({ v0, mid })}`);
  const n = readAlertsOf(t).length;
  d = await startDaemon(t);
  const half = readAlertsOf(t).slice(n).filter((x) => x.reason === 'half-applied');
  assert.equal(half.length, 2, JSON.stringify(half));
  assert.ok(half.every((x) => x.action === 'reverted' && /rolled back/.test(x.detail ?? '')), `rolled back: ${JSON.stringify(half.map((x) => x.detail))}`);
  assert.deepEqual(shas(), v0, 'both files hold the content approved before the rotation');
  assert.deepEqual(readdirSync(t.p('snapshots/journal')), []);
  await d.stop();
  d = null;
  const v = cli(t, ['verify']);
  assert.equal(v.code, 0, `the baseline approves the old content: ${v.stdout}${v.stderr}`);
});
