/**
 * `node dist/bench/guard-rss.js [variant ...]`: the guard's idle RSS, the
 * two footprint rows of bench/footprint.ts (10,000-file root, example root) for several builds
 * or node flags side by side, with the RSS split as /proc/<pid>/status gives it: RssAnon (the
 * JS heap, malloc, thread stacks), RssFile (node's binary and the native addons, touched
 * pages), RssShmem. A variant is `cli.js` or `cli.js::--flag,--flag` (node flags before the
 * script); none: this build. The guard runs alone (no notifier), each variant on its own
 * roots initialised by its own build, the windows interleaved A, B, A, B… so all see the same
 * load; a bare node window opens each round.
 *
 * BENCH_IDLE_SECONDS (default 30) per window, BENCH_IDLE_ROUNDS (default 2),
 * BENCH_RSS_ROOTS=10k,example (default both), BENCH_RSS_HEAP=1 also prints the guard's
 * process.memoryUsage() at the window's end (a preload writes it to a file every second).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { DiscordEmulator } from '../test/helpers/discord-emulator.js';
import { CLI, FIXTURE, TOKEN, cleanupTemps, log, makeRoot, sleep, startReady, statusMB, type BenchRoot, type Proc } from './lib.js';
import { N_FILES, node } from './config.js';
import { bigRoot } from './big-root.js';
import { BARE_NODE } from './footprint.js';

const IDLE = Number(process.env.BENCH_IDLE_SECONDS ?? 30);
const ROUNDS = Number(process.env.BENCH_IDLE_ROUNDS ?? 2);
const ROOTS = (process.env.BENCH_RSS_ROOTS ?? '10k,example').split(',');
const HEAP = process.env.BENCH_RSS_HEAP === '1';

interface Variant { label: string; cli: string; flags: string[]; env: Record<string, string> }
/** `cli.js::--flag,NAME=value,…`: node flags, and environment variables for the guard. */
const parse = (spec: string): Variant => {
  const [cli, f] = spec.split('::');
  const items = f ? f.split(',').filter(Boolean) : [];
  const env = Object.fromEntries(items.filter((x) => /^[A-Z_]+=/.test(x)).map((x) => [x.slice(0, x.indexOf('=')), x.slice(x.indexOf('=') + 1)]));
  return { label: spec, cli: cli!, flags: items.filter((x) => !/^[A-Z_]+=/.test(x)), env };
};

const status = (pid: number): Record<string, number> => statusMB(pid, ['VmRSS', 'RssAnon', 'RssFile', 'RssShmem', 'VmHWM']);

interface Window { max: Record<string, number>; mean: Record<string, number>; heap?: string }
async function sample(p: Proc, heapFile?: string): Promise<Window> {
  await sleep(2000);
  const xs: Record<string, number>[] = [];
  const t0 = performance.now();
  while (performance.now() - t0 < IDLE * 1000) { xs.push(status(p.pid)); await sleep(1000); }
  const keys = Object.keys(xs[0]!);
  const max = Object.fromEntries(keys.map((k) => [k, Math.max(...xs.map((x) => x[k]!))]));
  const mean = Object.fromEntries(keys.map((k) => [k, xs.reduce((a, x) => a + x[k]!, 0) / xs.length]));
  let heap: string | undefined;
  if (heapFile) { try { heap = readFileSync(heapFile, 'utf8'); } catch { heap = 'no memoryUsage written'; } }
  return { max, mean, ...(heap !== undefined ? { heap } : {}) };
}

const f1 = (x: number) => x.toFixed(1);
const line = (w: Window) => `rss max ${f1(w.max.VmRSS!)} mean ${f1(w.mean.VmRSS!)} | anon ${f1(w.max.RssAnon!)} file ${f1(w.max.RssFile!)} shmem ${f1(w.max.RssShmem!)} (max)`;

async function main(): Promise<void> {
  const variants = (process.argv.slice(2).length ? process.argv.slice(2) : [CLI]).map(parse);
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  const rows: string[] = [];
  const probeDir = mkdtempSync(join(tmpdir(), 'warden-rss-'));
  try {
    const roots = variants.map((v) => {
      const made: Record<string, BenchRoot> = {};
      for (const which of ROOTS) {
        const r = which === '10k' ? bigRoot(emu.api) : makeRoot('example', () => readFileSync(join(FIXTURE, 'config', 'warden.toml'), 'utf8'));
        const init = spawnSync(node, [v.cli, 'init', '--root', r.root], { env: r.env, encoding: 'utf8', timeout: 300_000 });
        if (init.status !== 0) throw new Error(`init with ${v.cli} failed: ${init.stderr}`);
        made[which] = r;
      }
      return made;
    });
    for (let round = 0; round < ROUNDS; round++) {
      const bare = await startReady(node, BARE_NODE, process.env);
      const bw = await sample(bare).finally(() => bare.stop());
      const bl = `round ${round} bare node: ${line(bw)}; load ${loadavg()[0]!.toFixed(2)}`;
      log(bl); rows.push(bl);
      for (const which of ROOTS) {
        for (const [i, v] of variants.entries()) {
          const r = roots[i]![which]!;
          const heapFile = HEAP ? join(probeDir, `heap-${i}-${which}-${round}.txt`) : undefined;
          const pre = heapFile ? ['--import', `data:text/javascript,import{writeFileSync as w}from'node:fs';setInterval(()=>{const m=process.memoryUsage();w(${JSON.stringify(heapFile)},Object.entries(m).map(([k,x])=>k+' '+(x/1048576).toFixed(1)).join(' '))},1000).unref()`] : [];
          const load0 = loadavg()[0]!;
          const g = await startReady(node, [...v.flags, ...pre, v.cli, 'run', '--guard', '--root', r.root], { ...r.env, ...v.env }, 60_000);
          let w: Window;
          try { w = await sample(g, heapFile); } finally { await g.stop(); }
          const l = `round ${round} ${which} ${v.label}: ready ${g.readyMs.toFixed(0)} ms; ${line(w)}${w.heap ? ` | heap: ${w.heap}` : ''}; load ${load0.toFixed(2)}→${loadavg()[0]!.toFixed(2)}`;
          log(l); rows.push(l);
        }
      }
    }
  } finally {
    await emu.stop();
    cleanupTemps();
  }
  writeFileSync(join(probeDir, 'rows.txt'), rows.join('\n') + '\n');
  process.stdout.write(`guard RSS, ${N_FILES} files / example root, ${IDLE} s windows (MB); load now ${loadavg().map((x) => x.toFixed(2)).join(' ')}\n${rows.join('\n')}\n`);
}

main().then(() => process.exit(0), (err) => { log(`guard-rss failed: ${(err as Error).stack ?? String(err)}`); process.exit(1); });
