/**
 * What the witness adds to an `open` of a protected file (docs/CONTRACT.md §Who did it): the same
 * open + close, by another process, side by side in one run: no witness; the witness
 * recording (a read: one read of /proc/TID/syscall, then allowed); an open for writing
 * (recorded: /proc reads and one appended line before the answer); and with enforce, the
 * same write refused. `node dist/bench/witness-open.js` (root). Prints JSON; the table in
 * docs/BENCHMARKS.md is from it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { Witness } from '../src/witness/witness.js';

const N = Number(process.env.N ?? 4000);
const OPENER = `
const fs = require('fs');
const [path, mode, n] = [process.argv[1], process.argv[2], Number(process.argv[3])];
const flags = mode === 'write' ? fs.constants.O_WRONLY | fs.constants.O_APPEND : fs.constants.O_RDONLY;
const t = [];
for (let i = 0; i < n + 200; i++) {
  const s = process.hrtime.bigint();
  try { fs.closeSync(fs.openSync(path, flags)); } catch {}
  if (i >= 200) t.push(Number(process.hrtime.bigint() - s) / 1000);
}
t.sort((a, b) => a - b);
console.log(JSON.stringify({ p50: t[Math.floor(t.length / 2)], p99: t[Math.floor(t.length * 0.99)] }));
`;

function measure(path: string, mode: 'read' | 'write'): { p50: number; p99: number } {
  const r = spawnSync(process.execPath, ['-e', OPENER, path, mode, String(N)], { encoding: 'utf8' });
  return JSON.parse(r.stdout) as { p50: number; p99: number };
}

async function withWitness<T>(root: string, enforce: boolean, fn: () => T): Promise<T> {
  const rootFd = openSync(root, 'r');
  const w = Witness.start({ root, rootFd, enforce, targets: () => ({ files: ['config/a.toml'], dirs: ['config'] }), recordDir: join(root, '..', `rec-${enforce}`), log: () => {} });
  if (!w.running) throw new Error(`no witness: ${w.status().why}`);
  try { return fn(); } finally { await w.stop(); closeSync(rootFd); }
}

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'warden-bench-witness-'));
  const root = join(base, 'root');
  mkdirSync(join(root, 'config'), { recursive: true });
  const file = join(root, 'config', 'a.toml');
  writeFileSync(file, 'x = 1\n');
  try {
    const rows: Record<string, { p50: number; p99: number }> = {};
    rows['read, no witness'] = measure(file, 'read');
    rows['write, no witness'] = measure(file, 'write');
    await withWitness(root, false, () => {
      rows['read, witness recording'] = measure(file, 'read');
      rows['write, witness recording'] = measure(file, 'write');
    });
    await withWitness(root, true, () => {
      rows['read, witness enforce'] = measure(file, 'read');
      rows['write, witness enforce (refused)'] = measure(file, 'write');
    });
    console.log(JSON.stringify({ n: N, unit: 'µs per open+close', rows }, null, 1));
  } finally { rmSync(base, { recursive: true, force: true }); }
}

void main();
