/**
 * The store-budget tests' shared set-up (docs/CONTRACT.md §Store budget): what a directory
 * costs on disk as du counts it, and a root whose approved store_max_bytes is what its
 * store uses now plus some headroom.
 */
import assert from 'node:assert/strict';
import { lstatSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, TEST_WARDEN_TOML, type testWorld, type TestRoot } from './root.js';

/** Allocated bytes under `dir` (st_blocks, each inode once, no link followed): du's figure. */
export function diskUse(dir: string): number {
  const seen = new Set<string>();
  let n = 0;
  const walk = (p: string): void => {
    let st;
    try { st = lstatSync(p); } catch (e) { if ((e as NodeJS.ErrnoException).code === 'ENOENT') return; throw e; } // pruned under us
    const key = `${st.dev}:${st.ino}`;
    if (!seen.has(key)) { seen.add(key); n += st.blocks * 512; }
    if (!st.isDirectory()) return;
    let children: string[] = [];
    try { children = readdirSync(p); } catch (e) { if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e; }
    for (const c of children) walk(join(p, c));
  };
  walk(dir);
  return n;
}

/** An initialised root whose approved warden.toml sets store_max_bytes to what its store uses now plus `headroom`. */
export function rootWithBudget(world: ReturnType<typeof testWorld>, headroom: number): { t: TestRoot; budget: number } {
  const toml = TEST_WARDEN_TOML.replace('rescan_seconds = 30', 'rescan_seconds = 5');
  const t = world.root({ wardenToml: toml, init: true });
  const budget = diskUse(t.p('snapshots')) + headroom;
  writeFileSync(join(t.base, 'next.toml'), toml.replace('max_bytes = 1048576\n', `max_bytes = 1048576\nstore_max_bytes = ${budget}\n`));
  const r = cli(t, ['apply', 'config/warden.toml', '--from', join(t.base, 'next.toml')]);
  assert.equal(r.code, 0, `apply store_max_bytes: ${r.stdout}${r.stderr}`);
  return { t, budget };
}
