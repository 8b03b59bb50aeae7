/**
 * Runs the notifier alone in a child process (for kill -9 and desktop tests: node-notifier
 * caches "notify-send not found" per process). Options come as JSON in WARDEN_TEST_NOTIFIER.
 * Prints "ready" on stdout once started; log lines go to stderr; SIGTERM stops cleanly.
 */
import { wardenConfigSchema } from '../../src/config/warden-config.js';
import { startNotifier } from '../../src/notifier/index.js';

const o = JSON.parse(process.env.WARDEN_TEST_NOTIFIER ?? '{}') as { root: string; stateDir: string; config: unknown; timing?: Record<string, number> };
const n = await startNotifier({
  root: o.root, stateDir: o.stateDir, config: wardenConfigSchema.parse(o.config), timing: o.timing,
  log: (l) => process.stderr.write(l + '\n'),
});
process.stdout.write('ready\n');
process.on('SIGTERM', () => { void n.stop().then(() => process.exit(0)); });
