/**
 * Each runtime's own check timed on its valid file through the harness (docs/RUNTIMES.md,
 * "What a check costs"): `node scripts/test-runtimes.mjs --measure N` prints the median,
 * minimum and maximum of N runs, the harness's own cost included (scratch, bubblewrap).
 */
import { builtinFor, validate, type ValidatorSpec } from '../../src/validators/index.js';
import { CASES, type Manifest } from './cases.js';

export async function measure(m: Manifest, n: number, log: (s: string) => void): Promise<void> {
  for (const c of CASES) {
    const e = m[c.runtime];
    if (!e || 'skip' in e) { log(`measure ${c.runtime} ${c.check}: skipped`); continue; }
    const spec = builtinFor(c.runtime).find((s) => s.name === c.check) as ValidatorSpec;
    const ms: number[] = [];
    let iso = '';
    for (let i = 0; i < n; i++) {
      const v = await validate(spec, c.valid, `/home/u/${c.file}`, { packageDir: e.dir, nodes: e.nodes });
      if (v.status !== 'valid') { log(`measure ${c.runtime} ${c.check}: ${v.status}: ${v.message}`); break; }
      ms.push(v.durationMs);
      iso = v.isolation;
    }
    if (ms.length === 0) continue;
    const s = [...ms].sort((a, b) => a - b);
    log(`measure ${c.runtime} ${c.check}: median ${s[Math.floor(s.length / 2)]} ms (min ${s[0]}, max ${s[s.length - 1]}, n=${s.length}, isolation ${iso})`);
  }
}
