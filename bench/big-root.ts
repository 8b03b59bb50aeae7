/** `npm run bench`, section: the 10,000-file root (see bench/run.ts). */
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { makeRoot, wardenToml, type BenchRoot } from './lib.js';
import { N_FILES, node } from './config.js';

// ---------------------------------------------------------------- the 10,000-file root

export function bigRoot(api: string): BenchRoot {
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < N_FILES; i++) files[`data/f${String(i).padStart(5, '0')}.txt`] = randomBytes(1024);
  return makeRoot('10k', (tokenFile) => wardenToml({ protect: ['data/*.txt'], discordApi: api, tokenFile }), files);
}

/** One 10,000-file root per build (its CLI path), each initialised by that build. */
export function initBigRoots(clis: readonly string[], api: string): BenchRoot[] {
  return clis.map((cli) => {
    const big = bigRoot(api);
    const r = spawnSync(node, [cli, 'init', '--root', big.root], { env: big.env, encoding: 'utf8', timeout: 300_000 });
    if (r.status !== 0) throw new Error(`init with ${cli} failed: ${r.stderr}`);
    return big;
  });
}
