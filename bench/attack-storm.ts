/**
 * `node dist/bench/attack-storm.js`: the guard under attack, with the numbers an attack review needs.
 *
 * 1. storm: a child creates new orgs/sN.toml as fast as it can for BENCH_STORM_S (15) s while
 *    a real edit of an approved file is made every 100 ms: revert latency p50/max, how many
 *    files, alert lines vs alerts counted, quarantine entries, snapshots/ size.
 * 2. flood: BENCH_JUNK (1,000,000) empty orgs/junkN.txt present (no glob matches them):
 *    the guard's RSS and CPU while idle, and revert latency p50/max.
 * 3. late writes: 100 truncate-then-write edits (some in 2–3 pieces with pauses): how many
 *    markers are missing from quarantine.
 * Results go to stdout and bench/storm-results.json.
 */
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, readdirSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { cli, makeRoot, readAlertsOf, startDaemon, REPO, TEST_WARDEN_TOML, type Daemon, type TestRoot } from '../test/helpers/root.js';

const STORM_S = Number(process.env.BENCH_STORM_S ?? 15);
const JUNK = Number(process.env.BENCH_JUNK ?? 1_000_000);
const FLOOD = JUNK === 1_000_000 ? 'flood' : `flood_${JUNK}`;
const ORG = 'orgs/bookclub.toml';
const results: Record<string, unknown> = { started: new Date().toISOString() };
const log = (s: string) => process.stderr.write(`[storm] ${s}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
}

function rssMB(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : NaN;
}

function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** Edit ORG and wait until the approved bytes are back: the revert latency in ms. */
async function oneRevert(t: TestRoot, approved: string, i: number): Promise<number> {
  const t0 = performance.now();
  writeFileSync(t.p(ORG), `members = ["bench-${i}"]\n`);
  for (;;) {
    let now = '';
    try { now = readFileSync(t.p(ORG), 'utf8'); } catch { /* between unlink and rename: never, rename is atomic */ }
    if (now === approved) return performance.now() - t0;
    if (performance.now() - t0 > 120_000) return Infinity;
    await new Promise((r) => setImmediate(r));
  }
}

async function storm(): Promise<void> {
  const t = makeRoot();
  try {
    cli(t, ['init']);
    const d = await startDaemon(t);
    const approved = readFileSync(t.p(ORG), 'utf8');
    const creator = spawn(process.execPath, ['-e', `
      const fs = require('fs'); const end = Date.now() + ${STORM_S * 1000}; let i = 0;
      while (Date.now() < end) { try { fs.writeFileSync(${JSON.stringify(t.p('orgs'))} + '/s' + i + '.toml', 'members = []\\n'); } catch {} i++; }
      console.log(i);`], { stdio: ['ignore', 'pipe', 'inherit'] });
    let made = '';
    creator.stdout.on('data', (b) => { made += String(b); });
    const done = new Promise<void>((r) => creator.once('exit', () => r()));
    const lat: number[] = [];
    let running = true;
    void done.then(() => { running = false; });
    for (let i = 0; running; i++) {
      lat.push(await oneRevert(t, approved, i));
      await sleep(100);
    }
    await done;
    const files = Number(made.trim());
    log(`storm: ${files} files in ${STORM_S} s; reverts p50 ${pct(lat, 50).toFixed(1)} ms max ${Math.max(...lat).toFixed(1)} ms; waiting for the guard to work the storm off`);
    const t1 = Date.now();
    for (;;) {
      const left = readdirSync(t.p('orgs')).filter((n) => n.startsWith('s')).length;
      if (left === 0 || Date.now() - t1 > 600_000) break;
      await sleep(500);
    }
    const drainS = (Date.now() - t1) / 1000;
    await sleep(11_000); // the last fold window closes
    const alerts = readAlertsOf(t);
    const du = spawnSync('du', ['-sm', t.p('snapshots')], { encoding: 'utf8' }).stdout.split('\t')[0];
    results.storm = {
      seconds: STORM_S, files_created: files, revert_edits: lat.length,
      revert_p50_ms: +pct(lat, 50).toFixed(1), revert_p99_ms: +pct(lat, 99).toFixed(1), revert_max_ms: +Math.max(...lat).toFixed(1),
      drained_after_storm_s: drainS, alert_lines: alerts.length, alerts_counted: alerts.reduce((n, a) => n + (a.count ?? 1), 0),
      quarantine_entries: readdirSync(t.p('snapshots/quarantine')).length, snapshots_mb: Number(du), guard_rss_mb: rssMB(d.proc.pid!),
      stderr_lines: d.stderr().split('\n').length,
    };
    await d.stop();
  } finally { t.cleanup(); }
}

async function flood(): Promise<void> {
  const t = makeRoot();
  try {
    cli(t, ['init']);
    log(`flood: creating ${JUNK} empty orgs/junkN.txt`);
    const c0 = Date.now();
    spawnSync(process.execPath, ['-e', `const fs = require('fs'); for (let i = 0; i < ${JUNK}; i++) fs.closeSync(fs.openSync(${JSON.stringify(t.p('orgs'))} + '/junk' + i + '.txt', 'w'));`], { stdio: 'inherit' });
    log(`flood: created in ${((Date.now() - c0) / 1000).toFixed(0)} s; starting the guard`);
    const s0 = Date.now();
    const d: Daemon = await startDaemon(t);
    const readyS = (Date.now() - s0) / 1000;
    const rssReady = rssMB(d.proc.pid!);
    await sleep(5000);
    // 65 s idle: two backstop rescans (rescan_seconds = 30) fall inside.
    const cpu0 = cpuSeconds(d.proc.pid!);
    await sleep(65_000);
    const idleCpu = (cpuSeconds(d.proc.pid!) - cpu0) / 65;
    const rssIdle = rssMB(d.proc.pid!);
    const approved = readFileSync(t.p(ORG), 'utf8');
    const lat: number[] = [];
    for (let i = 0; i < 50; i++) { lat.push(await oneRevert(t, approved, i)); await sleep(50); }
    // A backstop rescan lists orgs/ (streaming): what one costs with the flood present.
    const r0 = Date.now();
    cli(t, ['verify']);
    const verifyS = (Date.now() - r0) / 1000;
    results[FLOOD] = {
      unprotected_files: JUNK, start_to_ready_s: readyS, guard_rss_at_ready_mb: rssReady, guard_rss_idle_mb: rssIdle, guard_cpu_idle_cores: +idleCpu.toFixed(3),
      revert_p50_ms: +pct(lat, 50).toFixed(1), revert_max_ms: +Math.max(...lat).toFixed(1), guard_rss_after_reverts_mb: rssMB(d.proc.pid!),
      verify_s: verifyS,
    };
    await d.stop();
  } finally { t.cleanup(); }
}

async function lateWrites(): Promise<void> {
  const t = makeRoot({ wardenToml: TEST_WARDEN_TOML });
  try {
    cli(t, ['init']);
    const d = await startDaemon(t);
    const approved = readFileSync(t.p(ORG), 'utf8');
    const markers: string[] = [];
    for (let i = 0; i < 100; i++) {
      const marker = `late-${i}-${Math.random().toString(36).slice(2)}`;
      markers.push(marker);
      const fd = openSync(t.p(ORG), 'w');
      pause(i % 2 ? 15 : 3);
      const text = `members = ["${marker}"]\n`;
      const pieces = i % 3 === 0 ? [text] : i % 3 === 1 ? [text.slice(0, 9), text.slice(9)] : [text.slice(0, 5), text.slice(5, 14), text.slice(14)];
      for (const [k, p] of pieces.entries()) { if (k) pause(4); writeSync(fd, p); }
      closeSync(fd);
      for (let k = 0; readFileSync(t.p(ORG), 'utf8') !== approved && k < 10_000; k++) await sleep(2);
    }
    await sleep(500);
    const kept = readdirSync(t.p('snapshots/quarantine')).flatMap((id) => readdirSync(t.p(`snapshots/quarantine/${id}`)).map((n) => readFileSync(t.p(`snapshots/quarantine/${id}/${n}`), 'utf8'))).join('\n');
    results.late_writes = { edits: 100, markers_lost: markers.filter((m) => !kept.includes(m)).length };
    await d.stop();
  } finally { t.cleanup(); }
}

const which = process.argv.slice(2);
for (const [name, fn] of [['storm', storm], ['flood', flood], ['late', lateWrites]] as const) {
  if (which.length && !which.includes(name)) continue;
  log(`${name}…`);
  await fn();
  log(JSON.stringify(results));
}
results.finished = new Date().toISOString();
// Sections not run this time keep their last numbers.
const file = join(REPO, 'bench', 'storm-results.json');
let previous: Record<string, unknown> = {};
try { previous = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>; } catch { /* first run */ }
writeFileSync(file, JSON.stringify({ ...previous, ...results }, null, 2) + '\n');
process.stdout.write(JSON.stringify(results, null, 2) + '\n');
