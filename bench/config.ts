/** Settings of `npm run bench` (environment knobs) and the results being collected. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, REPO } from './lib.js';

export const RESULTS = join(REPO, 'bench', 'results.json');
export const N_REVERT = Number(process.env.BENCH_REVERT_WRITES ?? 300);
export const N_FILES = Number(process.env.BENCH_FILES ?? 10_000);
export const RUNS = Number(process.env.BENCH_RUNS ?? 3);
export const IDLE_S = Number(process.env.BENCH_IDLE_SECONDS ?? 60);
export const STORM_RATE = 1000;
export const STORM_S = Number(process.env.BENCH_STORM_SECONDS ?? 10);
export const CRASH_TRIALS = Number(process.env.BENCH_CRASH_TRIALS ?? 1000);

export type Json = Record<string, unknown>;
export const results: Json = { started: new Date().toISOString() };
export const save = () => writeFileSync(RESULTS, JSON.stringify(results, null, 2) + '\n');

export const node = process.execPath;
export const warden = (args: string[]) => [CLI, ...args];
