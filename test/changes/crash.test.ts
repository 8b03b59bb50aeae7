/**
 * Crash trials (issue 4): kill -9 at random points of a two-file credential rotation, 20
 * times; after every restart the set is wholly old or wholly new, and every interrupted
 * rotation left a half-applied alert. The runner is bench/crash-trials.ts (the bench runs 1,000).
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { runCrashTrials } from '../../bench/crash-trials.js';

it('20 kill -9 trials of a two-file rotation: never mixed, always reported', { timeout: 300_000 }, async () => {
  const s = await runCrashTrials(20);
  process.stderr.write(`# crash trials: ${JSON.stringify(s)}\n`);
  assert.equal(s.trials, 20);
  assert.equal(s.mixed, 0, 'no mixed set after a restart');
  assert.equal(s.missingAlerts, 0, 'every interruption raised half-applied');
  assert.equal(s.baselineMismatch, 0, 'files and baseline agree after recovery');
  assert.ok(s.interrupted > 0, 'some trials were interrupted mid-transaction');
  assert.equal(s.rolledBack + s.rolledForward, s.interrupted);
});
