/**
 * The delivery state is written incrementally: one appended log line per write, whose size
 * does not grow with the deliveries before it; the log is compacted into the snapshot; a
 * torn last line is skipped with a warning; SIGKILL at random moments (appends and
 * compactions) never loses a write that was reported durable and never breaks loading.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { StateWriter, diffState } from '../../src/notifier/state-writer.js';
import { applyOps, defaultNotifierStateDir, emptyChannelState, loadState, type NotifierStateFile } from '../../src/notifier/delivery-state.js';
import { cli, makeInitRoot } from '../helpers/root.js';
import { waitFor } from '../helpers/wait-for.js';
import { fixture } from './helpers.js';

const wchar = (): number => Number(/^wchar: (\d+)$/m.exec(readFileSync('/proc/self/io', 'utf8'))![1]);
const sizeOf = (p: string): number => (existsSync(p) ? statSync(p).size : 0);
const fresh = (root: string): NotifierStateFile => ({
  version: 1, root, updated: '', notifier: { pid: process.pid, started: new Date().toISOString() },
  channels: { discord: emptyChannelState(), desktop: emptyChannelState() }, expired: {}, last_liveness: null,
});

test('1,000 deliveries: bytes written per delivery do not grow with the past ones; the log is compacted', { timeout: 120_000 }, async (t) => {
  const fx = fixture();
  try {
    const logs: string[] = [];
    const state = fresh(fx.root);
    const w = new StateWriter(fx.stateDir, fx.root, () => state, (l) => logs.push(l), { compactBytes: 32 * 1024 });
    assert.equal(w.load(), null);
    await w.save(); // the first write is the snapshot
    const logFile = join(fx.stateDir, 'delivery-state.log');
    const snapFile = join(fx.stateDir, 'delivery-state.json');
    const perDelivery: number[] = [];
    let compactions = 0;
    let maxLog = 0;
    for (let i = 0; i < 1000; i++) {
      // Discord delivers; the desktop channel is down, so its attempts (and Discord's
      // delivered entries, not delivered everywhere yet) pile up: the state grows.
      const id = `alert-${String(i).padStart(5, '0')}`;
      const t = new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60, i % 1000)).toISOString();
      state.channels.discord!.delivered[id] = t;
      state.channels.discord!.last_success = t;
      state.channels.discord!.status = 'ok';
      state.channels.desktop!.attempts[id] = { count: 1, last_error: 'no D-Bus session', last_attempt: t };
      state.channels.desktop!.status = 'unavailable';
      const logBefore = sizeOf(logFile);
      const ino = statSync(snapFile).ino;
      const before = wchar();
      await w.save();
      perDelivery.push(wchar() - before);
      if (statSync(snapFile).ino !== ino) { compactions++; assert.ok(sizeOf(logFile) < logBefore || sizeOf(logFile) === 0, 'a compaction empties the log'); }
      maxLog = Math.max(maxLog, sizeOf(logFile));
    }
    const appends = perDelivery.filter((b) => b < 2048);
    // The largest append among deliveries 10-110 against the last 100 (the first ones also
    // record the channels' status; a record carries `updated` unless it is the same ms).
    const early = Math.max(...appends.slice(10, 110));
    const late = Math.max(...appends.slice(-100));
    assert.ok(late <= early + 8, `a late delivery writes up to ${late} bytes, an early one up to ${early}: no growth with the past (the sequence number gains digits)`);
    assert.ok(Math.max(...appends.slice(-100)) < 1024, 'an append stays one small record');
    const snapshot = sizeOf(snapFile);
    const whole = JSON.stringify(state).length;
    assert.ok(whole > 100_000, `the state really grew (${whole} bytes): a whole rewrite per delivery would write that much each time`);
    const total = perDelivery.reduce((a, b) => a + b, 0);
    t.diagnostic(`largest append ${early} B (deliveries 10-110) / ${late} B (last 100); total ${total} B for 1,000 (whole state at the end ${whole} B); ${compactions} compactions; log max ${maxLog} B`);
    assert.ok(total < 1000 * early * 3, `amortised with compactions, ${total} bytes for 1,000 deliveries (${(total / 1000).toFixed(0)} per delivery, ${early} per append)`);
    assert.ok(compactions >= 1, `the log was compacted (${compactions} times)`);
    assert.ok(maxLog <= Math.max(32 * 1024, 2 * snapshot) + 1024, `the log stays bounded (max ${maxLog} bytes)`);
    // What the files hold is the state: snapshot plus log replayed.
    const loaded = loadState(fx.stateDir, fx.root)!;
    assert.equal(loaded.skipped, 0);
    const { log_seq: _seq, ...onDisk } = loaded.state;
    const { log_seq: _s2, ...inMemory } = JSON.parse(JSON.stringify(state)) as NotifierStateFile;
    assert.deepEqual(onDisk, inMemory);
    assert.equal(statSync(logFile).mode & 0o777, 0o600, 'the log is 0600');
    assert.deepEqual(logs, []);
  } finally { fx.cleanup(); }
});

test('a torn last line is skipped with a warning, and the next start compacts it away', async () => {
  const fx = fixture();
  try {
    const state = fresh(fx.root);
    const w = new StateWriter(fx.stateDir, fx.root, () => state, () => {}, { compactBytes: 1 << 20 });
    await w.save();
    for (let i = 0; i < 5; i++) { state.channels.discord!.delivered[`a${i}`] = `2026-01-01T00:00:0${i}.000Z`; await w.save(); }
    const logFile = join(fx.stateDir, 'delivery-state.log');
    assert.ok(sizeOf(logFile) > 0, 'the writes went to the log');
    // A write cut short by a crash: half a record, no newline.
    appendFileSync(logFile, '{"seq":7,"ops":[[["channels","discord","delivered","a5"],"2026-01-');
    const loaded = loadState(fx.stateDir, fx.root)!;
    assert.equal(loaded.skipped, 1);
    assert.deepEqual(Object.keys(loaded.state.channels.discord!.delivered), ['a0', 'a1', 'a2', 'a3', 'a4']);
    const logs: string[] = [];
    // eslint-disable-next-line prefer-const -- read by the writer's closure before it is loaded
    let next!: NotifierStateFile;
    const w2 = new StateWriter(fx.stateDir, fx.root, () => next, (l) => logs.push(l), { compactBytes: 1 << 20 });
    next = w2.load()!;
    assert.match(logs.join('\n'), /ignored 1 incomplete or damaged line\(s\) in the delivery log/);
    await w2.save();
    assert.equal(existsSync(logFile), false, 'the first write after a start compacts (the torn line goes with the log)');
    next.channels.discord!.delivered.a5 = '2026-01-01T00:00:05.000Z';
    await w2.save();
    assert.deepEqual(Object.keys(loadState(fx.stateDir, fx.root)!.state.channels.discord!.delivered), ['a0', 'a1', 'a2', 'a3', 'a4', 'a5']);
  } finally { fx.cleanup(); }
});

test('warden status names the ignored lines of a torn delivery log (JSON and text), and still reports', async () => {
  const t = makeInitRoot();
  try {
    const stateDir = defaultNotifierStateDir(t.root, true);
    const state = fresh(t.root);
    const w = new StateWriter(stateDir, t.root, () => state, () => {});
    await w.save();
    state.channels.discord!.delivered.x = '2026-01-01T00:00:00.000Z';
    await w.save();
    appendFileSync(join(stateDir, 'delivery-state.log'), '{"seq":3,"ops":[[["upd');
    const json = cli(t, ['status', '--json']);
    assert.equal((JSON.parse(json.stdout) as { delivery: { log_lines_ignored: number } }).delivery.log_lines_ignored, 1, json.stderr);
    const text = cli(t, ['status']);
    assert.match(text.stdout, /delivery log: 1 incomplete or damaged line\(s\) ignored/);
  } finally { t.cleanup(); }
});

test('diffState and applyOps: the changes reproduce the new state, own keys only', () => {
  const a = { x: 1, o: { k: 'v', gone: true, deep: { n: 1 } }, arr: [1, 2] };
  const b = { x: 2, o: { k: 'v', deep: { n: 2, m: 3 }, __proto__x: 1 }, arr: [1, 3], added: { z: null } };
  const copy = JSON.parse(JSON.stringify(a)) as Record<string, unknown>;
  applyOps(copy, diffState(a, b));
  assert.deepEqual(copy, b);
  const target: Record<string, unknown> = {};
  applyOps(target, [[['__proto__', 'polluted'], true]]);
  assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype is reached');
});

test('SIGKILL at random moments: every write reported durable survives, loading never fails', { timeout: 120_000 }, async () => {
  const fx = fixture();
  try {
    const script = fileURLToPath(new URL('./state-writer-child.js', import.meta.url));
    let durable = 0;
    for (let trial = 0; trial < 12; trial++) {
      const proc = spawn(process.execPath, [script], { env: { ...process.env, WARDEN_TEST_STATE_WRITER: JSON.stringify({ stateDir: fx.stateDir, root: fx.root }) }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      proc.stdout!.on('data', (d: Buffer) => { out += d.toString(); });
      proc.stderr!.on('data', (d: Buffer) => { err += d.toString(); });
      const exited = new Promise<void>((r) => proc.on('exit', () => r()));
      const target = durable + 20 + Math.floor(Math.random() * 200);
      await waitFor(() => { const m = out.match(/saved (\d+)\n/g); return !!m && Number(m.at(-1)!.slice(6)) >= target; }, 30_000, `child reached ${target} writes (stderr: ${err})`);
      await new Promise((r) => setTimeout(r, Math.random() * 20)); // land anywhere: append, fsync, compaction
      proc.kill('SIGKILL');
      await exited;
      const reported = Math.max(...(out.match(/saved (\d+)\n/g) ?? ['saved 0']).map((s) => Number(s.slice(6))));
      const loaded = loadState(fx.stateDir, fx.root);
      assert.ok(loaded, `trial ${trial}: the state loads after a kill`);
      const keys = Object.keys(loaded.state.channels.discord?.delivered ?? {}).sort();
      assert.ok(keys.length >= reported, `trial ${trial}: ${keys.length} deliveries on disk, ${reported} reported durable`);
      assert.deepEqual(keys, Array.from({ length: keys.length }, (_, i) => `d${String(i).padStart(6, '0')}`), `trial ${trial}: a prefix, nothing skipped`);
      durable = keys.length;
    }
    assert.ok(durable > 240, `${durable} deliveries across 12 kills`);
  } finally { fx.cleanup(); }
});
