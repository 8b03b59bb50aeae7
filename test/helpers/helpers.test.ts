/** The shared test helpers must be able to fail: a helper that hides an error hides a bug. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { FIXTURE, fileSha, makeRoot, readAlertsOf } from './root.js';
import { join } from 'node:path';
import { waitFor } from './wait-for.js';

test('waitFor returns the first truthy value, sync or async', async () => {
  let n = 0;
  assert.equal(await waitFor(() => (++n >= 3 ? `done ${n}` : null), 2_000, 'three polls', 1), 'done 3');
  let m = 0;
  assert.deepEqual(await waitFor(async () => (++m >= 2 ? { m } : undefined), 2_000, 'async'), { m: 2 });
});

test('waitFor times out naming what it waited for', async () => {
  await assert.rejects(waitFor(() => false, 50, 'the moon'), /timed out after 50 ms waiting for the moon$/);
});

test('waitFor does not swallow what its condition throws: the last error comes out at the deadline', async () => {
  const boom = new Error('ENOENT: the file never appeared');
  const err = await waitFor(() => { throw boom; }, 50, 'a file').then(() => null, (e: unknown) => e as Error);
  assert.ok(err, 'it rejected');
  assert.match(err.message, /waiting for a file; the condition last threw: ENOENT: the file never appeared/);
  assert.equal(err.cause, boom);
});

test('waitFor keeps polling past a transient exception', async () => {
  let n = 0;
  assert.equal(await waitFor(() => { if (++n < 3) throw new Error('not yet'); return n; }, 2_000, 'recovery', 1), 3);
});

test('readAlertsOf: no alerts.jsonl yet is []; a torn, non-JSON or unreadable file throws', () => {
  const t = makeRoot();
  try {
    assert.deepEqual(readAlertsOf(t), [], 'before the first alert the file does not exist');
    mkdirSync(t.p('snapshots'), { recursive: true });
    const line = JSON.stringify({ id: 'a1', reason: 'content-changed', path: 'orgs/bookclub.toml' });
    writeFileSync(t.p('snapshots/alerts.jsonl'), line + '\n');
    assert.equal(readAlertsOf(t).length, 1);
    writeFileSync(t.p('snapshots/alerts.jsonl'), line + '\n' + line.slice(0, 20));
    assert.throws(() => readAlertsOf(t), /torn/);
    writeFileSync(t.p('snapshots/alerts.jsonl'), line + '\n{not json}\n');
    assert.throws(() => readAlertsOf(t), /alerts\.jsonl:2: not JSON/);
    writeFileSync(t.p('snapshots/alerts.jsonl'), '{"hello":1}\n');
    assert.throws(() => readAlertsOf(t), /alerts\.jsonl:1: not an alert/);
  } finally { t.cleanup(); }
});

test('readAlertsOf: a directory in place of alerts.jsonl throws', () => {
  const t = makeRoot();
  try {
    mkdirSync(t.p('snapshots/alerts.jsonl'), { recursive: true });
    assert.throws(() => readAlertsOf(t), /EISDIR/);
  } finally { t.cleanup(); }
});

test('fileSha: null only for a missing file; a directory in its place throws', () => {
  const t = makeRoot();
  try {
    assert.equal(fileSha(t.p('nope')), null);
    assert.match(fileSha(t.p('orgs/bookclub.toml')) ?? '', /^[0-9a-f]{64}$/);
    assert.throws(() => fileSha(t.p('orgs')), /EISDIR/);
  } finally { t.cleanup(); }
});

test('makeRoot copies the fixture the suite owns, not the working tree', () => {
  const t = makeRoot();
  try {
    for (const rel of ['config/conditions.toml', 'config/guests.toml', 'config/credentials.toml', 'orgs/bookclub.toml', 'blocks/conditional/nsfw.md']) {
      assert.equal(fileSha(t.p(rel)), fileSha(join(FIXTURE, rel)), rel);
    }
  } finally { t.cleanup(); }
});
