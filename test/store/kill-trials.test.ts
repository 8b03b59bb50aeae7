/**
 * kill -9 from outside at random moments: of the daemon, and of `warden apply`
 * under the lock with the daemon down. After every kill the next start succeeds on its own
 * and the baseline is the old or the new approved state. The runner is bench/lock-trials.ts
 * (run it with a heavier count on its own).
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { runLockTrials } from '../../bench/lock-trials.js';

it('20 kill -9 trials of the daemon and of a command: the next start always succeeds', { timeout: 300_000 }, async () => {
  const s = await runLockTrials(20);
  process.stderr.write(`# lock trials: ${JSON.stringify({ ...s, failures: s.failures.length })}\n`);
  assert.deepEqual(s.failures, []);
  assert.equal(s.trials, 20);
  assert.equal(s.startFailures, 0, 'every start after a kill succeeded');
  assert.equal(s.neither, 0, 'the file is the old or the new approved state');
  assert.equal(s.verifyFailures, 0, 'store and files agree after the restart');
  assert.equal(s.daemonKills + s.commandKills, 20);
  assert.ok(s.killedRunning > 0, 'some kills landed while the process was running');
});
