/**
 * `npm run bench`, section: module load. The built entry (dist/src/cli/main.js, the
 * esbuild bundle) side by side with tsc's unbundled entry of the same build
 * (dist/src/cli/main.unbundled.js, kept by scripts/bundle.mjs), interleaved in one run:
 *   - `warden --version`: spawn to exit (node's start, module load, one line);
 *   - `warden run --guard` on the 10,000-file root: spawn to `ready`;
 *   - how many JavaScript files a start opens (strace, when it is installed).
 * A bare `node -e 0` is the floor. BENCH_REF_CLI=<path of another build's main.js> adds a
 * third column (another checkout's build, e.g. main's, for an A/B of two branches).
 * Alone: `node dist/bench/module-load.js` after a build (it makes its own 10,000-file root).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { CLI, cleanupTemps, cpuSeconds, log, median, startReady, timed, wardenSync, type BenchRoot } from './lib.js';
import { RUNS, type Json, node } from './config.js';

export const UNBUNDLED = join(CLI, '..', 'main.unbundled.js');

/** JavaScript files opened by `node <args>` (null without strace). */
export function jsFilesOpened(args: string[], env: NodeJS.ProcessEnv): number | null {
  const probe = spawnSync('strace', ['-V'], { encoding: 'utf8' });
  if (probe.status !== 0) return null;
  const r = spawnSync('strace', ['-f', '-qq', '-e', 'trace=openat', '-e', 'signal=none', node, ...args], { env, encoding: 'utf8', timeout: 60_000 });
  const files = new Set<string>();
  for (const line of r.stderr.split('\n')) {
    const m = /openat\([^,]+, "([^"]+\.(?:js|mjs|cjs|json|node))"/.exec(line);
    if (m && !/= -1 /.test(line)) files.add(m[1]!);
  }
  return files.size;
}

/** The guard's start on `r` until `ready`, opened files counted (the guard is stopped after). */
function guardFilesOpened(cli: string, r: BenchRoot): number | null {
  // `timeout` ends the traced guard once it is up; the count is what it opened until then.
  const probe = spawnSync('strace', ['-V'], { encoding: 'utf8' });
  if (probe.status !== 0) return null;
  const res = spawnSync('timeout', ['-s', 'TERM', '8', 'strace', '-f', '-qq', '-e', 'trace=openat', '-e', 'signal=none', node, cli, 'run', '--guard', '--root', r.root], { env: r.env, encoding: 'utf8', timeout: 30_000 });
  const files = new Set<string>();
  for (const line of res.stderr.split('\n')) {
    const m = /openat\([^,]+, "([^"]+\.(?:js|mjs|cjs|node))"/.exec(line);
    if (m && !/= -1 /.test(line)) files.add(m[1]!);
  }
  return files.size;
}

/** CPU time (user + system, ms) of `node <args>` to its exit, by /usr/bin/time (null without it): less moved by load than wall time. */
function cpuMsOf(args: string[], env: NodeJS.ProcessEnv): number | null {
  const r = spawnSync('/usr/bin/time', ['-f', 'WARDEN-CPU %U %S', node, ...args], { env, encoding: 'utf8' });
  const m = /WARDEN-CPU ([\d.]+) ([\d.]+)/.exec(r.stderr ?? '');
  return m ? (Number(m[1]) + Number(m[2])) * 1000 : null;
}

export async function moduleLoad(r: BenchRoot): Promise<Json> {
  const builds: Record<string, string> = { bundled: CLI, unbundled: UNBUNDLED };
  const ref = process.env.BENCH_REF_CLI;
  if (ref) builds.reference = ref;
  for (const [k, p] of Object.entries(builds)) if (!existsSync(p)) throw new Error(`${k}: ${p} is missing (run 'npm run build')`);
  const version: Record<string, number[]> = { bare: [] };
  const ready: Record<string, number[]> = {};
  const versionCpu: Record<string, number[]> = { bare: [] };
  const readyCpu: Record<string, number[]> = {};
  for (const k of Object.keys(builds)) { version[k] = []; ready[k] = []; versionCpu[k] = []; readyCpu[k] = []; }
  const load: number[] = [loadavg()[0]!];
  const runs = Math.max(RUNS, 5);
  for (let i = 0; i < runs; i++) {
    version.bare!.push((await timed(node, ['-e', '0'], r.env)).ms);
    for (const [k, cli] of Object.entries(builds)) version[k]!.push((await timed(node, [cli, '--version'], r.env)).ms);
    const c0 = cpuMsOf(['-e', '0'], r.env);
    if (c0 !== null) versionCpu.bare!.push(c0);
    for (const [k, cli] of Object.entries(builds)) { const c = cpuMsOf([cli, '--version'], r.env); if (c !== null) versionCpu[k]!.push(c); }
  }
  for (let i = 0; i < RUNS; i++) {
    for (const [k, cli] of Object.entries(builds)) {
      const g = await startReady(node, [cli, 'run', '--guard', '--root', r.root], r.env, 60_000);
      ready[k]!.push(g.readyMs);
      readyCpu[k]!.push(cpuSeconds(g.pid) * 1000);
      await g.stop();
    }
  }
  load.push(loadavg()[0]!);
  const files: Record<string, { version: number | null; guard: number | null }> = {};
  for (const [k, cli] of Object.entries(builds)) files[k] = { version: jsFilesOpened([cli, '--version'], r.env), guard: guardFilesOpened(cli, r) };
  const out: Json = { load1: load, runs };
  for (const k of Object.keys(builds)) {
    out[k] = { versionMs: median(version[k]!), versionRuns: version[k], readyMs: median(ready[k]!), readyRuns: ready[k],
      versionCpuMs: median(versionCpu[k]!), versionCpuRuns: versionCpu[k], readyCpuMs: median(readyCpu[k]!), readyCpuRuns: readyCpu[k], jsFilesVersion: files[k]!.version, jsFilesGuard: files[k]!.guard };
  }
  out.bareNodeMs = median(version.bare!);
  out.bareNodeCpuMs = median(versionCpu.bare!);
  log(`module load (load ${load.map((x) => x.toFixed(1)).join(' → ')}): ${Object.keys(builds).map((k) => `${k} --version ${median(version[k]!).toFixed(0)} ms (cpu ${median(versionCpu[k]!).toFixed(0)}), ready ${median(ready[k]!).toFixed(0)} ms (cpu ${median(readyCpu[k]!).toFixed(0)}), js files ${files[k]!.version}/${files[k]!.guard}`).join('; ')}; bare node ${median(version.bare!).toFixed(0)} ms (cpu ${median(versionCpu.bare!).toFixed(0)})`);
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { bigRoot } = await import('./big-root.js');
  const big = bigRoot('http://127.0.0.1:9'); // no notifier runs: the URL is never used
  try {
    const init = wardenSync(big, ['init']);
    if (init.code !== 0) throw new Error(`warden init failed: ${init.stderr}`);
    process.stdout.write(`${JSON.stringify(await moduleLoad(big))}\n`);
  } finally { cleanupTemps(); }
  process.exit(0);
}
