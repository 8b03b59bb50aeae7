/**
 * `npm run bench:crash`: the credential crash trials (bench/crash-trials.ts, 1,000 by default,
 * BENCH_CRASH_TRIALS) run to completion as their own command, outside the timed bench and
 * never beside the idle-footprint window. BENCH_CRASH_JOBS (default: 2, at most the core
 * count) workers run side by side, each in its own root. A complete run of at least 1,000
 * trials (passed or not) is written to bench/crash-results.json; `npm run bench` shows the last complete run in its table.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { REPO, cleanupTemps, log } from './lib.js';
import { CRASH_TRIALS, type Json } from './config.js';
import { machine } from './machine.js';
import { passed, runCrashTrials } from './crash-trials.js';

export const CRASH_RESULTS = join(REPO, 'bench', 'crash-results.json');
export const CRASH_JOBS = Number(process.env.BENCH_CRASH_JOBS ?? Math.min(2, availableParallelism()));

/** The last complete run, or why there is none. */
export function lastCompleteCrashRun(): Json {
  if (!existsSync(CRASH_RESULTS)) return { available: false, note: 'no complete run yet: npm run bench:crash' };
  try {
    const j = JSON.parse(readFileSync(CRASH_RESULTS, 'utf8')) as Json;
    return { ...(j.crash as Json), lastRun: j.finished, lastRunCommit: (j.machine as Json | undefined)?.commit };
  } catch (err) {
    return { available: false, note: `bench/crash-results.json unreadable: ${(err as Error).message}` };
  }
}

async function main(): Promise<void> {
  const started = new Date().toISOString();
  const m = machine();
  const t0 = Date.now();
  log(`crash trials: ${CRASH_TRIALS} over ${CRASH_JOBS} worker(s), each its own root`);
  const s = await runCrashTrials(CRASH_TRIALS, {
    jobs: CRASH_JOBS,
    log: process.env.BENCH_CRASH_VERBOSE === '1' ? log : (l) => { if (/FAILURE|stopped|natural/.test(l)) log(l); },
    onTrial: (n) => { if (n % 50 === 0) log(`crash trials: ${n}/${CRASH_TRIALS} in ${((Date.now() - t0) / 1000).toFixed(0)} s`); },
  });
  cleanupTemps();
  const ok = passed(s);
  const crash: Json = { available: true, requested: CRASH_TRIALS, ...s, met: { trials: s.trials >= 1000, passed: ok } };
  const sf = s.seamFree;
  process.stdout.write([
    `credential crash trials: ${s.trials}/${CRASH_TRIALS} in ${(s.ms / 1000).toFixed(0)} s (${s.jobs} workers); ${s.mixed} mixed, ${s.missingAlerts} missing alerts, ${s.failedStarts} failed starts, ${s.hangs} hangs, ${s.unexpectedExits} daemons that died on their own, ${s.baselineMismatch} baseline mismatches, ${s.mixedAtKill} mixed at a kill`,
    `  by kind: ${Object.entries(s.byKind).map(([k, v]) => `${k} ${v} (before ${s.landed[k as keyof typeof s.landed].before}, inside ${s.landed[k as keyof typeof s.landed].inside}, after ${s.landed[k as keyof typeof s.landed].after})`).join('; ')}`,
    `  seam-free: ${sf.trials} trials, kill landed before ${sf.before}, inside ${sf.inside}, after ${sf.after} the transaction (${sf.afterExit} after the command had exited)`,
    `  interrupted ${s.interrupted}: rolled back ${s.rolledBack}, forward ${s.rolledForward}`,
    ...(s.failures.length ? [`  failures: ${s.failures.join(' || ')}`] : []),
    ...(s.aborted ? [`  aborted: ${s.aborted}`] : []),
    '',
  ].join('\n'));
  if (s.trials !== CRASH_TRIALS || s.aborted) { log(`incomplete run (${s.trials}/${CRASH_TRIALS}); bench/crash-results.json keeps the last complete one`); process.exit(1); }
  // A short trying-out run must not replace the last full one in the table.
  if (CRASH_TRIALS < 1000) { log(`${CRASH_TRIALS} < 1000 trials: not recorded; bench/crash-results.json keeps the last full run`); process.exit(ok ? 0 : 1); }
  writeFileSync(CRASH_RESULTS, JSON.stringify({ started, finished: new Date().toISOString(), machine: m, crash }, null, 2) + '\n');
  process.stdout.write('results: bench/crash-results.json\n');
  process.exit(ok && s.trials >= 1000 ? 0 : 1);
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  main().catch((err: unknown) => { log(`bench:crash failed: ${(err as Error).stack ?? String(err)}`); process.exit(1); });
}
