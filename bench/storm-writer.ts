/**
 * The storm, in its own process so that the bench's event loop (and the Discord emulator
 * in it) is not blocked: in-place writes to FILE at RATE per second for SECONDS, paced
 * against the monotonic clock. After the last write it polls the file until the approved
 * bytes (the content when it started) are back, and prints one JSON line.
 * Usage: node storm-writer.js FILE RATE SECONDS
 */
import { readFileSync, writeFileSync } from 'node:fs';

const [file, rateArg, secondsArg] = process.argv.slice(2);
if (!file) { process.stderr.write('usage: storm-writer.js FILE RATE SECONDS\n'); process.exit(2); }
const rate = Number(rateArg ?? 1000);
const seconds = Number(secondsArg ?? 10);
const approved = readFileSync(file);
const cell = new Int32Array(new SharedArrayBuffer(4));
const pause = (ms: number) => { if (ms > 0) Atomics.wait(cell, 0, 0, ms); };
const now = () => Number(process.hrtime.bigint()) / 1e6;

const total = Math.round(rate * seconds);
const t0 = now();
let lastWrite = t0;
let failed = 0;
for (let i = 0; i < total; i++) {
  pause(t0 + (i * 1000) / rate - now());
  try { writeFileSync(file, `storm write ${i}\n`); } catch { failed++; }
  lastWrite = now();
}
const stormMs = lastWrite - t0;
// Converged: the approved bytes are readable again after the last write.
let convergeMs = NaN;
const deadline = lastWrite + 30_000;
for (;;) {
  let cur: Buffer | null = null;
  try { cur = readFileSync(file); } catch { cur = null; }
  const t = now();
  if (cur && cur.equals(approved)) { convergeMs = t - lastWrite; break; }
  if (t > deadline) break;
  pause(0.2);
}
process.stdout.write(JSON.stringify({ writes: total - failed, failed, stormMs, convergeMs, lastWriteMono: lastWrite }) + '\n');
