/** `npm run bench`, section: 2. verify throughput (see bench/run.ts). */
import { log, median, timed, type BenchRoot } from './lib.js';
import { N_FILES, RUNS, type Json, node, warden } from './config.js';
import { TREES, type AideSetup } from './aide.js';
import { loadavg } from 'node:os';
import { statSync } from 'node:fs';
import { join } from 'node:path';

// ---------------------------------------------------------------- 2. verify throughput

export async function verifyThroughput(r: BenchRoot, aide: AideSetup): Promise<Json> {
  const out: Json = { files: N_FILES, fileBytes: 1024, runs: RUNS, load1AtStart: loadavg()[0] };
  try { out.indexBytes = statSync(join(r.root, 'snapshots', 'baseline', 'index')).size; } catch { /* store elsewhere */ }
  // Warm the page cache the same way for everyone.
  await timed('sh', ['-c', `cd "$1" && find ${TREES.join(' ')} -type f -print0 | xargs -0 cat > /dev/null`, 'sh', r.root], r.env);

  const w: number[] = [];
  await timed(node, warden(['verify', '--root', r.root]), r.env); // warm-up
  for (let i = 0; i < RUNS; i++) w.push((await timed(node, warden(['verify', '--root', r.root]), r.env)).ms);
  const s: number[] = [];
  for (let i = 0; i < RUNS; i++) s.push((await timed('sh', ['-c', `cd "$1" && find ${TREES.join(' ')} -type f -print0 | xargs -0 sha256sum > /dev/null`, 'sh', r.root], r.env)).ms);
  out.wardenMs = median(w);
  out.wardenRuns = w;
  out.sha256sumMs = median(s);
  out.sha256sumRuns = s;
  out.ratioToSha256sum = median(w) / median(s);
  log(`verify: warden ${median(w).toFixed(0)} ms, sha256sum ${median(s).toFixed(0)} ms`);

  out.aideNote = aide.note;
  if (aide.ok) {
    const a: number[] = [];
    for (let i = 0; i < RUNS; i++) a.push((await timed('aide', ['--check', `--config=${aide.conf}`], r.env, [0])).ms);
    out.aideMs = median(a);
    out.aideRuns = a;
    out.aideOverWarden = median(a) / median(w);
    log(`verify: aide --check ${median(a).toFixed(0)} ms`);
  }
  out.load1AtEnd = loadavg()[0];
  out.met = { sha256sum: (out.ratioToSha256sum as number) <= 2, aide: aide.ok ? (out.aideOverWarden as number) >= 15 : null };
  return out;
}
