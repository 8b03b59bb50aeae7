/** `npm run bench`, section: 4. idle footprint (see bench/run.ts and bench/idle.ts). */
import { makeRoot, startReady, wardenSync, FIXTURE, type BenchRoot, type Proc } from './lib.js';
import { N_FILES, IDLE_S, type Json, node, warden } from './config.js';
import { idleWindow, type IdleStats } from './idle.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// ---------------------------------------------------------------- 4. idle footprint

/** A node process that does nothing: the reference for every RSS (and CPU) row. */
export const BARE_NODE = ['-e', "setInterval(() => {}, 1 << 30); process.stdout.write('ready\\n')"];
const BARE_S = Math.min(IDLE_S, 15);
const EXAMPLE_S = Math.min(IDLE_S, 30);

async function alone(what: string, start: () => Promise<Record<string, Proc>>, seconds: number): Promise<Json> {
  let procs: Record<string, Proc> = {};
  try {
    procs = await start();
    return await idleWindow(what, procs, seconds);
  } finally {
    for (const p of Object.values(procs)) await p.stop();
  }
}

/**
 * Three windows, one after the other, nothing else of the bench running in any of them:
 * bare node; the guard and the notifier (the two-unit deployment) on the 10,000-file root;
 * the guard alone on a copy of the example root with its own warden.toml.
 */
export async function footprint(big: BenchRoot): Promise<Json> {
  const bare = await alone('bare node', async () => ({ node: await startReady(node, BARE_NODE, big.env) }), BARE_S);
  const tenK = await alone(`guard + notifier, ${N_FILES} files`, async () => {
    const guard = await startReady(node, warden(['run', '--guard', '--root', big.root]), big.env, 60_000);
    const notifier = await startReady(node, warden(['run', '--notifier', '--root', big.root]), big.env, 60_000).catch(async (e: unknown) => { await guard.stop(); throw e; });
    return { guard, notifier };
  }, IDLE_S);
  const ex = makeRoot('example', () => readFileSync(join(FIXTURE, 'config', 'warden.toml'), 'utf8'));
  const init = wardenSync(ex, ['init']);
  if (init.code !== 0) throw new Error(`warden init (example root) failed: ${init.stderr}`);
  const example = await alone('guard, example root', async () => ({ guard: await startReady(node, warden(['run', '--guard', '--root', ex.root]), ex.env, 60_000) }), EXAMPLE_S);
  const b = bare.node as IdleStats, g = tenK.guard as IdleStats, n = tenK.notifier as IdleStats, e = example.guard as IdleStats;
  const vsBare = (x: IdleStats) => ({ ratio: x.rssMaxMB / b.rssMaxMB, deltaMB: x.rssMaxMB - b.rssMaxMB });
  return {
    files: N_FILES, rescanSeconds: 30, seconds: tenK.seconds,
    bare, tenK, example,
    guard: { ...g, vsBare: vsBare(g) }, notifier: { ...n, vsBare: vsBare(n) }, exampleGuard: { ...e, vsBare: vsBare(e) }, bareNode: b,
    alone: bare.alone === true && tenK.alone === true && example.alone === true,
    met: { guardRss: g.rssMaxMB <= 60, guardCpu: g.cpuPercent <= 0.5, exampleRss: e.rssMaxMB <= 50, notifierRss: n.rssMaxMB <= 90 },
  };
}
