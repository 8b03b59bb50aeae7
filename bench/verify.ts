/** `npm run bench`, section: 2. verify throughput (see bench/run.ts). */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { log, median, newTempDir, timed, type BenchRoot } from './lib.js';
import { N_FILES, RUNS, type Json, node, warden } from './config.js';
import { sh } from './machine.js';
import { ok } from './report.js';

// ---------------------------------------------------------------- 2. verify throughput

export function ensureAide(): { ok: boolean; note: string } {
  if (spawnSync('sh', ['-c', 'command -v aide'], { encoding: 'utf8' }).status === 0) return { ok: true, note: 'installed' };
  log('aide is missing: apt-get update && apt-get install -y aide');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const u = spawnSync('apt-get', ['update', '-qq'], { encoding: 'utf8', env, timeout: 120_000 });
  if (u.status !== 0) return { ok: false, note: `apt-get update failed (${u.status ?? u.error?.message}): ${(u.stderr ?? '').trim().split('\n').slice(-1)[0] ?? ''}` };
  const i = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', 'aide'], { encoding: 'utf8', env, timeout: 180_000 });
  if (i.status !== 0) return { ok: false, note: `apt-get install aide failed (${i.status ?? i.error?.message}): ${(i.stderr ?? '').trim().split('\n').slice(-1)[0] ?? ''}` };
  return spawnSync('sh', ['-c', 'command -v aide']).status === 0 ? { ok: true, note: 'installed by the bench' } : { ok: false, note: 'aide not on PATH after install' };
}

export const TREES = ['config', 'orgs', 'blocks', 'data'];

export async function verifyThroughput(r: BenchRoot): Promise<Json> {
  const out: Json = { files: N_FILES, fileBytes: 1024, runs: RUNS };
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

  const aide = ensureAide();
  out.aideNote = aide.note;
  if (aide.ok) {
    const dir = newTempDir('aide');
    const conf = join(dir, 'aide.conf');
    writeFileSync(conf, [
      `database_in=file:${dir}/aide.db`,
      `database_out=file:${dir}/aide.db.new`,
      'gzip_dbout=no',
      'report_url=stdout',
      'Bench = p+i+n+u+g+s+m+c+sha256',
      ...TREES.map((t) => `${r.root}/${t} Bench`),
      '',
    ].join('\n'));
    const init = await timed('aide', ['--init', `--config=${conf}`], r.env, [0]);
    out.aideInitMs = init.ms;
    writeFileSync(join(dir, 'aide.db'), readFileSync(join(dir, 'aide.db.new')));
    const a: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const c = await timed('aide', ['--check', `--config=${conf}`], r.env, [0]);
      a.push(c.ms);
    }
    out.aideMs = median(a);
    out.aideRuns = a;
    out.aideOverWarden = median(a) / median(w);
    log(`verify: aide --check ${median(a).toFixed(0)} ms`);
  }
  out.met = { sha256sum: (out.ratioToSha256sum as number) <= 3, aide: aide.ok ? (out.aideOverWarden as number) >= 15 : null };
  return out;
}
