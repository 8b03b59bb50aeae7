import type { CommandSpec } from '../types.js';
import { runDaemon } from '../../daemon/run.js';
import { WardenError } from '../../common/errors.js';
import { pingDaemon } from '../daemon-client.js';

export const runCommand: CommandSpec = {
  name: 'run',
  summary: 'Guard the root in the foreground (guard and notifier; --guard or --notifier for one of them).',
  usage: 'run [--guard | --notifier | --witness [--writer-pid PID]] [--init-if-needed] [--root DIR]\nrun [--guard] (--root DIR | --profile NAME [--project DIR])… [--home DIR]',
  options: {
    // Repeated: several roots in one guard (cli/run-roots.ts; docs/PROFILES.md, "Several roots in one guard").
    root: { type: 'string', multiple: true },
    profile: { type: 'string', multiple: true },
    project: { type: 'string', multiple: true },
    home: { type: 'string', multiple: true },
    guard: { type: 'boolean', default: false },
    witness: { type: 'boolean', default: false },
    'writer-pid': { type: 'string', multiple: true },
    notifier: { type: 'boolean', default: false },
    'init-if-needed': { type: 'boolean', default: false },
  },
  async run(ctx) {
    const guardOnly = Boolean(ctx.values.guard);
    const notifierOnly = Boolean(ctx.values.notifier);
    if (guardOnly && notifierOnly) throw new WardenError('--guard and --notifier exclude each other; without either, run runs both');
    if (ctx.roots) return runSeveral(ctx.roots, guardOnly, notifierOnly, Boolean(ctx.values.witness), Boolean(ctx.values['init-if-needed']));
    if (ctx.values.witness) return runWitness(ctx.root, (ctx.values['writer-pid'] as string[] | undefined) ?? [], guardOnly || notifierOnly);
    if (!notifierOnly) {
      // One guard per root. Ask the running one first: the lock alone would make us wait
      // for it (the lock is also taken briefly by commands applying a change).
      const ping = await pingDaemon(ctx.root, 1500);
      if (ping) throw new WardenError(`a warden daemon (pid ${String(ping.pid)}) already guards ${ctx.root}; only one may. See it with 'warden status', stop it first to start another.`);
    }
    // Handlers first: a SIGTERM that arrives as `ready` is printed must still stop us cleanly.
    let stopRequested = false;
    let stopNow: (() => void) | null = null;
    const onSignal = () => {
      if (stopRequested) return;
      stopRequested = true;
      // SIGTERM must stop within 2 s even if a close hangs.
      setTimeout(() => process.exit(0), 1800).unref();
      stopNow?.();
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    const d = await runDaemon({
      root: ctx.root,
      guard: !notifierOnly,
      notifier: !guardOnly,
      initIfNeeded: Boolean(ctx.values['init-if-needed']),
    });
    stopNow = () => { void d.stop(); };
    if (stopRequested) stopNow();
    await d.done;
    return 0;
  },
};

/** Stops on SIGTERM/SIGINT within 2 s even if a close hangs; `stop` is set once there is something to stop. */
function onStopSignals(): { set(stop: () => void): void } {
  let requested = false;
  let stopNow: (() => void) | null = null;
  const onSignal = () => {
    if (requested) return;
    requested = true;
    setTimeout(() => process.exit(0), 1800).unref();
    stopNow?.();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return { set(stop) { stopNow = stop; if (requested) stop(); } };
}

/**
 * Several roots in this one process (daemon/multi-root.ts): guard (and notifier) of each,
 * `ready` once all are guarded. The witness's and the notifier's own units hold one root each.
 */
async function runSeveral(roots: string[], guardOnly: boolean, notifierOnly: boolean, witness: boolean, initIfNeeded: boolean): Promise<number> {
  if (notifierOnly || witness) throw new WardenError(`--${notifierOnly ? 'notifier' : 'witness'} runs for one root: its unit holds one root's store or record (give one --root or --profile)`);
  const seen = new Map<string, number>();
  for (const [i, r] of roots.entries()) {
    const first = seen.get(r);
    if (first !== undefined) throw new WardenError(`roots ${first + 1} and ${i + 1} are the same directory, ${r}: one guard per root`);
    seen.set(r, i);
  }
  for (const r of roots) {
    const ping = await pingDaemon(r, 1500);
    if (ping) throw new WardenError(`a warden daemon (pid ${String(ping.pid)}) already guards ${r}; only one may. See it with 'warden status --root ${r}', stop it first to start this set of roots.`);
  }
  const signals = onStopSignals();
  const { runRoots } = await import('../../daemon/multi-root.js');
  const host = await runRoots({ roots, notifier: !guardOnly, initIfNeeded });
  signals.set(() => { void host.stop(); });
  return host.done;
}

/** `warden run --witness`: the witness alone (its own unit), until SIGTERM. */
async function runWitness(root: string, pids: string[], other: boolean): Promise<number> {
  if (other) throw new WardenError('--witness runs the witness alone: it excludes --guard and --notifier');
  const writerPids = pids.map((p) => {
    if (!/^[1-9][0-9]{0,9}$/.test(p)) throw new WardenError(`--writer-pid ${JSON.stringify(p)}: give a process id`);
    return Number(p);
  });
  const { runWitnessOnly } = await import('../../daemon/witness-run.js');
  const { rateLimitedWriter, writeLineSync } = await import('../../common/diagnostics.js');
  const d = await runWitnessOnly({ root, writerPids, log: rateLimitedWriter(2), say: (l) => { writeLineSync(1, l); } });
  const onSignal = () => { setTimeout(() => process.exit(0), 1800).unref(); void d.stop(); };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  await d.done;
  return 0;
}
