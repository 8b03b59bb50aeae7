/**
 * `npm run bench`: warden's speed and footprint side by side with references (docs/BENCHMARKS.md).
 * Prints a table on stdout, progress on stderr, and writes bench/results.json.
 * See docs/BENCHMARKS.md for what each number means.
 * The sections live in bench/<section>.ts (machine, revert, big-root, init, verify, startup,
 * footprint, storm, flood, policy-scale, runtimes, report); this file runs them in order, one at a time (no two overlap).
 * BENCH_ONLY=runtimes,revert runs only the sections named (the 10,000-file root is made only for those that need it).
 */
import { existsSync } from 'node:fs';
import { DiscordEmulator } from '../test/helpers/discord-emulator.js';
import { CLI, TOKEN, cleanupTemps, log } from './lib.js';
import { N_FILES, type Json, results, save } from './config.js';
import { machine } from './machine.js';
import { revertLatency } from './revert.js';
import { bigRoot } from './big-root.js';
import { verifyThroughput } from './verify.js';
import { initVsAide } from './init.js';
import type { AideSetup } from './aide.js';
import { startup } from './startup.js';
import { moduleLoad } from './module-load.js';
import { footprint } from './footprint.js';
import { storm } from './storm.js';
import { flood } from './flood.js';
import { lastCompleteCrashRun } from './crash-main.js';
import { table, updateDocs } from './report.js';
import { policyScale } from './policy-scale.js';
import { notifierSends } from './notifier-sends.js';
import { runtimesSection } from './runtimes.js';

// ---------------------------------------------------------------- main

const ONLY = (process.env.BENCH_ONLY ?? '').split(',').map((s) => s.trim()).filter(Boolean);
/** The sections that use the 10,000-file root; its init (a section too) comes first. */
const ON_BIG_ROOT = ['init', 'verify', 'startup', 'moduleLoad', 'footprint'];
const wanted = (name: string): boolean => ONLY.length === 0 || ONLY.includes(name) || (name === 'init' && ON_BIG_ROOT.some((n) => ONLY.includes(n)));

async function phase(name: string, fn: () => Promise<Json>): Promise<void> {
  if (!wanted(name)) return;
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
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run 'npm run build' first`);
  results.machine = machine();
  log(`machine: ${JSON.stringify(results.machine)}`);
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  try {
    await phase('revert', revertLatency);
    await phase('runtimes', runtimesSection);
    if (ON_BIG_ROOT.some(wanted)) {
      log(`creating a root with ${N_FILES} protected files`);
      const big = bigRoot(emu.api);
      let aide: AideSetup | undefined;
      await phase('init', async () => { const r = await initVsAide(big); aide = r.aide; return r.res; });
      if (!aide) throw new Error(`warden init (${N_FILES} files) failed: ${String((results.init as Json).error)}`);
      const a = aide;
      await phase('verify', () => verifyThroughput(big, a));
      await phase('startup', () => startup(big));
      await phase('moduleLoad', () => moduleLoad(big));
      // The idle footprint is measured alone; the crash trials are their own command
      // (`npm run bench:crash`) and the table shows their last complete run.
      await phase('footprint', () => footprint(big));
    }
    results.crash = lastCompleteCrashRun();
    await phase('storm', () => storm(emu));
    await phase('flood', () => flood());
    await phase('policy', policyScale);
    await phase('notifierSends', notifierSends);
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
