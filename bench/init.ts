/**
 * `npm run bench`, section: init of the 10,000-file root next to `aide --init` over the
 * same trees, back to back (see bench/run.ts). warden init runs once (it makes the baseline
 * the later sections use); aide --init RUNS times, the last database kept for `aide --check`.
 */
import { copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { log, median, timed, type BenchRoot } from './lib.js';
import { N_FILES, RUNS, type Json, node, warden } from './config.js';
import { aideSetup, type AideSetup } from './aide.js';

export async function initVsAide(big: BenchRoot): Promise<{ res: Json; aide: AideSetup }> {
  const w = await timed(node, warden(['init', '--root', big.root]), big.env);
  log(`init: warden ${w.ms.toFixed(0)} ms`);
  const res: Json = { files: N_FILES, wardenMs: w.ms };
  const aide = aideSetup(big.root);
  res.aideNote = aide.note;
  if (aide.ok) {
    const a: number[] = [];
    for (let i = 0; i < RUNS; i++) a.push((await timed('aide', ['--init', `--config=${aide.conf}`], big.env, [0])).ms);
    copyFileSync(join(aide.dir, 'aide.db.new'), join(aide.dir, 'aide.db'));
    res.aideInitMs = median(a);
    res.aideInitRuns = a;
    res.ratioToAideInit = w.ms / median(a);
    log(`init: aide --init ${median(a).toFixed(0)} ms`);
  }
  res.met = { aideInit: aide.ok ? (res.ratioToAideInit as number) <= 1 : null };
  return { res, aide };
}
