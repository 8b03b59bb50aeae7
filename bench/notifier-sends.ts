/**
 * `npm run bench`, section: notifierSends — the notifier's memory over many Discord sends
 * (docs/BENCHMARKS.md). A notifier that leaks per request (an abort listener kept for every
 * request, say) shows it here as heap that grows with the number of sends; the target is
 * none: the heap after 3,000 sends within 5 MB of the heap after the warm-up, and no signal
 * holding more than the listeners of the sends in flight.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { BENCH_DIST, log } from './lib.js';
import { type Json } from './config.js';

export async function notifierSends(): Promise<Json> {
  const sends = Number(process.env.BENCH_NOTIFIER_SENDS ?? 3000);
  log(`notifier: ${sends} Discord sends, heap before and after`);
  const r = spawnSync(process.execPath, ['--expose-gc', join(BENCH_DIST, 'notifier-sends-child.js')], {
    env: { ...process.env, BENCH_NOTIFIER_SENDS: String(sends) }, encoding: 'utf8', timeout: 600_000,
  });
  if (r.status !== 0) throw new Error(`notifier-sends child exited ${String(r.status ?? r.signal)}: ${r.stderr.trim().split('\n').slice(-3).join(' ')}`);
  const res = JSON.parse(r.stdout.trim().split('\n').pop()!) as Json;
  res.met = (res.heapGrowthMB as number) <= 5 && (res.maxAbortListeners as number) <= 2 && res.listenerWarnings === 0;
  return res;
}
