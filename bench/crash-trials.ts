/**
 * Crash trials: SIGKILL the process applying a two-file credential rotation,
 * start warden again, and check that the set is wholly old or wholly new — never mixed —,
 * that a `half-applied` alert exists whenever the rotation was interrupted (its intent
 * journal was on disk when the process died), and that the start succeeded on its own.
 *
 * Four kinds of trial, in blocks of 20 shuffled at random (BLOCK below); 12 in 20 set no
 * product seam at all:
 *   - "kill-cli" (6 in 20), seam-free: no daemon; `warden cred rotate` applies under the
 *     lock and gets SIGKILL from outside;
 *   - "kill-daemon" (6 in 20), seam-free: the daemon applies the rotation sent by
 *     `warden cred rotate` and gets SIGKILL from outside;
 *     for both, the moment is uniform over 0..1.5× the command's median natural duration
 *     after its spawn (5 of the 6, "wide": measured first, in this root), or over 0..1.5×
 *     the intent manifest's median lifetime after an inotify watch saw it appear (1 of 6,
 *     "journal": aims at the transaction, which is a few ms of a ~300 ms command);
 *   - "step" (7 in 20, each step once): the daemon SIGKILLs itself at one step of the
 *     transaction (WARDEN_TEST_CRASH_AT, src/changes/seam.ts);
 *   - "delay" (1 in 20): no daemon; the command is slowed down by WARDEN_TEST_STEP_DELAY_MS
 *     and killed from outside after a random 0–700 ms.
 * Every kill goes to the process group (as systemd's KillMode=control-group would): git
 * children die with their parent. Where each kill landed is read from what it left
 * (crash-root.ts `landing`): before, inside (the intent manifest was on disk) or after the
 * transaction. A seam-free kill of the daemon freezes the command (SIGSTOP) while the
 * daemon dies and the landing is read, so the command cannot start its own fallback
 * transaction in between.
 *
 * `jobs` workers run side by side, each in its own root (init once, then each trial
 * rotates from whatever the last one left); the daemon started to check a trial is reused
 * by a following kill-daemon trial. Every wait has a deadline: a start that does not reach
 * `ready`, a command or daemon that does not exit, is a reported failure, never a hang.
 * Used by test/changes/crash.test.ts (20 trials) and `npm run bench:crash` (1,000).
 */
import { randomInt } from 'node:crypto';
import { watch, type FSWatcher } from 'node:fs';
import { join, resolve } from 'node:path';
import { alertsOf, landing, makeCrashRoot, removeCrashRoot, newValues, readSet, sameSet, start, type CredSet, type Landing, type Proc } from './crash-root.js';
import { WINDOW, emptyStats, merge, passed, type CrashTrialStats, type Kind, type SeamFreeKind, type Window } from './crash-stats.js';

export { passed, type CrashTrialStats, type Kind, type Window } from './crash-stats.js';

export const SEAM_FREE: readonly Kind[] = ['kill-cli', 'kill-daemon'];
interface Planned { kind: Kind; window?: Window; label: string }
interface IntentWatch { times: number[]; close: () => void; onFirst?: () => void }
const STEPS = ['begin', 'journal-blobs', 'journal', 'file-1', 'file-2', 'baseline', 'done'];
const times = <T>(k: number, x: T): T[] => Array.from({ length: k }, () => x);
const BLOCK: { kind: Kind; window?: Window }[] = [
  ...times(5, { kind: 'kill-cli', window: 'wide' } as const), ...times(5, { kind: 'kill-daemon', window: 'wide' } as const),
  { kind: 'kill-cli', window: 'journal' }, { kind: 'kill-daemon', window: 'journal' },
  ...times(7, { kind: 'step' } as const), { kind: 'delay' },
];
const CALIBRATION_RUNS = 5;
const READY_MS = 60_000;

export interface CrashTrialOptions {
  jobs?: number;
  log?: (l: string) => void;
  onTrial?: (done: number) => void;
  /** How long a start may take to print `ready` (default 60 s). */
  readyMs?: number;
  /** Called after each kill, before the next start (the tests use it to break a root on purpose). */
  beforeRestart?: (root: string, trial: number) => void;
}
const EXIT_MS = 60_000;

/** The last lines of a process's stderr, on one line (warden never prints a credential value). */
const tail = (err: string) => err.trim().split('\n').slice(-3).join(' | ');
const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[s.length >> 1] ?? NaN; };
const killGroup = (p: Proc, sig: NodeJS.Signals) => { try { process.kill(-p.proc.pid!, sig); } catch { /* gone */ } };

function shuffled<T>(xs: T[]): T[] {
  const a = [...xs];
  for (let i = a.length - 1; i > 0; i--) { const j = randomInt(0, i + 1); [a[i], a[j]] = [a[j]!, a[i]!]; }
  return a;
}

/** `n` trials: whole shuffled blocks of 20 (then the first n), each step once per block in a shuffled order. */
function schedule(n: number): Planned[] {
  const out: Planned[] = [];
  while (out.length < n) {
    const steps = shuffled(STEPS);
    for (const b of shuffled(BLOCK)) {
      out.push(b.kind === 'step' ? { kind: 'step', label: steps.pop()! } : b.window ? { kind: b.kind, window: b.window, label: `${b.kind}/${b.window}` } : { kind: b.kind, label: b.kind });
    }
  }
  return out.slice(0, n);
}

class Worker {
  readonly stats: CrashTrialStats;
  private daemon: Proc | null = null;
  private cur: CredSet = newValues();
  /** Upper ends (ms) of the seam-free kill windows, from the calibration runs. */
  private windows: Record<SeamFreeKind, Record<Window, number>> = { 'kill-cli': { wide: 0, journal: 0 }, 'kill-daemon': { wide: 0, journal: 0 } };
  readonly base: string;
  private readonly root: string;
  private readonly env: NodeJS.ProcessEnv;

  private readonly log?: (l: string) => void;

  constructor(private readonly id: number, private readonly opts: CrashTrialOptions) {
    this.log = opts.log;
    this.stats = emptyStats(1);
    const r = makeCrashRoot(`warden-crash-${id}-`, this.cur);
    this.base = r.base; this.root = r.root; this.env = r.env;
  }

  private fail(what: string): void {
    if (this.stats.failures.length < 20) this.stats.failures.push(what);
    this.log?.(`worker ${this.id}: FAILURE ${what}`);
  }

  /** A daemon with `extra` in its environment; null (and reported) when it does not reach ready on its own. */
  private async startDaemon(extra: NodeJS.ProcessEnv = {}): Promise<Proc | null> {
    const d = start(['run', '--guard', '--root', this.root], { ...this.env, ...extra });
    const t0 = Date.now();
    while (!d.out().includes('ready\n') && !d.gone() && Date.now() - t0 < (this.opts.readyMs ?? READY_MS)) await new Promise((r) => setTimeout(r, 5));
    if (d.out().includes('ready\n')) return d;
    const why = d.gone() ? `exited (${String(d.proc.exitCode ?? d.proc.signalCode)})` : `not ready after ${this.opts.readyMs ?? READY_MS} ms`;
    killGroup(d, 'SIGKILL');
    await d.exited;
    this.stats.failedStarts++;
    this.fail(`daemon start ${why}: ${tail(d.err())}`);
    return null;
  }

  private async stopDaemon(): Promise<void> {
    const d = this.daemon;
    this.daemon = null;
    if (!d) return;
    if (d.gone()) { this.stats.unexpectedExits++; this.fail(`the daemon exited on its own between trials (${String(d.proc.exitCode ?? d.proc.signalCode)}): ${tail(d.err())}`); return; }
    killGroup(d, 'SIGTERM');
    if (!await d.exitWithin(15_000)) { this.stats.hangs++; this.fail('daemon did not stop within 15 s of SIGTERM'); }
  }

  /** The plain daemon (no seam), reused when one is running. */
  private async plainDaemon(): Promise<Proc> {
    if (this.daemon && !this.daemon.gone()) return this.daemon;
    if (this.daemon) { this.stats.unexpectedExits++; this.fail(`the daemon exited on its own between trials (${String(this.daemon.proc.exitCode ?? this.daemon.proc.signalCode)}): ${tail(this.daemon.err())}`); }
    const d = await this.startDaemon() ?? await this.startDaemon();
    if (!d) throw new Error('the daemon did not start twice in a row');
    this.daemon = d;
    return d;
  }

  private rotate(next: CredSet, extra: NodeJS.ProcessEnv = {}): Proc {
    return start(['cred', 'rotate', 'discord', '--root', this.root], { ...this.env, ...extra }, `${next.token}\n${next.application_id}\n`);
  }

  /**
   * One natural rotation (no kill): its wall time from spawn to exit, and when (ms after
   * spawn) the intent manifest appeared and went, seen through an inotify watch on the
   * journal directory (no product seam).
   */
  private async natural(): Promise<{ ms: number; tx?: [number, number] }> {
    const next = newValues();
    const w = this.watchIntent();
    const intentAt = w.times;
    const t0 = performance.now();
    try {
      const c = this.rotate(next);
      if (!await c.exitWithin(EXIT_MS) || c.proc.exitCode !== 0) throw new Error(`a natural rotation failed (${String(c.proc.exitCode)}): ${tail(c.err())}`);
      const ms = performance.now() - t0;
      if (!sameSet(readSet(this.root), next)) throw new Error('a natural rotation did not leave the new set');
      this.cur = next;
      await new Promise((r) => setTimeout(r, 20)); // let the last inotify event arrive
      return { ms, ...(intentAt.length >= 2 ? { tx: [intentAt[0]! - t0, intentAt[intentAt.length - 1]! - t0] as [number, number] } : {}) };
    } finally { w.close(); }
  }

  /** Times (performance.now) of inotify events naming the intent manifest; `onFirst` runs at the first. */
  private watchIntent(): IntentWatch {
    let watcher: FSWatcher | undefined;
    const w: IntentWatch = { times: [], close: () => watcher?.close() };
    try {
      watcher = watch(join(this.root, 'snapshots/journal'), (_e, name) => {
        if (name !== 'intent') return;
        w.times.push(performance.now());
        if (w.times.length === 1) w.onFirst?.();
      });
    } catch { /* no journal directory yet */ }
    return w;
  }

  async init(): Promise<void> {
    const i = start(['init', '--root', this.root], this.env);
    if (!await i.exitWithin(EXIT_MS) || i.proc.exitCode !== 0) throw new Error(`crash trials: init failed: ${i.err()}`);
    // Natural durations, each after one unrecorded warm-up: the command alone, then through a daemon.
    const cal = { cliMs: [] as number[], daemonMs: [] as number[], cliTx: [] as [number, number][], daemonTx: [] as [number, number][] };
    await this.natural();
    for (let k = 0; k < CALIBRATION_RUNS; k++) { const r = await this.natural(); cal.cliMs.push(r.ms); if (r.tx) cal.cliTx.push(r.tx); }
    await this.plainDaemon();
    await this.natural();
    for (let k = 0; k < CALIBRATION_RUNS; k++) { const r = await this.natural(); cal.daemonMs.push(r.ms); if (r.tx) cal.daemonTx.push(r.tx); }
    const life = (tx: [number, number][]) => WINDOW * (tx.length ? median(tx.map((t) => t[1] - t[0])) : 10);
    this.windows = {
      'kill-cli': { wide: WINDOW * median(cal.cliMs), journal: life(cal.cliTx) },
      'kill-daemon': { wide: WINDOW * median(cal.daemonMs), journal: life(cal.daemonTx) },
    };
    this.stats.calibration.push({ ...cal, windows: this.windows });
    const f = (w: [number, number]) => `${w[0].toFixed(0)}–${w[1].toFixed(0)}`;
    this.log?.(`worker ${this.id}: natural rotation ${median(cal.cliMs).toFixed(0)} ms alone (manifest on disk ${cal.cliTx.map(f).join(', ')} ms after spawn), ${median(cal.daemonMs).toFixed(0)} ms through the daemon (${cal.daemonTx.map(f).join(', ')})`);
  }

  /**
   * Resolves at the kill moment of a seam-free trial: wide: uniform over 0..WINDOW × the
   * median natural duration after spawn; journal: uniform over 0..WINDOW × the manifest's
   * median lifetime after inotify showed it (or at the end of the wide window if it never shows).
   */
  private killMoment(kind: SeamFreeKind, window: Window, w: IntentWatch): Promise<void> {
    const wide = this.windows[kind].wide;
    return new Promise((res) => {
      if (window === 'wide') { setTimeout(res, Math.random() * wide); return; }
      const fallback = setTimeout(res, wide);
      w.onFirst = () => { clearTimeout(fallback); setTimeout(res, Math.random() * this.windows[kind].journal); };
    });
  }

  async trial(i: number, t: Planned): Promise<void> {
    const { kind, window } = t;
    const label = t.label;
    const s = this.stats;
    const old = this.cur;
    const next = newValues();
    let land: Landing | null = null;
    let afterExit = false;
    let watched: IntentWatch | undefined;
    let t0 = 0, killedAt = NaN;
    if (kind === 'kill-daemon' || kind === 'kill-cli') {
      const d = kind === 'kill-daemon' ? await this.plainDaemon() : (await this.stopDaemon(), null);
      this.daemon = null;
      watched = this.watchIntent();
      const moment = this.killMoment(kind, window!, watched);
      t0 = performance.now();
      const c = this.rotate(next);
      await moment;
      killedAt = performance.now() - t0;
      afterExit = c.gone();
      if (d) {
        // Freeze the command while the daemon dies and the landing is read: it must not start its own fallback in between.
        killGroup(c, 'SIGSTOP');
        killGroup(d, 'SIGKILL');
        if (!await d.exitWithin(10_000)) { s.hangs++; this.fail(`trial ${i} ${label}: the daemon outlived SIGKILL by 10 s`); }
        land = landing(this.root, old, next);
        killGroup(c, 'SIGCONT');
        if (!await c.exitWithin(EXIT_MS)) { s.hangs++; this.fail(`trial ${i} ${label}: the command did not exit`); }
      } else {
        killGroup(c, 'SIGKILL');
        if (!await c.exitWithin(EXIT_MS)) { s.hangs++; this.fail(`trial ${i} ${label}: the command did not exit`); }
        land = landing(this.root, old, next);
      }
    } else {
      await this.stopDaemon();
      if (kind === 'step') {
        const d = await this.startDaemon({ WARDEN_TEST_CRASH_AT: label });
        if (!d) throw new Error('the daemon with a crash step did not start');
        const c = this.rotate(next);
        if (!await c.exitWithin(EXIT_MS)) { s.hangs++; this.fail(`trial ${i} step ${label}: the command did not exit`); }
        if (!await d.exitWithin(10_000)) { s.hangs++; this.fail(`trial ${i} step ${label}: the daemon never reached its crash step; the command exited ${String(c.proc.exitCode ?? c.proc.signalCode)}: ${tail(c.err())}`); }
      } else {
        const c = this.rotate(next, { WARDEN_TEST_STEP_DELAY_MS: '20' });
        const at = randomInt(0, 700);
        const timer = setTimeout(() => killGroup(c, 'SIGKILL'), at);
        if (!await c.exitWithin(at + EXIT_MS)) { s.hangs++; this.fail(`trial ${i} ${kind}: the command did not exit`); }
        clearTimeout(timer);
      }
      land = landing(this.root, old, next);
    }
    watched?.close();
    const seen = watched?.times.length ? ` (kill at ${killedAt.toFixed(0)} ms, manifest seen at ${watched.times.map((t) => (t - t0).toFixed(0)).join('/')} ms)` : watched ? ` (kill at ${killedAt.toFixed(0)} ms, no manifest seen)` : '';
    s.trials++;
    s.byKind[kind]++;
    s.byStep[label] = (s.byStep[label] ?? 0) + 1;
    if (land) s.landed[kind][land]++;
    else { s.mixedAtKill++; this.fail(`trial ${i} ${label}: the kill left a mixed set and no intent journal`); }
    if (SEAM_FREE.includes(kind)) {
      s.seamFree.trials++;
      if (land) { s.seamFree[land]++; if (window) s.seamFree.byWindow[window][land]++; }
      if (afterExit) s.seamFree.afterExit++;
    }

    // The next start, on its own.
    this.opts.beforeRestart?.(this.root, i);
    const nAlerts = alertsOf(this.root).length;
    let d = await this.startDaemon();
    if (!d) {
      d = await this.startDaemon();
      if (!d) throw new Error(`trial ${i}: the daemon did not start twice in a row after a ${label} kill`);
    }
    this.daemon = d;
    const after = alertsOf(this.root).slice(nAlerts);
    const got = readSet(this.root);
    const isOld = sameSet(got, old), isNew = sameSet(got, next);
    if (!isOld && !isNew) { s.mixed++; this.fail(`trial ${i} ${label}: MIXED set after the restart`); }
    if (after.some((a) => a.reason === 'changed-while-stopped' && /credentials|discord-app/.test(a.path))) { s.baselineMismatch++; this.fail(`trial ${i} ${label}: files and baseline disagreed`); }
    if (land === 'inside') {
      s.interrupted++;
      const half = after.filter((a) => a.reason === 'half-applied');
      if (!half.length) { s.missingAlerts++; this.fail(`trial ${i} ${label}: interrupted, but no half-applied alert`); }
      else if (half.every((a) => a.action === 'flagged')) s.rolledForward++;
      else s.rolledBack++;
    }
    this.log?.(`worker ${this.id} trial ${i + 1}: ${label} landed ${land ?? 'MIXED'}${afterExit ? ' (after exit)' : ''}${seen} → ${isNew ? 'new' : isOld ? 'old' : 'MIXED'}`);
    if (isNew) this.cur = next;
  }

  async close(): Promise<void> {
    await this.stopDaemon();
    removeCrashRoot(this.base);
  }
}


/** Run `n` trials over `jobs` workers (each its own root). `onTrial` sees the running count. */
export async function runCrashTrials(n: number, opts: CrashTrialOptions = {}): Promise<CrashTrialStats> {
  const t0 = Date.now();
  const jobs = Math.max(1, Math.min(opts.jobs ?? 1, n));
  const total = emptyStats(jobs);
  let done = 0;
  const one = async (id: number, count: number): Promise<CrashTrialStats> => {
    const w = new Worker(id, opts);
    try {
      await w.init();
      const plan = schedule(count);
      for (let i = 0; i < plan.length; i++) {
        await w.trial(i, plan[i]!);
        opts.onTrial?.(++done);
      }
    } catch (err) {
      w.stats.aborted = `worker ${id}: ${(err as Error).message}`;
      opts.log?.(`worker ${id} stopped: ${(err as Error).message}`);
    } finally {
      await w.close();
    }
    return w.stats;
  };
  const parts = await Promise.all(Array.from({ length: jobs }, (_, k) => one(k, Math.floor(n / jobs) + (k < n % jobs ? 1 : 0))));
  for (const p of parts) merge(total, p);
  total.ms = Date.now() - t0;
  return total;
}

// `node dist/bench/crash-trials.js [N] [JOBS]` runs the trials on their own.
if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.dirname, 'crash-trials.js')) {
  const n = Number(process.argv[2] ?? 20);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => process.exit(130)); // runs the 'exit' handler that kills every child
  void runCrashTrials(n, { jobs: Number(process.argv[3] ?? 1), log: (l) => process.stderr.write(l + '\n') }).then((s) => {
    process.stdout.write(JSON.stringify(s, null, 2) + '\n');
    process.exitCode = passed(s) ? 0 : 1;
  });
}
