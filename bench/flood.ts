/**
 * `npm run bench`, section: flood. BENCH_FLOOD_FILES (default 200,000) empty files that no
 * glob matches (orgs/junkI.txt) are created while the guard runs (guard only, no notifier;
 * a rescan every BENCH_FLOOD_RESCAN_S, default 30 as shipped). Meanwhile an approved file
 * (orgs/bookclub.toml) is edited every 100 ms and the time until its approved bytes are back
 * is taken. Reports the guard's RSS before, its peak
 * (sampled every 200 ms) and after the first rescan past the flood, and the revert latency.
 * Alone: `node dist/bench/flood.js` (BENCH_FLOOD_FILES=2000 for a quick look).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIST, cleanupTemps, log, makeRoot, memMB, sleep, startReady, summary, timed, wardenSync, wardenToml } from './lib.js';
import { type Json, node, warden } from './config.js';

export const FLOOD_FILES = Number(process.env.BENCH_FLOOD_FILES ?? 200_000);
const RESCAN_S = Number(process.env.BENCH_FLOOD_RESCAN_S ?? 30);
const ORG = 'orgs/bookclub.toml';

/** Edit ORG and wait (event loop free) until the approved bytes are back: ms, or Infinity after 10 s. */
async function oneRevert(path: string, approved: string, i: number): Promise<number> {
  const t0 = performance.now();
  writeFileSync(path, `members = ["flood-${i}"]\n`);
  for (;;) {
    let now = '';
    try { now = readFileSync(path, 'utf8'); } catch { /* never between unlink and rename: rename is atomic */ }
    if (now === approved) return performance.now() - t0;
    if (performance.now() - t0 > 10_000) return Infinity;
    await new Promise((r) => setImmediate(r));
  }
}

export async function flood(files = FLOOD_FILES, rescanS = RESCAN_S): Promise<Json> {
  const r = makeRoot('flood', () => wardenToml({ rescanSeconds: rescanS }));
  const init = wardenSync(r, ['init']);
  if (init.code !== 0) throw new Error(`warden init failed: ${init.stderr}`);
  const d = await startReady(node, warden(['run', '--guard', '--root', r.root]), r.env);
  try {
    const approved = readFileSync(r.p(ORG), 'utf8');
    await sleep(3000); // the first rescan (it hashes every blob once) is over
    const before = memMB(d.pid);
    let peak = before.rss;
    const sampler = setInterval(() => { try { peak = Math.max(peak, memMB(d.pid).rss); } catch { /* gone */ } }, 200);
    log(`flood: ${files} unprotected files into orgs/ while the guard runs (RSS ${before.rss.toFixed(1)} MB)`);
    let done = false;
    const writer = timed(node, [join(BENCH_DIST, 'flood-writer.js'), r.p('orgs'), String(files)], r.env).finally(() => { done = true; });
    const lat: number[] = [];
    for (let i = 0; !done; i++) {
      const t = performance.now();
      lat.push(await oneRevert(r.p(ORG), approved, i));
      await sleep(Math.max(0, 100 - (performance.now() - t)));
    }
    const w = JSON.parse((await writer).stdout.trim().split('\n').pop() ?? '{}') as { files: number; ms: number };
    // One rescan past the flood: what the guard holds once it has looked at all of it.
    await sleep(rescanS * 1000 + 2000);
    clearInterval(sampler);
    const after = memMB(d.pid);
    peak = Math.max(peak, after.rss);
    const s = summary(lat);
    log(`flood: created in ${(w.ms / 1000).toFixed(1)} s; RSS ${before.rss.toFixed(1)} → peak ${peak.toFixed(1)} → after ${after.rss.toFixed(1)} MB; revert p50 ${s.p50.toFixed(1)} max ${s.max.toFixed(1)} ms (${s.n} edits)`);
    return {
      files, createSeconds: w.ms / 1000, rescanSeconds: rescanS,
      rssBeforeMB: before.rss, rssPeakMB: peak, rssAfterMB: after.rss, vmHwmMB: after.hwm,
      growthPeakMB: peak - before.rss, growthAfterMB: after.rss - before.rss,
      revertP50Ms: s.p50, revertMaxMs: s.max, reverts: s.n,
      met: { memory: peak - before.rss <= 30, reverts: s.max < 1000 },
    };
  } finally {
    await d.stop();
  }
}

// Alone: `node dist/bench/flood.js`.
if (process.argv[1] && import.meta.filename === process.argv[1]) {
  flood().then((res) => { cleanupTemps(); process.stdout.write(`${JSON.stringify(res, null, 2)}\n`); process.exit(0); }, (err) => { cleanupTemps(); log(`flood failed: ${(err as Error).stack ?? String(err)}`); process.exit(1); });
}
