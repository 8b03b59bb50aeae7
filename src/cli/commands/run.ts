import type { CommandSpec } from '../types.js';
import { runDaemon } from '../../daemon/run.js';
import { WardenError } from '../../common/errors.js';

export const runCommand: CommandSpec = {
  name: 'run',
  summary: 'Guard the root in the foreground (guard and notifier; --guard or --notifier for one of them).',
  usage: 'run [--guard | --notifier] [--init-if-needed] [--root DIR]',
  options: {
    guard: { type: 'boolean', default: false },
    notifier: { type: 'boolean', default: false },
    'init-if-needed': { type: 'boolean', default: false },
  },
  async run(ctx) {
    const guardOnly = Boolean(ctx.values.guard);
    const notifierOnly = Boolean(ctx.values.notifier);
    if (guardOnly && notifierOnly) throw new WardenError('--guard and --notifier exclude each other; without either, run runs both');
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
