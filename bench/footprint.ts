/** `npm run bench`, section: 4. idle footprint (see bench/run.ts). */
import { cpuSeconds, log, memMB, sleep, startReady, type BenchRoot, type Proc } from './lib.js';
import { N_FILES, IDLE_S, type Json, node, warden } from './config.js';

// ---------------------------------------------------------------- 4. idle footprint

export async function footprint(r: BenchRoot): Promise<Json> {
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
