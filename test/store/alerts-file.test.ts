/**
 * alerts.jsonl (src/store/alerts.ts) in a real store made by init's own code, in process:
 * an alert is appended as one line (0600, never through a link or into a FIFO) and read back
 * exactly; a torn last line waits for the next read; foreign lines are skipped and counted;
 * the newest n are read backwards across 1 MiB pieces; damage is said in plain words.
 */
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { appendAlert, findAlert, lastAlerts, newAlertId, readAlerts, readAlertsFrom, readStoreAlerts, readStoreAlertsFrom } from '../../src/store/alerts.js';
import type { Alert } from '../../src/store/alert-types.js';
import { WardenError } from '../../src/common/errors.js';
import { ioInitRoot, ioRoot, ioSuite, type IoStore, withIoStore } from '../helpers/io-store.js';

let k = 0;
function alert(over: Partial<Alert> = {}): Alert {
  k++;
  return { id: `id${k}`, time: `2026-12-03T12:00:${String(k % 60).padStart(2, '0')}.000Z`, path: `orgs/f${k}.toml`, action: 'reverted', reason: 'content', before: { sha256: 'a'.repeat(64), size: 3, mode: 0o644 }, after: null, quarantine: null, advice: 'nothing to do', ...over };
}
const line = (a: Alert) => JSON.stringify(a) + '\n';

ioSuite('store I/O: alerts.jsonl (alerts.ts)', () => {
  describe('appendAlert and reading back', () => {
    let t: IoStore;
    before(async () => { t = await ioInitRoot(); });

    it('appends one JSON line per alert (0600) and reads them back exactly, oldest first', async () => {
      const a = alert({ detail: 'line one\nline "two"', also: ['mode'] });
      const b = alert({ action: 'flagged', reason: 'unexpected-file', path: 'orgs/new file.toml' });
      await withIoStore(t, (s) => {
        const start = existsSync(t.s('alerts.jsonl')) ? readFileSync(t.s('alerts.jsonl')).length : 0;
        appendAlert(s.fd, a);
        appendAlert(s.fd, b);
        const text = readFileSync(t.s('alerts.jsonl'), 'utf8').slice(start);
        assert.equal(text, line(a) + line(b));
        assert.equal(statSync(t.s('alerts.jsonl')).mode & 0o777, 0o600);
        const r = readStoreAlerts(s.fd, s.dir);
        assert.deepEqual(r.alerts.slice(-2), [a, b]);
        assert.equal(r.skipped, 0);
      });
      assert.deepEqual(readAlerts(t.root).alerts.slice(-2), [a, b]);
      assert.deepEqual(lastAlerts(t.root, 2), [a, b]);
      assert.deepEqual(lastAlerts(t.root, 1), [b]);
      assert.deepEqual(lastAlerts(t.root, 0), []);
    });

    it('a torn last line is left for the next read; the offset is just past the last whole line', async () => {
      const t2 = await ioInitRoot();
      const f = t2.s('alerts.jsonl');
      rmSync(f, { force: true });
      const a = alert(), b = alert(), c = alert();
      writeFileSync(f, line(a) + line(b), { mode: 0o600 });
      const first = readAlertsFrom(t2.root, 0);
      assert.deepEqual(first, { alerts: [a, b], skipped: 0, offset: Buffer.byteLength(line(a) + line(b)) });
      const torn = line(c).slice(0, 20);
      appendFileSync(f, torn);
      const mid = readAlertsFrom(t2.root, first.offset);
      assert.deepEqual(mid, { alerts: [], skipped: 0, offset: first.offset }, 'the torn line is not read yet');
      appendFileSync(f, line(c).slice(20));
      const rest = readAlertsFrom(t2.root, mid.offset);
      assert.deepEqual(rest, { alerts: [c], skipped: 0, offset: readFileSync(f).length });
      assert.deepEqual(readAlertsFrom(t2.root, rest.offset), { alerts: [], skipped: 0, offset: rest.offset });
      await withIoStore(t2, (s) => {
        assert.deepEqual(readStoreAlertsFrom(s.fd, s.dir, Buffer.byteLength(line(a))), { alerts: [b, c], skipped: 0, offset: readFileSync(f).length });
      });
      // Whole lines and a torn one in the same read: the whole ones, and the offset stops before the torn one.
      const d = alert();
      const whole = readFileSync(f).length;
      appendFileSync(f, line(d).slice(0, 15));
      assert.deepEqual(readAlertsFrom(t2.root, 0), { alerts: [a, b, c], skipped: 0, offset: whole });
      appendFileSync(f, line(d).slice(15));
      assert.deepEqual(readAlertsFrom(t2.root, whole), { alerts: [d], skipped: 0, offset: whole + Buffer.byteLength(line(d)) });
    });

    it('lines that are not alerts are skipped and counted; blank lines are neither', async () => {
      const t2 = await ioInitRoot();
      const f = t2.s('alerts.jsonl');
      const a = alert(), b = alert();
      writeFileSync(f, [line(a), '{"torn": tr\n', '\n', '   \n', 'null\n', '42\n', '{"id":"x"}\n', '{"path":"p"}\n', '{"id":1,"path":"p"}\n', line(b)].join(''), { mode: 0o600 });
      assert.deepEqual(readAlerts(t2.root), { alerts: [a, b], skipped: 6 });
      assert.deepEqual(lastAlerts(t2.root, 5), [a, b]);
    });

    it('before init: no alerts, nothing made', () => {
      const r = ioRoot();
      assert.deepEqual(readAlerts(r.root), { alerts: [], skipped: 0 });
      assert.deepEqual(readAlertsFrom(r.root, 77), { alerts: [], skipped: 0, offset: 77 });
      assert.deepEqual(lastAlerts(r.root, 3), []);
      assert.equal(existsSync(r.p('snapshots')), false);
    });

    it('no alerts.jsonl yet: none, and lastAlerts is empty', async () => {
      const t2 = await ioInitRoot();
      rmSync(t2.s('alerts.jsonl'), { force: true });
      assert.deepEqual(readAlerts(t2.root), { alerts: [], skipped: 0 });
      assert.deepEqual(lastAlerts(t2.root, 4), []);
    });
  });

  describe('the newest alerts, read backwards in 1 MiB pieces', () => {
    it('across pieces: exactly the newest n, oldest first; a line longer than a piece is read whole', async () => {
      const t = await ioInitRoot();
      const f = t.s('alerts.jsonl');
      const pad = 'p'.repeat(400);
      const many = Array.from({ length: 4000 }, (_, i) => alert({ id: `m${i}`, detail: pad }));
      writeFileSync(f, many.map(line).join(''), { mode: 0o600 });
      assert.ok(statSync(f).size > 1.5 * (1 << 20), 'more than one piece');
      assert.deepEqual(lastAlerts(t.root, 3).map((a) => a.id), ['m3997', 'm3998', 'm3999']);
      const last3000 = lastAlerts(t.root, 3000);
      assert.equal(last3000.length, 3000);
      assert.deepEqual(last3000, many.slice(1000));
      assert.deepEqual(lastAlerts(t.root, 10_000), many, 'more asked than there are: all of them');
      const all = readAlerts(t.root);
      assert.equal(all.skipped, 0);
      assert.deepEqual(all.alerts, many, 'read forwards across the pieces too');
      // One alert longer than a piece, between short ones.
      const big = alert({ id: 'big', detail: 'b'.repeat((1 << 20) + 5000) });
      const after = alert({ id: 'after' });
      appendFileSync(f, line(big) + line(after));
      assert.deepEqual(lastAlerts(t.root, 2).map((a) => a.id), ['big', 'after']);
      assert.deepEqual(lastAlerts(t.root, 3).map((a) => a.id), ['m3999', 'big', 'after']);
      assert.equal(lastAlerts(t.root, 2)[0]?.detail?.length, (1 << 20) + 5000);
      const fw = readAlertsFrom(t.root, 0);
      assert.deepEqual(fw.alerts.slice(-2).map((a) => a.id), ['big', 'after']);
      assert.equal(fw.offset, statSync(f).size);
    });

    it('a file of one line longer than a piece, with no newline before it', async () => {
      const t = await ioInitRoot();
      const big = alert({ id: 'only', detail: 'q'.repeat((1 << 20) * 2 + 17) });
      writeFileSync(t.s('alerts.jsonl'), line(big), { mode: 0o600 });
      assert.deepEqual(lastAlerts(t.root, 5).map((a) => a.id), ['only']);
      assert.deepEqual(readAlerts(t.root).alerts.map((a) => a.id), ['only']);
    });
  });

  describe('a damaged alerts.jsonl', () => {
    const damaged = (dir: string) => `${dir}/alerts.jsonl is not a regular file (the store is damaged; the running guard moves it into quarantine and recreates it)`;
    const refuses = (fn: () => unknown, message: string) =>
      assert.throws(fn, (e: unknown) => { assert.ok(e instanceof WardenError, String(e)); assert.equal(e.message, message); return true; });

    it('a directory, a FIFO or a link in its place: said in plain words (never followed, never blocking)', async () => {
      const t = await ioInitRoot();
      const f = t.s('alerts.jsonl');
      rmSync(f, { force: true });
      mkdirSync(f);
      await withIoStore(t, (s) => {
        refuses(() => readStoreAlerts(s.fd, s.dir), damaged(s.dir));
        refuses(() => readStoreAlertsFrom(s.fd, 'WHERE', 10), damaged('WHERE'));
      });
      refuses(() => readAlerts(t.root), damaged(t.s('').replace(/\/$/, '')));
      refuses(() => lastAlerts(t.root, 1), damaged(t.s('').replace(/\/$/, '')));
      rmSync(f, { recursive: true });
      execFileSync('mkfifo', [f]);
      refuses(() => readAlerts(t.root), damaged(t.s('').replace(/\/$/, '')));
      await withIoStore(t, (s) => {
        // A FIFO: refused for what it is, before any open (which would wait for a reader, or fail ENXIO).
        assert.throws(() => appendAlert(s.fd, alert()), (e: unknown) => (e as NodeJS.ErrnoException).code === 'EINVAL' && (e as Error).message === 'alerts.jsonl is not a regular file');
      });
      rmSync(f);
      // A character device (a null device made here): refused the same way, never opened.
      execFileSync('mknod', [f, 'c', '1', '3']);
      await withIoStore(t, (s) => {
        assert.throws(() => appendAlert(s.fd, alert()), (e: unknown) => (e as NodeJS.ErrnoException).code === 'EINVAL' && (e as Error).message === 'alerts.jsonl is not a regular file');
      });
      rmSync(f);
      const target = join(t.scratch, 'elsewhere.jsonl');
      writeFileSync(target, line(alert()));
      symlinkSync(target, f);
      refuses(() => readAlerts(t.root), damaged(t.s('').replace(/\/$/, '')));
      const before = readFileSync(target, 'utf8');
      await withIoStore(t, (s) => {
        assert.throws(() => appendAlert(s.fd, alert()), (e: unknown) => (e as NodeJS.ErrnoException).code === 'ELOOP');
      });
      assert.equal(readFileSync(target, 'utf8'), before, 'nothing appended through the link');
    });
  });

  describe('findAlert and newAlertId', () => {
    it('finds an alert by id (the newest line with it), or a folded member as the folded alert with its own id, path and quarantine', () => {
      const plain = alert({ id: 'p1' });
      const folded = alert({ id: 'f1', path: 'orgs/a.toml', quarantine: 'q/a', count: 3, reason: 'deleted',
        folded: [{ id: 'm1', path: 'orgs/b.toml', quarantine: 'q/b' }, { id: 'm2', path: 'orgs/c.toml', quarantine: 'q/c' }] });
      const newer = alert({ id: 'p1', detail: 'newer' });
      const list = [plain, folded, newer, alert({ id: 'odd', folded: [null as unknown as { id: string; path: string; quarantine: string }] })];
      assert.equal(findAlert(list, 'p1'), newer);
      assert.equal(findAlert(list, 'f1'), folded);
      const { folded: _f, count: _c, ...rest } = folded;
      assert.deepEqual(findAlert(list, 'm2'), { ...rest, id: 'm2', path: 'orgs/c.toml', quarantine: 'q/c', folded_into: 'f1' });
      assert.deepEqual(findAlert(list, 'm1'), { ...rest, id: 'm1', path: 'orgs/b.toml', quarantine: 'q/b', folded_into: 'f1' });
      assert.equal(findAlert(list, 'nope'), undefined);
      assert.equal(findAlert([], 'p1'), undefined);
    });

    it('ids: base-36 time, a counter, 4 hex digits; unique and sortable within a storm', () => {
      const now = 1_790_000_000_000;
      const ids = Array.from({ length: 50 }, () => newAlertId(now));
      for (const id of ids) assert.match(id, new RegExp(`^${now.toString(36)}[0-9a-z]{2}-[0-9a-f]{4}$`));
      assert.equal(new Set(ids.map((i) => i.slice(0, -5))).size, 50, 'the counter differs each time');
      const later = newAlertId(now + 1);
      assert.ok(later.startsWith((now + 1).toString(36)));
    });
  });
});
