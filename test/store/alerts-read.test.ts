/** alerts.jsonl is read from an offset, in pieces, and backwards for the newest: never whole. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastAlerts, readAlerts, readAlertsFrom } from '../../src/store/alerts.js';

function root(): { dir: string; file: string; done(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'warden-alerts-read-'));
  mkdirSync(join(dir, 'snapshots'));
  return { dir, file: join(dir, 'snapshots', 'alerts.jsonl'), done: () => rmSync(dir, { recursive: true, force: true }) };
}
const line = (i: number, pad = 0) => JSON.stringify({ id: `a${i}`, path: 'orgs/x.toml', reason: 'content', pad: 'x'.repeat(pad) }) + '\n';

test('readAlertsFrom returns only what was appended since the offset, and leaves a torn line for later', () => {
  const r = root();
  try {
    assert.deepEqual(readAlertsFrom(r.dir), { alerts: [], skipped: 0, offset: 0 }, 'no file: nothing');
    writeFileSync(r.file, line(1) + line(2));
    const a = readAlertsFrom(r.dir);
    assert.deepEqual(a.alerts.map((x) => x.id), ['a1', 'a2']);
    appendFileSync(r.file, line(3) + line(4).slice(0, 10));
    const b = readAlertsFrom(r.dir, a.offset);
    assert.deepEqual(b.alerts.map((x) => x.id), ['a3']);
    appendFileSync(r.file, line(4).slice(10));
    const c = readAlertsFrom(r.dir, b.offset);
    assert.deepEqual(c.alerts.map((x) => x.id), ['a4'], 'the torn line completed is read once, whole');
    assert.equal(readAlertsFrom(r.dir, c.offset).alerts.length, 0);
  } finally { r.done(); }
});

test('a file of several pieces (> 1 MiB) reads every alert once; foreign lines are counted, not fatal', () => {
  const r = root();
  try {
    let text = '';
    for (let i = 0; i < 3000; i++) text += line(i, 500) + (i % 1000 === 7 ? 'not json\n' : '');
    writeFileSync(r.file, text);
    const all = readAlerts(r.dir);
    assert.equal(all.alerts.length, 3000);
    assert.equal(new Set(all.alerts.map((a) => a.id)).size, 3000);
    assert.equal(all.skipped, 3);
    assert.deepEqual(lastAlerts(r.dir, 3).map((a) => a.id), ['a2997', 'a2998', 'a2999']);
    assert.deepEqual(lastAlerts(r.dir, 3000).map((a) => a.id), all.alerts.map((a) => a.id), 'backwards across pieces gives the same alerts');
    assert.equal(lastAlerts(r.dir, 5000).length, 3000);
  } finally { r.done(); }
});

test('a line longer than a piece is read whole, forwards and backwards', () => {
  const r = root();
  try {
    writeFileSync(r.file, line(1) + line(2, 3 << 20) + line(3));
    assert.deepEqual(readAlerts(r.dir).alerts.map((a) => a.id), ['a1', 'a2', 'a3']);
    assert.deepEqual(lastAlerts(r.dir, 2).map((a) => a.id), ['a2', 'a3']);
    assert.deepEqual(lastAlerts(r.dir, 9).map((a) => a.id), ['a1', 'a2', 'a3']);
  } finally { r.done(); }
});

test('alerts.jsonl as a symlink is refused, not followed', () => {
  const r = root();
  try {
    writeFileSync(join(r.dir, 'elsewhere'), line(1));
    symlinkSync(join(r.dir, 'elsewhere'), r.file);
    assert.throws(() => readAlerts(r.dir), /not a regular file/);
    assert.throws(() => lastAlerts(r.dir, 1), /not a regular file/);
  } finally { r.done(); }
});
