/** `npm run bench`, section: 3. startup (see bench/run.ts). */
import { loadavg } from 'node:os';
import { log, median, startReady, type BenchRoot } from './lib.js';
import { N_FILES, RUNS, type Json, node, warden } from './config.js';
import { BARE_NODE } from './footprint.js';

// ---------------------------------------------------------------- 3. startup

/** Spawn to `ready` of the guard on the 10,000-file root, next to a bare node that prints `ready` at once (the floor). */
export async function startup(r: BenchRoot): Promise<Json> {
  const ms: number[] = [];
  const bare: number[] = [];
  const load1 = [loadavg()[0]!];
  for (let i = 0; i < RUNS; i++) {
    const b = await startReady(node, BARE_NODE, r.env);
    bare.push(b.readyMs);
    await b.stop();
    const g = await startReady(node, warden(['run', '--guard', '--root', r.root]), r.env, 60_000);
    ms.push(g.readyMs);
    await g.stop();
  }
  load1.push(loadavg()[0]!);
  log(`startup (load ${load1.map((v) => v.toFixed(1)).join(' → ')}): ${ms.map((x) => x.toFixed(0)).join(', ')} ms (bare node ${bare.map((x) => x.toFixed(0)).join(', ')} ms)`);
  return { files: N_FILES, load1, runs: ms, medianMs: median(ms), bareNodeRuns: bare, bareNodeMs: median(bare), ratioToBareNode: median(ms) / median(bare), target: 500, met: median(ms) <= 500 };
}
