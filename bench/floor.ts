/**
 * The floor: the least a correct reverter must do (docs/BENCHMARKS.md §What each number means). Watch the directory, read the
 * file, compare with the approved bytes, and on a difference write a temp file, fsync it,
 * rename it over the path and fsync the directory. Usage: node floor.js FILE (prints `ready`).
 */
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, watch, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

const file = process.argv[2] ?? '';
if (!file) { process.stderr.write('usage: floor.js FILE\n'); process.exit(2); }
const dir = dirname(file);
const name = basename(file);
const approved = readFileSync(file);
const dirFd = openSync(dir, 'r');
let n = 0;

function check(): void {
  let cur: Buffer | null = null;
  try { cur = readFileSync(file); } catch { cur = null; }
  if (cur && cur.equals(approved)) return;
  const tmp = join(dir, `.${name}.floor-${process.pid}-${n++}.tmp`);
  const fd = openSync(tmp, 'wx', 0o600);
  try { writeSync(fd, approved); fsyncSync(fd); } finally { closeSync(fd); }
  renameSync(tmp, file);
  fsyncSync(dirFd);
}

watch(dir, (_event, changed) => { if (changed === name) check(); });
process.on('SIGTERM', () => process.exit(0));
process.stdout.write('ready\n');
