import type { CommandSpec } from '../types.js';
import { runDaemon } from '../../daemon/run.js';
import { WardenError } from '../../common/errors.js';
import { pingDaemon } from '../daemon-client.js';

export const runCommand: CommandSpec = {
  name: 'run',
  summary: 'Guard the root in the foreground (guard and notifier; --guard or --notifier for one of them).',
  usage: 'run [--guard | --notifier | --witness [--writer-pid PID]] [--init-if-needed] [--root DIR]',
  options: {
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
