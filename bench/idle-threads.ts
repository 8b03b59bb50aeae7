/**
 * `node dist/bench/idle-threads.js [cli.js ...]`: the guard alone on the
 * 10,000-file root, idle, for each build given (default this one), windows interleaved
 * A, B, A, B…; prints ready time, CPU of the whole process (utime + stime from /proc) and of
 * each thread, and RSS max. BENCH_IDLE_SECONDS (60), BENCH_IDLE_ROUNDS (2).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { DiscordEmulator } from '../test/helpers/discord-emulator.js';
import { CLI, TOKEN, cleanupTemps, log, memMB, sleep, startReady, type Proc } from './lib.js';
import { IDLE_S, node } from './config.js';
import { initBigRoots } from './big-root.js';

const TICK = 100; // clock ticks per second (getconf CLK_TCK)

function threads(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  for (const t of readdirSync(`/proc/${pid}/task`)) {
    let s: string;
    try { s = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8'); } catch { continue; }
    const close = s.lastIndexOf(')');
    const name = s.slice(s.indexOf('(') + 1, close);
    const f = s.slice(close + 2).split(' ');
    const cpu = (Number(f[11]) + Number(f[12])) / TICK;
    out.set(`${name}#${t}`, cpu);
  }
  return out;
}

async function main(): Promise<void> {
  const clis = process.argv.slice(2).length ? process.argv.slice(2) : [CLI];
  const rounds = Number(process.env.BENCH_IDLE_ROUNDS ?? 2);
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  const rows: string[] = [];
  try {
    const roots = initBigRoots(clis, emu.api);
    for (let round = 0; round < rounds; round++) {
      for (const [i, cli] of clis.entries()) {
        const big = roots[i]!;
        let guard: Proc | null = null;
        try {
          const g = await startReady(node, [cli, 'run', '--guard', '--root', big.root], big.env, 60_000);
          guard = g;
          await sleep(2000);
          const l0 = loadavg()[0]!;
          const a = threads(g.pid);
          const t0 = performance.now();
          let rssMax = 0;
          while (performance.now() - t0 < IDLE_S * 1000) { rssMax = Math.max(rssMax, memMB(g.pid).rss); await sleep(1000); }
          const secs = (performance.now() - t0) / 1000;
          const b = threads(g.pid);
          let total = 0;
          const per: string[] = [];
          for (const [k, v] of b) { const d = v - (a.get(k) ?? 0); total += d; if (d > 0) per.push(`${k.split('#')[0]} ${(d / secs * 100).toFixed(2)}`); }
          const line = `${cli} round ${round}: ready ${g.readyMs.toFixed(0)} ms; guard cpu ${(total / secs * 100).toFixed(2)} % (${per.join(', ')}); rss max ${rssMax.toFixed(1)} MB; load ${l0.toFixed(2)}→${loadavg()[0]!.toFixed(2)}`;
          log(line);
          rows.push(line);
        } finally {
          await guard?.stop();
        }
      }
    }
  } finally {
    await emu.stop();
    cleanupTemps();
  }
  process.stdout.write(`idle threads, ${IDLE_S} s windows; load now ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n${rows.join('\n')}\n`);
}

main().then(() => process.exit(0), (err) => { log(`idle-threads failed: ${(err as Error).stack ?? String(err)}`); process.exit(1); });
