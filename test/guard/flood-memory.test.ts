/**
 * The guard's memory under a flood of unprotected files (docs/ARCHITECTURE.md, "Watching,
 * and what it costs"): the bench's flood row (bench/flood.ts) with a small N and a short
 * rescan, so that rescans list the flooded orgs/ while it grows and after. The guard's RSS
 * grows by at most 30 MB and an approved file edited meanwhile is reverted each time. The
 * 200,000-file figure is a bench run (`npm run bench`, or `node dist/bench/flood.js`).
 */
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { flood } from '../../bench/flood.js';
import { cleanupTemps } from '../../bench/lib.js';

after(() => cleanupTemps());

it('a flood of unprotected files in orgs/: the guard grows by at most 30 MB and reverts an edit meanwhile', async () => {
  const r = await flood(5_000, 1);
  assert.ok((r.growthPeakMB as number) <= 30, JSON.stringify(r));
  assert.ok((r.reverts as number) > 0 && Number.isFinite(r.revertMaxMs), JSON.stringify(r));
});
