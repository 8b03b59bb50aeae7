/**
 * `node dist/bench/idle-row.js [cli.js ...]`: only the footprint row "guard + notifier, idle,
 * N files" (bench/footprint.ts), for one or more builds side by side. Each build gets
 * its own 10,000-file root, initialised by that build; the windows alternate A, B, A, B… so both
 * see the same load. CPU is utime + stime of the process (not wall time), as in bench/idle.ts.
 *
 * BENCH_IDLE_ROUNDS (default 2) windows per build; BENCH_CPU_PROF=<dir> starts the guard under
 * --cpu-prof (a profile per window, written when it stops).
 */
import { mkdirSync } from 'node:fs';
import { loadavg } from 'node:os';
import { DiscordEmulator } from '../test/helpers/discord-emulator.js';
import { CLI, TOKEN, cleanupTemps, log, startReady, type Proc } from './lib.js';
import { IDLE_S, N_FILES, node } from './config.js';
import { initBigRoots } from './big-root.js';
import { idleWindow, type IdleStats } from './idle.js';

async function main(): Promise<void> {
  const clis = process.argv.slice(2).length ? process.argv.slice(2) : [CLI];
  const rounds = Number(process.env.BENCH_IDLE_ROUNDS ?? 2);
  const prof = process.env.BENCH_CPU_PROF;
  if (prof) mkdirSync(prof, { recursive: true });
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  const rows: string[] = [];
  try {
    const roots = initBigRoots(clis, emu.api);
    for (let round = 0; round < rounds; round++) {
      for (const [i, cli] of clis.entries()) {
        const big = roots[i]!;
        const flags = prof ? ['--cpu-prof', '--cpu-prof-dir', prof, '--cpu-prof-name', `guard-${i}-${round}.cpuprofile`] : [];
        let procs: Record<string, Proc> = {};
        try {
          const guard = await startReady(node, [...flags, cli, 'run', '--guard', '--root', big.root], big.env, 60_000);
          const notifier = await startReady(node, [cli, 'run', '--notifier', '--root', big.root], big.env, 60_000);
          procs = { guard, notifier };
          const w = await idleWindow(`${cli} round ${round}`, procs, IDLE_S);
          const g = w.guard as IdleStats, n = w.notifier as IdleStats;
          const line = `${cli} round ${round}: ready ${guard.readyMs.toFixed(0)} ms; guard cpu ${g.cpuPercent.toFixed(2)} % rss max ${g.rssMaxMB.toFixed(1)} MB; notifier cpu ${n.cpuPercent.toFixed(2)} % rss max ${n.rssMaxMB.toFixed(1)} MB; load ${(w.load1AtStart as number).toFixed(2)}→${(w.load1AtEnd as number).toFixed(2)}; alone ${String(w.alone)}`;
          log(line);
          rows.push(line);
        } finally {
          for (const p of Object.values(procs)) await p.stop();
        }
      }
    }
  } finally {
    await emu.stop();
    cleanupTemps();
  }
  process.stdout.write(`idle row, ${N_FILES} files, ${IDLE_S} s windows; load now ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n${rows.join('\n')}\n`);
}

main().then(() => process.exit(0), (err) => { log(`idle-row failed: ${(err as Error).stack ?? String(err)}`); process.exit(1); });
