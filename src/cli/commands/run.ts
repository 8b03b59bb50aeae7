import type { CommandSpec } from '../types.js';
import { runDaemon } from '../../daemon/run.js';
import { WardenError } from '../../common/errors.js';
import { pingDaemon } from '../daemon-client.js';

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
