/**
 * The flood, in its own process (the bench's event loop times reverts meanwhile): N empty
 * files named junkI.txt created in DIR as fast as they come, then one JSON line.
 * Usage: node flood-writer.js DIR N
 */
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';

const [dir, nArg] = process.argv.slice(2);
if (!dir) { process.stderr.write('usage: flood-writer.js DIR N\n'); process.exit(2); }
const n = Number(nArg ?? 200_000);
const t0 = performance.now();
for (let i = 0; i < n; i++) closeSync(openSync(join(dir, `junk${i}.txt`), 'w', 0o644));
process.stdout.write(`${JSON.stringify({ files: n, ms: performance.now() - t0 })}\n`);
