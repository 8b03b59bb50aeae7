/**
 * Crash trials: 20 SIGKILLs of a two-file credential rotation — 12 of them
 * seam-free (sent from outside at a random moment, no product seam set; 10 uniform over the
 * command's duration, 2 timed from the journal seen through inotify), 8 at a product step
 * or with the step delay; after every restart the set is wholly old or
 * wholly new, every interrupted rotation left a half-applied alert, and every start
 * succeeded on its own. The runner is bench/crash-trials.ts (`npm run bench:crash` runs 1,000).
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { passed, runCrashTrials } from '../../bench/crash-trials.js';

it('20 kill -9 trials of a two-file rotation, 12 seam-free: never mixed, always reported, always restarted', { timeout: 300_000 }, async () => {
  const s = await runCrashTrials(20);
  process.stderr.write(`# crash trials: ${JSON.stringify({ ...s, calibration: undefined })}\n`);
  assert.equal(s.aborted, undefined, 'no worker stopped early');
  assert.equal(s.trials, 20);
  assert.equal(s.mixed, 0, 'no mixed set after a restart');
  assert.equal(s.mixedAtKill, 0, 'no kill left a mixed set without a journal');
  assert.equal(s.missingAlerts, 0, 'every interruption raised half-applied');
  assert.equal(s.baselineMismatch, 0, 'files and baseline agree after recovery');
  assert.equal(s.failedStarts, 0, 'every start after a kill reached ready on its own');
  assert.equal(s.hangs, 0, 'no command or daemon hung');
  assert.equal(s.unexpectedExits, 0, 'no daemon died on its own');
  assert.ok(passed(s));
  assert.deepEqual(s.byKind, { 'kill-cli': 6, 'kill-daemon': 6, step: 7, delay: 1 });
  assert.equal(s.seamFree.trials, 12);
  assert.equal(s.seamFree.before + s.seamFree.inside + s.seamFree.after, 12, 'every seam-free kill is classified');
  assert.equal(s.byStep['kill-cli/wide'], 5);
  assert.equal(s.byStep['kill-daemon/journal'], 1);
  for (const step of ['begin', 'journal-blobs', 'journal', 'file-1', 'file-2', 'baseline', 'done']) assert.equal(s.byStep[step], 1, step);
  // A self-kill at journal, file-1, file-2 or baseline always leaves the intent manifest.
  assert.deepEqual(s.landed.step, { before: 2, inside: 4, after: 1 }, 'begin, journal-blobs before; journal…baseline inside; done after');
  assert.equal(s.rolledBack + s.rolledForward, s.interrupted);
});

it('a start that fails after a kill is a reported failure, not a hang', { timeout: 120_000 }, async () => {
  // The root is broken on purpose after the first kill (its baseline key is gone): every start from then on exits before ready.
  const t0 = Date.now();
  const s = await runCrashTrials(3, { readyMs: 20_000, beforeRestart: (root) => rmSync(join(root, '..', 'state'), { recursive: true, force: true }) });
  assert.equal(s.trials, 1, 'the worker stopped at the first trial');
  assert.match(s.aborted ?? '', /did not start twice in a row/);
  assert.equal(s.failedStarts, 2);
  assert.match(s.failures.join('\n'), /daemon start exited/);
  assert.equal(passed(s), false);
  assert.ok(Date.now() - t0 < 100_000, 'it came back before its deadline');
});
