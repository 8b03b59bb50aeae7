/**
 * Approved bytes live in the store only: a revert reads the blob and uses it
 * only when it hashes to the sha256 of the authenticated index. A blob missing or altered
 * is rebuilt from a live file that still has the approved content; where none has it, the
 * revert fails closed and never writes the store's bytes into the root.
 */
import { it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { CLI, cli, makeRoot, readAlertsOf, sha, startDaemon, waitFor, TEST_WARDEN_TOML, type Daemon, type TestRoot } from '../helpers/root.js';

const ORG = 'orgs/bookclub.toml';
const FORGED = 'hourly_cap = 1000000 # forged in the store\n';
const roots: TestRoot[] = [];
const daemons: Daemon[] = [];

afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  for (const t of roots.splice(0)) t.cleanup();
});

function initialised(wardenToml?: string): { t: TestRoot; approved: Buffer; blob: string } {
  const t = makeRoot(wardenToml ? { wardenToml } : {});
  roots.push(t);
  assert.equal(cli(t, ['init']).code, 0);
  const approved = readFileSync(t.p(ORG));
  const blob = t.p(`snapshots/blobs/${sha(approved)}`);
  assert.ok(existsSync(blob), 'the org file has its blob');
  return { t, approved, blob };
}

it('a start that finds the blob forged and the file edited fails closed: exit 2, the forged bytes never reach the root', () => {
  const { t, approved, blob } = initialised();
  writeFileSync(blob, FORGED);
  const edited = approved.toString('utf8').replace('hourly_cap = 20', 'hourly_cap = 99');
  writeFileSync(t.p(ORG), edited);
  const r = spawnSync(process.execPath, [CLI, 'run', '--guard', '--root', t.root], { env: t.env, encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /baseline-tampered: the approved content of orgs\/bookclub\.toml is missing from the store or altered/);
  assert.equal(readFileSync(t.p(ORG), 'utf8'), edited, 'the file is left as it was, never given the forged bytes');
  assert.ok(readAlertsOf(t).some((a) => a.reason === 'baseline-tampered' && a.detail?.includes(ORG)), 'the owner is told');
});

it('a blob deleted while warden was stopped is rebuilt from the live file; the start does not refuse', async () => {
  const { t, approved, blob } = initialised(TEST_WARDEN_TOML.replace('rescan_seconds = 30', 'rescan_seconds = 1'));
  rmSync(blob);
  const d = await startDaemon(t);
  daemons.push(d);
  const alert = () => readAlertsOf(t).find((x) => x.reason === 'baseline-tampered' && x.path.endsWith(sha(approved)));
  await waitFor(() => existsSync(blob) && readFileSync(blob).equals(approved) && alert(), 15_000, 'the blob rebuilt by the backstop rescan, and said so');
  const a = alert();
  assert.match(a?.detail ?? '', new RegExp(`written back from ${ORG.replace('.', '\\.')}`));
  // And the rebuilt blob serves a revert.
  writeFileSync(t.p(ORG), 'direct edit\n');
  await waitFor(() => readFileSync(t.p(ORG)).equals(approved), 10_000, 'reverted from the rebuilt blob');
});

it('while running, a revert reads the blob at that moment: forged blob + direct edit → revert-failed, never the forged bytes', async () => {
  const { t, approved, blob } = initialised();
  const d = await startDaemon(t);
  daemons.push(d);
  // One process, blob first (atomically), then the live file: by the time the guard looks,
  // neither the store nor the root has the approved content any more.
  const edited = 'hourly_cap = 99 # direct edit\n';
  writeFileSync(`${blob}.new`, FORGED);
  renameSync(`${blob}.new`, blob);
  writeFileSync(t.p(ORG), edited);
  const seen = new Set<string>();
  await waitFor(() => {
    seen.add(readFileSync(t.p(ORG), 'utf8'));
    const alerts = readAlertsOf(t);
    return alerts.some((a) => a.path === ORG && a.reason === 'revert-failed') || readFileSync(t.p(ORG)).equals(approved);
  }, 15_000, 'revert-failed (or, had the guard been faster than the writes, the approved content)');
  assert.ok(!seen.has(FORGED), 'the forged bytes never reached the root');
  assert.notEqual(readFileSync(t.p(ORG), 'utf8'), FORGED);
  if (!readFileSync(t.p(ORG)).equals(approved)) {
    assert.equal(readFileSync(t.p(ORG), 'utf8'), edited, 'fail closed: the file is left as it was');
    assert.ok(readAlertsOf(t).some((a) => a.reason === 'baseline-tampered' && a.detail?.includes(`no live file has`)), 'the tamper is reported');
  }
});
