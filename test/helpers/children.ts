/**
 * Every child a test spawns and must not outlive it: daemons, CLI runs, helper loops.
 * `own(child)` registers it; `killOwned()` SIGKILLs whatever is still alive (the whole
 * process group of a detached child) and waits until each has exited. testWorld's cleanup
 * calls it, so an `after` hook kills the children even when the test failed half-way (a
 * daemon whose ready-wait timed out included); and as a last resort the test process kills
 * them on exit, so no child keeps a test file alive through its pipes.
 */
import type { ChildProcess } from 'node:child_process';

interface Owned { child: ChildProcess; label: string; exited: Promise<void> }

const owned = new Set<Owned>();

const alive = (c: ChildProcess): boolean => c.exitCode === null && c.signalCode === null;

export function own<T extends ChildProcess>(child: T, label: string): T {
  const o: Owned = { child, label, exited: alive(child) && child.pid !== undefined ? new Promise((r) => child.once('exit', () => r())) : Promise.resolve() };
  owned.add(o);
  void o.exited.then(() => owned.delete(o));
  return child;
}

/** Kill one child (its group when it leads one) with `signal`; true when it was still alive. */
function killNow(child: ChildProcess, signal: NodeJS.Signals): boolean {
  if (!alive(child) || child.pid === undefined) return false;
  try { process.kill(-child.pid, signal); } catch { /* not a group leader */ }
  try { child.kill(signal); } catch { /* already gone */ }
  return true;
}

/** The children still running: "label (pid N)" each. */
export function ownedAlive(): string[] {
  return [...owned].filter((o) => alive(o.child)).map((o) => `${o.label} (pid ${o.child.pid})`);
}

/** SIGKILL every owned child still alive and wait (bounded) until each has exited; returns what was killed. */
export async function killOwned(waitMs = 10_000): Promise<string[]> {
  const killed: string[] = [];
  const waits: Promise<void>[] = [];
  for (const o of [...owned]) {
    if (killNow(o.child, 'SIGKILL')) killed.push(`${o.label} (pid ${o.child.pid})`);
    waits.push(o.exited);
  }
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(waits), new Promise<void>((r) => { timer = setTimeout(r, waitMs); })]);
  clearTimeout(timer);
  return killed;
}

process.once('exit', () => { for (const o of owned) killNow(o.child, 'SIGKILL'); });

/**
 * Run every cleanup step whatever the earlier ones did (a failed rm must not skip a userdel),
 * then throw the first failure, naming all of them.
 */
export async function cleanupAll(steps: readonly (() => unknown)[]): Promise<void> {
  const errors: unknown[] = [];
  for (const step of steps) {
    try { await step(); } catch (e) { errors.push(e); }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `${errors.length} cleanup steps failed: ${errors.map((e) => (e as Error)?.message ?? String(e)).join('; ')}`);
}
