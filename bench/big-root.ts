/** `npm run bench`, section: the 10,000-file root (see bench/run.ts). */
import { randomBytes } from 'node:crypto';
import { makeRoot, wardenToml, type BenchRoot } from './lib.js';
import { N_FILES } from './config.js';

// ---------------------------------------------------------------- the 10,000-file root

export function bigRoot(api: string): BenchRoot {
  const files: Record<string, Buffer> = {};
  for (let i = 0; i < N_FILES; i++) files[`data/f${String(i).padStart(5, '0')}.txt`] = randomBytes(1024);
  return makeRoot('10k', (tokenFile) => wardenToml({ protect: ['data/*.txt'], discordApi: api, tokenFile }), files);
}
