/**
 * Idle sampling for the footprint rows (see bench/footprint.ts): RSS every second from
 * /proc/<pid>/status, CPU as (utime + stime) over the window ÷ wall time, the 1-min load
 * average at both ends, and every other child of the bench alive in the window (there
 * must be none: the idle footprint is measured alone).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { cpuSeconds, log, memMB, sleep, type Proc } from './lib.js';
import type { Json } from './config.js';

/** Children of this process other than `expected` (pid and command name). */
export function otherChildren(expected: number[]): string[] {
  const out: string[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || expected.includes(Number(name))) continue;
    let stat: string;
    try { stat = readFileSync(`/proc/${name}/stat`, 'utf8'); } catch { continue; }
    const close = stat.lastIndexOf(')');
    const ppid = Number(stat.slice(close + 2).split(' ')[1]);
    if (ppid === process.pid) out.push(`${name} ${stat.slice(stat.indexOf('(') + 1, close)}`);
  }
  return out;
}

export interface IdleStats { rssMeanMB: number; rssMaxMB: number; hwmMB: number; cpuPercent: number }

/** Sample `procs` for `seconds` after `settleMs`; the window's conditions come back with the numbers. */
export async function idleWindow(what: string, procs: Record<string, Proc>, seconds: number, settleMs = 2000): Promise<Json> {
  await sleep(settleMs); // let start-up garbage settle
  const pids = Object.values(procs).map((p) => p.pid);
  const othersAtStart = otherChildren(pids);
  const load1AtStart = loadavg()[0]!;
  log(`${what}: idle window of ${seconds} s starts; 1-min load average ${load1AtStart.toFixed(2)}; other children of the bench: ${othersAtStart.length ? othersAtStart.join(', ') : 'none'}`);
  const cpu0 = Object.fromEntries(Object.entries(procs).map(([k, p]) => [k, cpuSeconds(p.pid)]));
  const rss: Record<string, number[]> = Object.fromEntries(Object.keys(procs).map((k) => [k, []]));
  const t0 = performance.now();
  while (performance.now() - t0 < seconds * 1000) {
    for (const [k, p] of Object.entries(procs)) rss[k]!.push(memMB(p.pid).rss);
    await sleep(1000);
  }
  const secs = (performance.now() - t0) / 1000;
  const othersAtEnd = otherChildren(pids);
  const res: Json = { seconds: secs, load1AtStart, load1AtEnd: loadavg()[0], othersAtStart, othersAtEnd, alone: othersAtStart.length === 0 && othersAtEnd.length === 0 };
  for (const [k, p] of Object.entries(procs)) {
    const m = memMB(p.pid);
    const xs = rss[k]!;
    res[k] = { rssMeanMB: xs.reduce((a, b) => a + b, 0) / xs.length, rssMaxMB: Math.max(...xs, m.rss), hwmMB: m.hwm, cpuPercent: ((cpuSeconds(p.pid) - cpu0[k]!) / secs) * 100 } satisfies IdleStats;
  }
  return res;
}
