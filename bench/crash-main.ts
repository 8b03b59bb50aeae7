/**
 * `npm run bench:crash`: the credential crash trials (bench/crash-trials.ts, 1,000 by default,
 * BENCH_CRASH_TRIALS) run to completion as their own command, outside the timed bench and
 * never beside the idle-footprint window. A complete run is written to
 * bench/crash-results.json; `npm run bench` shows the last complete run in its table.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, cleanupTemps, log } from './lib.js';
import { CRASH_TRIALS, type Json } from './config.js';
import { machine } from './machine.js';
import { CrashRun } from './crash.js';

export const CRASH_RESULTS = join(REPO, 'bench', 'crash-results.json');

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
  const run = new CrashRun();
  run.start();
  // No time budget: a 24-day deadline (setTimeout's maximum), i.e. until the trials finish.
  const r = await run.finish(Date.now() + 2 ** 31 - 1);
  cleanupTemps();
  if (!r.available) { log(`crash trials unavailable: ${String(r.note)}`); process.exit(1); }
  const complete = Number(r.trials) === CRASH_TRIALS && !r.stoppedAtBudget;
  if (!complete) { log(`incomplete run (${String(r.trials)}/${CRASH_TRIALS}); bench/crash-results.json keeps the last complete one`); process.exit(1); }
  writeFileSync(CRASH_RESULTS, JSON.stringify({ started, finished: new Date().toISOString(), machine: m, crash: r }, null, 2) + '\n');
  const met = r.met as Json;
  process.stdout.write(`credential crash trials: ${String(r.trials)}/${CRASH_TRIALS}, ${String(r.mixed)} mixed; interrupted ${String(r.interrupted)}, rolled back ${String(r.rolledBack)}, forward ${String(r.rolledForward)}; ${((r.ms as number) / 1000).toFixed(0)} s\nresults: bench/crash-results.json\n`);
  process.exit(met.trials === true && met.mixed === true ? 0 : 1);
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  main().catch((err: unknown) => { log(`bench:crash failed: ${(err as Error).stack ?? String(err)}`); process.exit(1); });
}
