/**
 * `node dist/bench/verify-paired.js OTHER_CLI [rounds]`: `warden verify` of this build next to
 * another build's (OTHER_CLI: e.g. /work/main/dist/src/cli/main.js), on one 10,000-file root
 * (bench/big-root.ts, made and initialised by this build; the index format is the same),
 * interleaved round by round with `find | xargs sha256sum` and `aide --check` over the same
 * trees, so every row shares the machine's load of its round. Prints each round's wall and
 * CPU ms (user+sys of the child) with the 1-minute load, then the medians.
 *
 * BENCH_NO_EXTRA_CA=1 runs both warden builds without NODE_EXTRA_CA_CERTS (node parses that
 * bundle at every start, before any JS; see docs/BENCHMARKS.md §Where the time and memory go).
 */
import { spawn } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { CLI, log, median, timed, track } from './lib.js';
import { bigRoot } from './big-root.js';
import { TREES, aideSetup } from './aide.js';

const other = process.argv[2] ?? '';
const rounds = Number(process.argv[3] ?? 7);
if (!other) { process.stderr.write('usage: node dist/bench/verify-paired.js OTHER_CLI [rounds]\n'); process.exit(2); }

/** CPU of a child: run it under sh's `times` (children's user+sys, after it ends). */
async function withCpu(cmd: string, args: string[], env: NodeJS.ProcessEnv, okCodes = [0]): Promise<{ ms: number; cpu: number }> {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const script = `${[cmd, ...args].map(q).join(' ')} >/dev/null 2>&1; rc=$?; times >&2; exit $rc`;
  const t0 = performance.now();
  const r = await new Promise<{ code: number | null; err: string }>((resolve) => {
    const p = track(spawn('sh', ['-c', script], { env, stdio: ['ignore', 'ignore', 'pipe'] }));
    let err = '';
    p.stderr!.on('data', (d: Buffer) => { err += String(d); });
    p.once('exit', (code) => resolve({ code, err }));
  });
  const ms = performance.now() - t0;
  if (!okCodes.includes(r.code ?? -1)) throw new Error(`${cmd} exited ${r.code}: ${r.err.slice(-1000)}`);
  // `times` prints the shell's line, then its children's: "0m0.412s 0m0.160s".
  const lines = r.err.trim().split('\n');
  const sec = (t: string) => { const m = /(\d+)m([\d.]+)s/.exec(t); return m ? Number(m[1]) * 60 + Number(m[2]) : NaN; };
  const [u, s] = (lines[lines.length - 1] ?? '').trim().split(/\s+/);
  return { ms, cpu: (sec(u ?? '') + sec(s ?? '')) * 1000 };
}

async function main(): Promise<void> {
  log('making the 10,000-file root');
  const r = bigRoot('http://127.0.0.1:9/api');
  await timed(process.execPath, [CLI, 'init', '--root', r.root], r.env);
  const aide = aideSetup(r.root);
  if (aide.ok) {
    await timed('aide', ['--init', `--config=${aide.conf}`], r.env, [0]);
    copyFileSync(join(aide.dir, 'aide.db.new'), join(aide.dir, 'aide.db'));
  }
  const env = { ...r.env };
  if (process.env.BENCH_NO_EXTRA_CA === '1') delete env.NODE_EXTRA_CA_CERTS;
  const trees = `cd "$1" && find ${TREES.join(' ')} -type f -print0 | xargs -0`;
  await timed('sh', ['-c', `${trees} cat > /dev/null`, 'sh', r.root], r.env);
  const rows: Record<string, { ms: number[]; cpu: number[] }> = { mine: { ms: [], cpu: [] }, other: { ms: [], cpu: [] }, sha256sum: { ms: [], cpu: [] }, aide: { ms: [], cpu: [] }, node: { ms: [], cpu: [] } };
  const add = (k: string, x: { ms: number; cpu: number }) => { rows[k]!.ms.push(x.ms); rows[k]!.cpu.push(x.cpu); };
  // A warm-up of each.
  await withCpu(process.execPath, [CLI, 'verify', '--root', r.root], env);
  await withCpu(process.execPath, [other, 'verify', '--root', r.root], env);
  const loads: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const l = loadavg()[0]!;
    loads.push(l);
    // Alternate which build goes first.
    const order = i % 2 === 0 ? ['mine', 'other'] : ['other', 'mine'];
    for (const k of order) add(k, await withCpu(process.execPath, [k === 'mine' ? CLI : other, 'verify', '--root', r.root], env));
    add('sha256sum', await withCpu('sh', ['-c', `${trees} sha256sum > /dev/null`, 'sh', r.root], r.env));
    add('node', await withCpu(process.execPath, ['-e', '0'], env));
    if (aide.ok) add('aide', await withCpu('aide', ['--check', `--config=${aide.conf}`], r.env, [0]));
    const f = (k: string) => `${k} ${rows[k]!.ms.at(-1)?.toFixed(0) ?? '-'} (cpu ${rows[k]!.cpu.at(-1)?.toFixed(0) ?? '-'})`;
    log(`round ${i + 1}, load ${l.toFixed(2)}: ${['mine', 'other', 'sha256sum', 'aide', 'node'].map(f).join(', ')}`);
  }
  const m = (k: string, w: 'ms' | 'cpu') => median(rows[k]![w]);
  const out = [
    `verify paired, ${rounds} rounds, load ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)}${process.env.BENCH_NO_EXTRA_CA === '1' ? ', warden and node without NODE_EXTRA_CA_CERTS' : ''}`,
    `  this build   ${m('mine', 'ms').toFixed(0)} ms (cpu ${m('mine', 'cpu').toFixed(0)})`,
    `  other build  ${m('other', 'ms').toFixed(0)} ms (cpu ${m('other', 'cpu').toFixed(0)})   ${other}`,
    `  sha256sum    ${m('sha256sum', 'ms').toFixed(0)} ms (cpu ${m('sha256sum', 'cpu').toFixed(0)})  → this ${(m('mine', 'ms') / m('sha256sum', 'ms')).toFixed(2)}×, other ${(m('other', 'ms') / m('sha256sum', 'ms')).toFixed(2)}×`,
    aide.ok ? `  aide --check ${m('aide', 'ms').toFixed(0)} ms  → this ${(m('aide', 'ms') / m('mine', 'ms')).toFixed(1)}× faster, other ${(m('aide', 'ms') / m('other', 'ms')).toFixed(1)}× faster` : `  aide: ${aide.note}`,
    `  bare node    ${m('node', 'ms').toFixed(0)} ms (cpu ${m('node', 'cpu').toFixed(0)})`,
  ];
  process.stdout.write(out.join('\n') + '\n');
}

main().then(() => process.exit(0), (err) => { log(`failed: ${(err as Error).stack ?? String(err)}`); process.exit(1); });
