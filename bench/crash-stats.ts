/** The counts of the credential crash trials (bench/crash-trials.ts): their shape, the pass criteria, and summing workers. */
import type { Landing } from './crash-root.js';

/** The seam-free kill moment is uniform over 0..WINDOW × the command's median natural duration (or the manifest's lifetime). */
export const WINDOW = 1.5;

export type Kind = 'kill-cli' | 'kill-daemon' | 'step' | 'delay';
export type SeamFreeKind = 'kill-cli' | 'kill-daemon';

export type Landed = Record<Landing, number>;
/**
 * Where a seam-free kill moment is drawn from (uniformly):
 * wide: 0..WINDOW × the command's median natural duration, from its spawn (most kills land
 *   before or after the transaction, which is a few ms of it);
 * journal: 0..WINDOW × the intent manifest's median lifetime, from the moment an inotify
 *   watch on the journal directory showed the manifest (an outside observer, not a seam).
 */
export type Window = 'wide' | 'journal';
export interface CrashTrialStats {
  trials: number;
  interrupted: number;
  mixed: number;
  rolledBack: number;
  rolledForward: number;
  ms: number;
  /** Interrupted trials after which no half-applied alert was found (must be 0). */
  missingAlerts: number;
  /** Trials after which the files were not what the baseline approves (must be 0). */
  baselineMismatch: number;
  /** Kills that left a mixed set and no intent manifest (must be 0). */
  mixedAtKill: number;
  /** Daemon starts that did not reach `ready` on their own (must be 0). */
  failedStarts: number;
  /** Commands or daemons that did not exit by their deadline, and seams never reached (must be 0). */
  hangs: number;
  /** Daemons that exited on their own between trials (must be 0). */
  unexpectedExits: number;
  /** Trials by kind and by label (a step's name, 'delay', 'kill-cli', 'kill-daemon'). */
  byKind: Record<Kind, number>;
  byStep: Record<string, number>;
  /** Where each kill landed, by kind. */
  landed: Record<Kind, Landed>;
  /** Seam-free trials in all: where their kills landed; `afterExit`: the command had already exited. */
  seamFree: { trials: number; before: number; inside: number; after: number; afterExit: number; byWindow: Record<Window, Landed> };
  /**
   * Per worker: natural durations (ms, spawn to exit) alone and through the daemon, when the
   * intent manifest appeared and went (ms after spawn), and the kill windows drawn from them.
   */
  calibration: { cliMs: number[]; daemonMs: number[]; cliTx: [number, number][]; daemonTx: [number, number][]; windows: Record<SeamFreeKind, Record<Window, number>> }[];
  jobs: number;
  /** The first failures, in words (no credential values). */
  failures: string[];
  /** Set when a worker had to stop early (its root could not be started twice in a row). */
  aborted?: string;
}

export const zeroLanded = (): Landed => ({ before: 0, inside: 0, after: 0 });
export function emptyStats(jobs: number): CrashTrialStats {
  return {
    trials: 0, interrupted: 0, mixed: 0, rolledBack: 0, rolledForward: 0, ms: 0, missingAlerts: 0, baselineMismatch: 0,
    mixedAtKill: 0, failedStarts: 0, hangs: 0, unexpectedExits: 0,
    byKind: { 'kill-cli': 0, 'kill-daemon': 0, step: 0, delay: 0 }, byStep: {},
    landed: { 'kill-cli': zeroLanded(), 'kill-daemon': zeroLanded(), step: zeroLanded(), delay: zeroLanded() },
    seamFree: { trials: 0, before: 0, inside: 0, after: 0, afterExit: 0, byWindow: { wide: zeroLanded(), journal: zeroLanded() } }, calibration: [], jobs, failures: [],
  };
}

/** Every pass criterion of a run. */
export const passed = (s: CrashTrialStats) => !s.aborted && s.mixed === 0 && s.missingAlerts === 0 && s.baselineMismatch === 0 && s.mixedAtKill === 0 && s.failedStarts === 0 && s.hangs === 0 && s.unexpectedExits === 0;

export function merge(into: CrashTrialStats, w: CrashTrialStats): void {
  for (const k of ['trials', 'interrupted', 'mixed', 'rolledBack', 'rolledForward', 'missingAlerts', 'baselineMismatch', 'mixedAtKill', 'failedStarts', 'hangs', 'unexpectedExits'] as const) into[k] += w[k];
  for (const k of Object.keys(w.byKind) as Kind[]) {
    into.byKind[k] += w.byKind[k];
    for (const l of ['before', 'inside', 'after'] as const) into.landed[k][l] += w.landed[k][l];
  }
  for (const [k, v] of Object.entries(w.byStep)) into.byStep[k] = (into.byStep[k] ?? 0) + v;
  for (const k of ['trials', 'before', 'inside', 'after', 'afterExit'] as const) into.seamFree[k] += w.seamFree[k];
  for (const win of ['wide', 'journal'] as const) for (const l of ['before', 'inside', 'after'] as const) into.seamFree.byWindow[win][l] += w.seamFree.byWindow[win][l];
  into.calibration.push(...w.calibration);
  into.failures.push(...w.failures.slice(0, 20 - into.failures.length));
  if (w.aborted) into.aborted = into.aborted ? `${into.aborted}; ${w.aborted}` : w.aborted;
}
