/**
 * `npm run bench`: warden's speed and footprint side by side with references (issue 7).
 * Prints a table on stdout, progress on stderr, and writes bench/results.json.
 * See docs/BENCHMARKS.md for what each number means.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { cpus, availableParallelism, tmpdir, totalmem } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { randomBytes } from 'node:crypto';
import { DiscordEmulator } from '../test/helpers/discord-emulator.js';
import {
  BENCH_DIST, CLI, REPO, TOKEN, cleanupTemps, killGroup, trackGroup, cpuSeconds, log, makeRoot, median, memMB, newTempDir, sleep, startReady,
  summary, timed, waitFor, wardenSync, wardenToml, type BenchRoot, type Proc,
} from './lib.js';

const RESULTS = join(REPO, 'bench', 'results.json');
const N_REVERT = Number(process.env.BENCH_REVERT_WRITES ?? 300);
const N_FILES = Number(process.env.BENCH_FILES ?? 10_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const IDLE_S = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
const STORM_RATE = 1000;
const STORM_S = Number(process.env.BENCH_STORM_SECONDS ?? 10);
const CRASH_TRIALS = Number(process.env.BENCH_CRASH_TRIALS ?? 1000);
/** The crash trials are stopped this long after the bench started (the storm, ~15 s, comes after). */
const CRASH_BUDGET_S = Number(process.env.BENCH_CRASH_BUDGET_SECONDS ?? 225);

type Json = Record<string, unknown>;
const results: Json = { started: new Date().toISOString() };
const save = () => writeFileSync(RESULTS, JSON.stringify(results, null, 2) + '\n');

const node = process.execPath;
const warden = (args: string[]) => [CLI, ...args];

// ---------------------------------------------------------------- machine

function sh(cmd: string): string {
  const r = spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });
  return (r.stdout ?? '').trim();
}

function machine(): Json {
  const m = {
    nproc: availableParallelism(),
    cpu: cpus()[0]?.model ?? 'unknown',
    memGB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    os: sh('. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME"') || process.platform,
    kernel: sh('uname -r'),
    tmpdir: tmpdir(),
    disk: sh(`findmnt -n -T ${tmpdir()} -o SOURCE,FSTYPE,OPTIONS | head -1`),
    diskRotational: sh(`lsblk -ndo ROTA "$(findmnt -n -T ${tmpdir()} -o SOURCE | head -1)" 2>/dev/null`) || 'unknown',
    commit: sh(`git -C ${REPO} rev-parse --short HEAD`),
  };
  return m;
}

// ---------------------------------------------------------------- 1. revert latency

/**
 * Waits for the approved bytes to be readable at `file` again. Driven by a watch on the
 * directory (each event: read and compare) with a 1 ms poll as a fallback, so the observer
 * is the same for warden and the floor.
 */
class RevertObserver {
  private w: FSWatcher;
  private pending: { resolve: (t: number) => void } | null = null;
  private timer: NodeJS.Timeout | null = null;
  constructor(private readonly file: string, private readonly approved: Buffer) {
    const name = basename(file);
    this.w = watch(dirname(file), (_e, n) => { if (n === name) this.look(); });
  }
  private look(): void {
    if (!this.pending) return;
    let cur: Buffer | null = null;
    try { cur = readFileSync(this.file); } catch { cur = null; }
    if (cur && cur.equals(this.approved)) {
      const t = performance.now();
      const p = this.pending;
      this.pending = null;
      if (this.timer) { clearInterval(this.timer); this.timer = null; }
      p.resolve(t);
    }
  }
  /** Write `bad` in place and resolve with ms until the approved bytes are back. */
  async attack(bad: Buffer, timeoutMs = 5000): Promise<number> {
    const done = new Promise<number>((resolve) => { this.pending = { resolve }; });
    const t0 = performance.now();
    writeFileSync(this.file, bad); // open(O_TRUNC) + write + close: an in-place edit
    this.look();
    this.timer = setInterval(() => this.look(), 1);
    const to = new Promise<number>((resolve) => setTimeout(() => resolve(-1), timeoutMs).unref());
    const t = await Promise.race([done, to]);
    if (t < 0) { this.pending = null; if (this.timer) clearInterval(this.timer); this.timer = null; return NaN; }
    return t - t0;
  }
  close(): void { this.w.close(); if (this.timer) clearInterval(this.timer); }
}

async function revertLatency(): Promise<Json> {
  const approved = Buffer.from('# approved: 60 bytes of settings the owner signed off on.\n');
  const r = makeRoot('revert', () => wardenToml({ protect: ['data/*.txt'] }), { 'data/target.txt': approved });
  const init = wardenSync(r, ['init']);
  if (init.code !== 0) throw new Error(`warden init failed: ${init.stderr}`);
  const floorDir = newTempDir('floor');
  const floorFile = join(floorDir, 'target.txt');
  writeFileSync(floorFile, approved);

  const procs: Proc[] = [];
  try {
    const g = await startReady(node, warden(['run', '--guard', '--root', r.root]), r.env);
    procs.push(g);
    const f = await startReady(node, [join(BENCH_DIST, 'floor.js'), floorFile], r.env);
    procs.push(f);
    const targets = { warden: new RevertObserver(r.p('data/target.txt'), approved), floor: new RevertObserver(floorFile, approved) };
    const lat: Record<'warden' | 'floor', number[]> = { warden: [], floor: [] };
    let timeouts = 0;
    const WARMUP = 20;
    try {
      for (let i = -WARMUP; i < N_REVERT; i++) {
        // Alternate which one goes first, so drift in the machine hits both alike.
        const order: ('warden' | 'floor')[] = i % 2 ? ['warden', 'floor'] : ['floor', 'warden'];
        for (const who of order) {
          const bad = Buffer.from(`tampered ${who} ${i} ${randomBytes(8).toString('hex')}\n`);
          const ms = await targets[who].attack(bad);
          if (Number.isNaN(ms)) { timeouts++; log(`revert: ${who} write ${i} not reverted within 5 s`); }
          else if (i >= 0) lat[who].push(ms);
          // Space the writes: let trailing checks and the rename's own events settle.
          await sleep(40);
        }
        if (i > 0 && i % 100 === 0) log(`revert latency: ${i}/${N_REVERT}`);
      }
    } finally {
      targets.warden.close();
      targets.floor.close();
    }
    const reverts = (g.stderr().match(/^<4>warden: reverted data\/target\.txt/gm) ?? []).length;
    const w = summary(lat.warden);
    const fl = summary(lat.floor);
    return {
      writes: N_REVERT, warmup: WARMUP, timeouts, wardenJournalReverts: reverts,
      warden: w, floor: fl,
      ratio: { p50: w.p50 / fl.p50, p90: w.p90 / fl.p90, p99: w.p99 / fl.p99, max: w.max / fl.max },
      targets: { p50Ratio: 1.5, p99Ratio: 2 },
      met: { p50: w.p50 / fl.p50 <= 1.5, p99: w.p99 / fl.p99 <= 2 },
    };
  } finally {
    for (const p of procs) await p.stop();
  }
}

// ---------------------------------------------------------------- the 10,000-file root

function bigRoot(api: string): BenchRoot {
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < N_FILES; i++) files[`data/f${String(i).padStart(5, '0')}.txt`] = randomBytes(1024);
  return makeRoot('10k', (tokenFile) => wardenToml({ protect: ['data/*.txt'], discordApi: api, tokenFile }), files);
}

// ---------------------------------------------------------------- 2. verify throughput

function ensureAide(): { ok: boolean; note: string } {
  if (spawnSync('sh', ['-c', 'command -v aide'], { encoding: 'utf8' }).status === 0) return { ok: true, note: 'installed' };
  log('aide is missing: apt-get update && apt-get install -y aide');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const u = spawnSync('apt-get', ['update', '-qq'], { encoding: 'utf8', env, timeout: 120_000 });
  if (u.status !== 0) return { ok: false, note: `apt-get update failed (${u.status ?? u.error?.message}): ${(u.stderr ?? '').trim().split('\n').slice(-1)[0] ?? ''}` };
  const i = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'aide'], { encoding: 'utf8', env, timeout: 180_000 });
  if (i.status !== 0) return { ok: false, note: `apt-get install aide failed (${i.status ?? i.error?.message}): ${(i.stderr ?? '').trim().split('\n').slice(-1)[0] ?? ''}` };
  return spawnSync('sh', ['-c', 'command -v aide']).status === 0 ? { ok: true, note: 'installed by the bench' } : { ok: false, note: 'aide not on PATH after install' };
}

const TREES = ['config', 'orgs', 'blocks', 'data'];

async function verifyThroughput(r: BenchRoot): Promise<Json> {
  const out: Json = { files: N_FILES, fileBytes: 1024, runs: RUNS };
  // Warm the page cache the same way for everyone.
  await timed('sh', ['-c', `cd "$1" && find ${TREES.join(' ')} -type f -print0 | xargs -0 cat > /dev/null`, 'sh', r.root], r.env);

  const w: number[] = [];
  await timed(node, warden(['verify', '--root', r.root]), r.env); // warm-up
  for (let i = 0; i < RUNS; i++) w.push((await timed(node, warden(['verify', '--root', r.root]), r.env)).ms);
  const s: number[] = [];
  for (let i = 0; i < RUNS; i++) s.push((await timed('sh', ['-c', `cd "$1" && find ${TREES.join(' ')} -type f -print0 | xargs -0 sha256sum > /dev/null`, 'sh', r.root], r.env)).ms);
  out.wardenMs = median(w);
  out.wardenRuns = w;
  out.sha256sumMs = median(s);
  out.sha256sumRuns = s;
  out.ratioToSha256sum = median(w) / median(s);
  log(`verify: warden ${median(w).toFixed(0)} ms, sha256sum ${median(s).toFixed(0)} ms`);

  const aide = ensureAide();
  out.aideNote = aide.note;
  if (aide.ok) {
    const dir = newTempDir('aide');
    const conf = join(dir, 'aide.conf');
    writeFileSync(conf, [
      `database_in=file:${dir}/aide.db`,
      `database_out=file:${dir}/aide.db.new`,
      'gzip_dbout=no',
      'report_url=stdout',
      'Bench = p+i+n+u+g+s+m+c+sha256',
      ...TREES.map((t) => `${r.root}/${t} Bench`),
      '',
    ].join('\n'));
    const init = await timed('aide', ['--init', `--config=${conf}`], r.env, [0]);
    out.aideInitMs = init.ms;
    writeFileSync(join(dir, 'aide.db'), readFileSync(join(dir, 'aide.db.new')));
    const a: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const c = await timed('aide', ['--check', `--config=${conf}`], r.env, [0]);
      a.push(c.ms);
    }
    out.aideMs = median(a);
    out.aideRuns = a;
    out.aideOverWarden = median(a) / median(w);
    log(`verify: aide --check ${median(a).toFixed(0)} ms`);
  }
  out.met = { sha256sum: (out.ratioToSha256sum as number) <= 3, aide: aide.ok ? (out.aideOverWarden as number) >= 15 : null };
  return out;
}

// ---------------------------------------------------------------- 3. startup

async function startup(r: BenchRoot): Promise<Json> {
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const g = await startReady(node, warden(['run', '--guard', '--root', r.root]), r.env, 60_000);
    ms.push(g.readyMs);
    await g.stop();
  }
  log(`startup: ${ms.map((x) => x.toFixed(0)).join(', ')} ms`);
  return { files: N_FILES, runs: ms, medianMs: median(ms), target: 1000, met: median(ms) <= 1000 };
}

// ---------------------------------------------------------------- 4. idle footprint

async function footprint(r: BenchRoot): Promise<Json> {
  const procs: Proc[] = [];
  try {
    const g = await startReady(node, warden(['run', '--guard', '--root', r.root]), r.env, 60_000);
    procs.push(g);
    const n = await startReady(node, warden(['run', '--notifier', '--root', r.root]), r.env, 60_000);
    procs.push(n);
    await sleep(2000); // let start-up garbage settle
    const who = { guard: g, notifier: n };
    const cpu0 = { guard: cpuSeconds(g.pid), notifier: cpuSeconds(n.pid) };
    const t0 = performance.now();
    const rss: Record<'guard' | 'notifier', number[]> = { guard: [], notifier: [] };
    log(`idle footprint: sampling for ${IDLE_S} s (guard ${g.pid}, notifier ${n.pid})`);
    while (performance.now() - t0 < IDLE_S * 1000) {
      for (const k of ['guard', 'notifier'] as const) rss[k].push(memMB(who[k].pid).rss);
      await sleep(1000);
    }
    const secs = (performance.now() - t0) / 1000;
    const res: Json = { files: N_FILES, seconds: secs, rescanSeconds: 30 };
    for (const k of ['guard', 'notifier'] as const) {
      const m = memMB(who[k].pid);
      const cpu = ((cpuSeconds(who[k].pid) - cpu0[k]) / secs) * 100;
      res[k] = { rssMeanMB: rss[k].reduce((a, b) => a + b, 0) / rss[k].length, rssMaxMB: Math.max(...rss[k], m.rss), hwmMB: m.hwm, cpuPercent: cpu };
    }
    const gr = res.guard as { rssMaxMB: number; cpuPercent: number };
    const nr = res.notifier as { rssMaxMB: number };
    res.met = { guardRss: gr.rssMaxMB <= 60, guardCpu: gr.cpuPercent <= 0.5, notifierRss: nr.rssMaxMB <= 90 };
    return res;
  } finally {
    for (const p of procs) await p.stop();
  }
}

// ---------------------------------------------------------------- 5. storm

function countIn(content: string): number {
  const m = /warden: (\d+) alerts?\b/.exec(content);
  return m ? Number(m[1]) : 1;
}

async function storm(emu: DiscordEmulator): Promise<Json> {
  const approved = Buffer.from('# storm target: approved content\n');
  const r = makeRoot('storm', (tokenFile) => wardenToml({ protect: ['data/*.txt'], discordApi: emu.api, tokenFile }), { 'data/storm.txt': approved });
  const init = wardenSync(r, ['init']);
  if (init.code !== 0) throw new Error(`warden init failed: ${init.stderr}`);
  const procs: Proc[] = [];
  try {
    const d = await startReady(node, warden(['run', '--root', r.root]), r.env);
    procs.push(d);
    const alertsFile = r.p('snapshots/alerts.jsonl');
    const readAlerts = (): { path: string; action: string; id: string }[] => {
      try { return readFileSync(alertsFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as { path: string; action: string; id: string }); } catch { return []; }
    };
    // Wait for the notifier's start-up and any early messages to be over.
    await sleep(500);
    const msgsBefore = emu.messages.length;
    const tStart = Date.now();
    log(`storm: ${STORM_RATE} writes/s for ${STORM_S} s`);
    const wr = await timed(node, [join(BENCH_DIST, 'storm-writer.js'), r.p('data/storm.txt'), String(STORM_RATE), String(STORM_S)], r.env);
    const w = JSON.parse(wr.stdout.trim().split('\n').pop() ?? '{}') as { writes: number; stormMs: number; convergeMs: number };
    log(`storm: ${w.writes} writes in ${w.stormMs.toFixed(0)} ms; converged ${w.convergeMs.toFixed(1)} ms after the last write`);
    // Stays converged?
    await sleep(300);
    const stable = readFileSync(r.p('data/storm.txt')).equals(approved);
    // Every revert recorded, and the notifier catches up (folded, ≤ 1 message per interval).
    const recorded = () => readAlerts().filter((a) => a.path === 'data/storm.txt').length;
    const covered = () => emu.messages.slice(msgsBefore).reduce((a, m) => a + countIn(m.content), 0);
    log('storm: waiting for the notifier to deliver the folded alerts (min_interval_seconds = 10)');
    try { await waitFor(() => covered() >= recorded(), 30_000, 'messages covering every alert', 100); } catch (e) { log(String(e)); }
    await sleep(200);
    const verify = wardenSync(r, ['verify']);
    await d.stop();
    procs.length = 0;
    const journalReverts = (d.stderr().match(/^<4>warden: reverted data\/storm\.txt/gm) ?? []).length;
    const alerts = readAlerts().filter((a) => a.path === 'data/storm.txt');
    const msgs = emu.messages.slice(msgsBefore).filter((m) => m.time >= tStart);
    const gaps = msgs.slice(1).map((m, i) => (m.time - (msgs[i] as { time: number }).time) / 1000);
    return {
      rate: STORM_RATE, seconds: STORM_S, writes: w.writes, stormMs: w.stormMs,
      convergeMs: w.convergeMs, stableAfter300ms: stable, verifyCleanAfter: verify.code === 0,
      journalReverts, alertsRecorded: alerts.length, alertsReverted: alerts.filter((a) => a.action === 'reverted').length,
      messages: msgs.length, messageAlertCounts: msgs.map((m) => countIn(m.content)), minGapSeconds: gaps.length ? Math.min(...gaps) : null,
      minIntervalSeconds: 10,
      met: { converge: w.convergeMs <= 100, everyRevertRecorded: journalReverts === alerts.length, perInterval: gaps.every((g) => g >= 9.5) },
    };
  } finally {
    for (const p of procs) await p.stop();
  }
}

// ---------------------------------------------------------------- 6. crash trials

/**
 * bench/crash-trials.ts runs in its own process group (bench/crash-child.ts, in chunks),
 * overlapping the idle-footprint window, and is stopped at the time budget: the trials of
 * the chunks that finished are counted.
 */
class CrashRun {
  private chunks: Json[] = [];
  private unavailable: string | null = null;
  private proc: ReturnType<typeof spawn> | null = null;
  private exited: Promise<void> = Promise.resolve();
  private t0 = 0;
  private stoppedAtBudget = false;

  start(): void {
    if (!existsSync(join(BENCH_DIST, 'crash-trials.js'))) { this.unavailable = 'crash trials: not available yet'; log(this.unavailable); return; }
    this.t0 = performance.now();
    log(`crash trials: ${CRASH_TRIALS} in the background (own process group)`);
    const p = trackGroup(spawn(node, [join(BENCH_DIST, 'crash-child.js'), String(CRASH_TRIALS), '50'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
    this.proc = p;
    let buf = '';
    p.stdout!.on('data', (d: Buffer) => {
      buf += String(d);
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i); buf = buf.slice(i + 1);
        try {
          const j = JSON.parse(line) as Json;
          if (j.unavailable) this.unavailable = String(j.note ?? 'crash trials: not available yet'); else this.chunks.push(j);
        } catch { /* not ours */ }
      }
    });
    let err = '';
    p.stderr!.on('data', (d: Buffer) => { err = (err + String(d)).slice(-4000); });
    this.exited = new Promise((res) => p.once('exit', (code) => { if (code) log(`crash trials exited ${code}: ${err.slice(-1000)}`); res(); }));
  }

  async finish(deadline: number): Promise<Json> {
    if (this.unavailable) return { available: false, note: this.unavailable };
    if (!this.proc) return { available: false, note: 'not started' };
    const left = Math.max(0, deadline - Date.now());
    const timer = new Promise<'budget'>((res) => setTimeout(() => res('budget'), left));
    const r = await Promise.race([this.exited.then(() => 'done' as const), timer]);
    if (r === 'budget' && this.proc.pid) { this.stoppedAtBudget = true; log('crash trials: time budget reached; stopping them'); killGroup(this.proc.pid); await this.exited; }
    const sum = (k: string) => this.chunks.reduce((a, c) => a + Number(c[k] ?? 0), 0);
    const trials = sum('trials');
    const out: Json = {
      available: true, requested: CRASH_TRIALS, trials, interrupted: sum('interrupted'), mixed: sum('mixed'),
      rolledBack: sum('rolledBack'), rolledForward: sum('rolledForward'), ms: performance.now() - this.t0,
      trialMs: sum('ms'), stoppedAtBudget: this.stoppedAtBudget, chunks: this.chunks,
    };
    out.met = { trials: trials >= 1000, mixed: out.mixed === 0 };
    log(`crash trials: ${trials} done, ${String(out.mixed)} mixed`);
    return out;
  }
}

// ---------------------------------------------------------------- table

const f1 = (x: unknown, d = 1) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(d) : '—');
const ok = (b: unknown) => (b === true ? 'met' : b === false ? 'MISSED' : '—');

function table(): string {
  const rows: string[][] = [['measurement', 'warden', 'reference', 'ratio', 'target', 'result']];
  const rl = results.revert as Json | undefined;
  if (rl && !rl.error) {
    const w = rl.warden as Json; const fl = rl.floor as Json; const ra = rl.ratio as Json; const met = rl.met as Json;
    for (const k of ['p50', 'p90', 'p99', 'max']) {
      rows.push([`revert latency ${k} (ms, n=${rl.writes})`, f1(w[k], 2), `floor ${f1(fl[k], 2)}`, `${f1(ra[k], 2)}×`,
        k === 'p50' ? '≤ 1.5× floor' : k === 'p99' ? '≤ 2× floor' : '', k === 'p50' ? ok(met.p50) : k === 'p99' ? ok(met.p99) : '']);
    }
  } else rows.push(['revert latency', 'error', String(rl?.error ?? 'not run'), '', '', '']);
  const v = results.verify as Json | undefined;
  if (v && !v.error) {
    const met = v.met as Json;
    rows.push([`verify ${N_FILES} × 1 KiB (ms, median of ${RUNS})`, f1(v.wardenMs, 0), `sha256sum ${f1(v.sha256sumMs, 0)}`, `${f1(v.ratioToSha256sum, 2)}×`, '≤ 3× sha256sum', ok(met.sha256sum)]);
    rows.push([`verify vs AIDE (ms, median of ${RUNS})`, f1(v.wardenMs, 0), v.aideMs !== undefined ? `aide ${f1(v.aideMs, 0)}` : `aide skipped: ${v.aideNote}`, v.aideMs !== undefined ? `${f1(v.aideOverWarden, 1)}× faster` : '—', '≥ 15× faster', ok(met.aide)]);
  } else rows.push(['verify', 'error', String(v?.error ?? 'not run'), '', '', '']);
  const s = results.startup as Json | undefined;
  if (s && !s.error) rows.push([`startup to ready, ${N_FILES} files (ms, median)`, f1(s.medianMs, 0), '', '', '≤ 1000 ms', ok(s.met)]);
  else rows.push(['startup', 'error', String(s?.error ?? 'not run'), '', '', '']);
  const fp = results.footprint as Json | undefined;
  if (fp && !fp.error) {
    const g = fp.guard as Json; const n = fp.notifier as Json; const met = fp.met as Json;
    rows.push([`guard RSS, ${f1(fp.seconds, 0)} s idle (MB, max/mean)`, `${f1(g.rssMaxMB)} / ${f1(g.rssMeanMB)}`, '', '', '≤ 60 MB', ok(met.guardRss)]);
    rows.push([`guard CPU, ${f1(fp.seconds, 0)} s idle (% avg)`, f1(g.cpuPercent, 2), '', '', '≤ 0.5 %', ok(met.guardCpu)]);
    rows.push([`notifier RSS, ${f1(fp.seconds, 0)} s idle (MB, max/mean)`, `${f1(n.rssMaxMB)} / ${f1(n.rssMeanMB)}`, '', '', '≤ 90 MB', ok(met.notifierRss)]);
    rows.push([`notifier CPU, ${f1(fp.seconds, 0)} s idle (% avg)`, f1(n.cpuPercent, 2), '', '', '', '']);
  } else rows.push(['idle footprint', 'error', String(fp?.error ?? 'not run'), '', '', '']);
  const st = results.storm as Json | undefined;
  if (st && !st.error) {
    const met = st.met as Json;
    rows.push([`storm ${st.rate}/s × ${st.seconds} s: converge (ms)`, f1(st.convergeMs, 1), `${st.writes} writes`, '', '≤ 100 ms', ok(met.converge)]);
    rows.push(['storm: alerts recorded / reverts done', `${st.alertsRecorded} / ${st.journalReverts}`, '', '', 'equal', ok(met.everyRevertRecorded)]);
    rows.push(['storm: Discord messages (min gap s)', `${st.messages} (${f1(st.minGapSeconds, 1)})`, `alerts per msg ${(st.messageAlertCounts as number[]).join('+')}`, '', '≤ 1 per 10 s', ok(met.perInterval)]);
  } else rows.push(['storm', 'error', String(st?.error ?? 'not run'), '', '', '']);
  const c = results.crash as Json | undefined;
  if (c && c.available) {
    const met = c.met as Json;
    rows.push([`credential crash trials (${f1((c.ms as number) / 1000, 0)} s${c.stoppedAtBudget ? ', stopped at budget' : ''})`, `${c.trials}/${c.requested} trials, ${c.mixed} mixed`, `interrupted ${c.interrupted}, rolled back ${c.rolledBack}, forward ${c.rolledForward}`, '', '≥ 1000, 0 mixed', ok(met.trials === true && met.mixed === true)]);
  } else rows.push(['credential crash trials', '—', String(c?.note ?? c?.error ?? 'not run'), '', '≥ 1000, 0 mixed', '—']);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((c2, i) => c2.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

/** BENCH_UPDATE_DOCS=1: put the table and the machine into docs/BENCHMARKS.md between its markers. */
function updateDocs(): void {
  const doc = join(REPO, 'docs', 'BENCHMARKS.md');
  const text = readFileSync(doc, 'utf8');
  const m = results.machine as Json;
  const block = [
    '<!-- results:begin -->',
    `Run ${String(results.started).slice(0, 16).replace('T', ' ')} UTC at commit ${m.commit}, ${(results.totalSeconds as number).toFixed(0)} s in all.`,
    '',
    `Machine: ${m.nproc} cores (\`nproc\`), ${m.cpu}, ${m.memGB} GB RAM, ${m.os}, Linux ${m.kernel}, Node ${m.node};`,
    `disk: ${m.disk} (temp roots under ${m.tmpdir}).`,
    '',
    results.table as string,
    '<!-- results:end -->',
  ].join('\n');
  const next = text.replace(/<!-- results:begin -->[\s\S]*<!-- results:end -->/, block);
  writeFileSync(doc, next);
  log('docs/BENCHMARKS.md updated');
}

// ---------------------------------------------------------------- main

async function phase(name: string, fn: () => Promise<Json>): Promise<void> {
  const t0 = performance.now();
  log(`== ${name}`);
  try {
    results[name] = await fn();
  } catch (err) {
    log(`${name} failed: ${(err as Error).stack ?? String(err)}`);
    results[name] = { error: (err as Error).message.split('\n')[0] };
  }
  (results[name] as Json).phaseSeconds = (performance.now() - t0) / 1000;
  log(`== ${name} done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  save();
}

async function main(): Promise<void> {
  const t0 = performance.now();
  const startedAt = Date.now();
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first`);
  results.machine = machine();
  log(`machine: ${JSON.stringify(results.machine)}`);
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  try {
    await phase('revert', revertLatency);
    log(`creating a root with ${N_FILES} protected files`);
    const big = bigRoot(emu.api);
    const ti = performance.now();
    const init = wardenSync(big, ['init']);
    if (init.code !== 0) throw new Error(`warden init (${N_FILES} files) failed: ${init.stderr}`);
    results.init10k = { ms: performance.now() - ti };
    log(`init: ${(performance.now() - ti).toFixed(0)} ms`);
    await phase('verify', () => verifyThroughput(big));
    await phase('startup', () => startup(big));
    // The crash trials overlap the idle window (they do not touch the measured processes;
    // CPU there is per process), then get the time left before the storm.
    const crash = new CrashRun();
    crash.start();
    await phase('footprint', () => footprint(big));
    await phase('crash', () => crash.finish(startedAt + CRASH_BUDGET_S * 1000));
    await phase('storm', () => storm(emu));
  } finally {
    await emu.stop();
    cleanupTemps();
  }
  results.totalSeconds = (performance.now() - t0) / 1000;
  results.table = table();
  save();
  if (process.env.BENCH_UPDATE_DOCS === '1') updateDocs();
  const m = results.machine as Json;
  process.stdout.write(`\nwarden bench — ${m.nproc} × ${m.cpu}, ${m.node}, ${m.disk}; ${(results.totalSeconds as number).toFixed(0)} s\n\n${results.table as string}\n\nresults: bench/results.json\n`);
}

main().then(() => process.exit(0), (err) => { log(`bench failed: ${(err as Error).stack ?? String(err)}`); process.exit(1); });
