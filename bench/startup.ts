/** `npm run bench`, section: 3. startup (see bench/run.ts). */
import { join } from 'node:path';
import { log, median, startReady, type BenchRoot } from './lib.js';
import { N_FILES, RUNS, type Json, node, warden } from './config.js';

// ---------------------------------------------------------------- 3. startup

export async function startup(r: BenchRoot): Promise<Json> {
  const ms: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const g = await startReady(node, warden(['run', '--guard', '--root', r.root]), r.env, 60_000);
    ms.push(g.readyMs);
    await g.stop();
  }
  log(`startup: ${ms.map((x) => x.toFixed(0)).join(', ')} ms`);
  return { files: N_FILES, runs: ms, medianMs: median(ms), target: 1000, met: median(ms) <= 1000 };
}
