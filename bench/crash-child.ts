/**
 * Runs bench/crash-trials.ts in chunks in its own process group, one JSON line per chunk,
 * so the bench can stop it at its time budget (kill the group) and still count the trials
 * that finished. Usage: node crash-child.js TOTAL CHUNK
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const total = Number(process.argv[2] ?? 1000);
const chunk = Number(process.argv[3] ?? 50);
const mod = join(import.meta.dirname, 'crash-trials.js');
if (!existsSync(mod)) { process.stdout.write(JSON.stringify({ unavailable: true }) + '\n'); process.exit(0); }
const m = await import(pathToFileURL(mod).href) as { runCrashTrials?: (n: number) => Promise<Record<string, unknown>> };
if (typeof m.runCrashTrials !== 'function') { process.stdout.write(JSON.stringify({ unavailable: true, note: 'no runCrashTrials export' }) + '\n'); process.exit(0); }
for (let done = 0; done < total; done += chunk) {
  const r = await m.runCrashTrials(Math.min(chunk, total - done));
  process.stdout.write(JSON.stringify(r) + '\n');
}
