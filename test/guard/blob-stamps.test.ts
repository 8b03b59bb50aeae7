/**
 * Blob stamps kept across restarts (store/blob-stamps.ts): the first rescan after a
 * start skips blobs whose stat identity is unchanged since they were hashed, but a blob forged
 * while warden was stopped is still caught, and a stamps file that is not authentic is never
 * trusted (every blob is hashed again).
 */
import { it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, readFileSync, readdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, makeRoot, readAlertsOf, sha, startDaemon, waitFor, TEST_WARDEN_TOML, type Daemon, type TestRoot } from '../helpers/root.js';

const ORG = 'orgs/bookclub.toml';
const FORGED = 'hourly_cap = 1000000 # forged in the store\n';
const roots: TestRoot[] = [];
const daemons: Daemon[] = [];

afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  for (const t of roots.splice(0)) t.cleanup();
});

const stampsFileOf = (t: TestRoot): string | undefined => {
  const dir = join(t.env.XDG_STATE_HOME!, 'warden', 'keys');
  const n = existsSync(dir) ? readdirSync(dir).find((x) => x.endsWith('.blob-stamps')) : undefined;
  return n ? join(dir, n) : undefined;
};

/** Init, run the guard until it has kept its blob stamps, stop it. */
async function ranOnce(): Promise<{ t: TestRoot; approved: Buffer; blob: string; stamps: string }> {
  const t = makeRoot({ wardenToml: TEST_WARDEN_TOML.replace('rescan_seconds = 30', 'rescan_seconds = 1') });
  roots.push(t);
  assert.equal(cli(t, ['init']).code, 0);
  const approved = readFileSync(t.p(ORG));
  const blob = t.p(`snapshots/blobs/${sha(approved)}`);
  const d = await startDaemon(t);
  const stamps = await waitFor(() => { const f = stampsFileOf(t); return f && readFileSync(f, 'utf8').includes(sha(approved)) ? f : undefined; }, 15_000, 'the blob stamps kept beside the key');
  await d.stop();
  return { t, approved, blob, stamps };
}

it('a blob forged while warden was stopped is still caught after a restart: forged blob + direct edit → revert-failed, never the forged bytes', async () => {
  const { t, approved, blob } = await ranOnce();
  writeFileSync(`${blob}.new`, FORGED);
  renameSync(`${blob}.new`, blob);
  const d = await startDaemon(t);
  daemons.push(d);
  const edited = 'hourly_cap = 99 # direct edit\n';
  writeFileSync(t.p(ORG), edited);
  const seen = new Set<string>();
  await waitFor(() => {
    seen.add(readFileSync(t.p(ORG), 'utf8'));
    return readAlertsOf(t).some((a) => a.path === ORG && a.reason === 'revert-failed');
  }, 15_000, 'revert-failed');
  assert.ok(!seen.has(FORGED), 'the forged bytes never reached the root');
  assert.equal(readFileSync(t.p(ORG), 'utf8'), edited, 'fail closed: the file is left as it was');
  assert.notEqual(readFileSync(blob, 'utf8'), approved.toString('utf8'), 'no live file had the approved content to rebuild the blob from');
});

it('a stamps file rewritten to vouch for a forged blob is not trusted: the blob is hashed again, caught and rebuilt', async () => {
  const { t, approved, blob, stamps } = await ranOnce();
  // Forge the blob, then make the stamps file name the forged blob's stat identity (the HMAC
  // no longer matches: whoever cannot read the key cannot sign it).
  writeFileSync(`${blob}.new`, FORGED);
  renameSync(`${blob}.new`, blob);
  const st = lstatSync(blob);
  const forgedStamp = [st.ino, st.size, st.mode, st.uid, st.gid, st.mtimeMs, st.ctimeMs].join(':');
  const text = readFileSync(stamps, 'utf8');
  const forgedText = text.replace(new RegExp(`^${sha(approved)} \\S+$`, 'm'), `${sha(approved)} ${forgedStamp}`);
  assert.notEqual(forgedText, text, 'the stamp of the blob was replaced');
  writeFileSync(stamps, forgedText);
  const d = await startDaemon(t);
  daemons.push(d);
  await waitFor(() => readFileSync(blob).equals(approved) && readAlertsOf(t).some((a) => a.reason === 'baseline-tampered' && a.path.endsWith(sha(approved))), 15_000, 'the forged blob caught by the first rescan and written back from the live file');
  assert.ok(!readFileSync(stamps, 'utf8').includes(forgedStamp), 'the forged stamp is not kept');
});

it('with authentic stamps kept, a blob forged while warden was stopped is hashed by the first rescan (its stat identity changed), caught and rebuilt', async () => {
  const { t, approved, blob } = await ranOnce();
  writeFileSync(blob, FORGED);
  const d = await startDaemon(t);
  daemons.push(d);
  await waitFor(() => readFileSync(blob).equals(approved) && readAlertsOf(t).some((a) => a.reason === 'baseline-tampered' && a.path.endsWith(sha(approved))), 15_000, 'the forged blob caught by the first rescan and written back from the live file');
});

it('an approved change: the new blob gets its stamp and the old one leaves the file', async () => {
  const { t, approved } = await ranOnce();
  const d = await startDaemon(t);
  daemons.push(d);
  // A temp left at the writer's name (a kill mid-write), even as a link, is replaced, never written through.
  const stampsBefore = stampsFileOf(t)!;
  const decoy = join(t.base, 'decoy');
  writeFileSync(decoy, 'decoy\n');
  symlinkSync(decoy, `${stampsBefore}.tmp`);
  const next = `${approved.toString('utf8')}\n# approved later\n`;
  writeFileSync(join(t.base, 'next.toml'), next);
  const r = cli(t, ['apply', ORG, '--from', join(t.base, 'next.toml')]);
  assert.equal(r.code, 0, r.stderr);
  const stamps = stampsFileOf(t)!;
  await waitFor(() => readFileSync(stamps, 'utf8').includes(sha(Buffer.from(next))), 15_000, 'the new blob stamped');
  assert.ok(!readFileSync(stamps, 'utf8').includes(sha(approved)), 'the stamp of the blob no longer approved is dropped');
  assert.ok(!readdirSync(join(stamps, '..')).some((n) => n.endsWith('.tmp')), 'no temp file left beside the key');
  assert.equal(readFileSync(decoy, 'utf8'), 'decoy\n', 'the link left at the temp name was not written through');
});
