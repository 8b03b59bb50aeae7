/**
 * Test seams for the crash trials (bench/crash-trials.ts), inert unless their variables
 * are set in the environment of the process that applies a change:
 *
 *   WARDEN_TEST_CRASH_AT=<step>   SIGKILL this process when the transaction reaches <step>
 *                                 (steps: see CrashStep below)
 *   WARDEN_TEST_STEP_DELAY_MS=<n> sleep n ms after every step, so that a kill -9 sent from
 *                                 outside after a random delay lands inside the transaction
 *
 * A process that can set a daemon's environment can stop it anyway (docs/CONTRACT.md §Threat model), so these
 * give an attacker nothing new.
 */
export type CrashStep =
  | 'begin'            // before anything is written
  | 'journal-blobs'    // old and new blobs written, intent manifest not yet
  | 'journal'          // intent manifest durable
  | 'file-1' | 'file-2' | 'file-3' // after the n-th file was replaced
  | 'baseline'         // baseline committed, journal still present
  | 'done';            // journal removed

export const CRASH_STEPS: readonly CrashStep[] = ['begin', 'journal-blobs', 'journal', 'file-1', 'file-2', 'baseline', 'done'];

const sleeper = new Int32Array(new SharedArrayBuffer(4));

export function step(s: CrashStep): void {
  const at = process.env.WARDEN_TEST_CRASH_AT;
  if (at && at === s) process.kill(process.pid, 'SIGKILL');
  const delay = Number(process.env.WARDEN_TEST_STEP_DELAY_MS ?? 0);
  if (delay > 0) Atomics.wait(sleeper, 0, 0, delay);
}
