/**
 * Child of bench/notifier-sends.ts (run with --expose-gc): one notifier, in this process,
 * delivering BENCH_NOTIFIER_SENDS Discord messages one after another to the emulator. Prints
 * one JSON line: heap and RSS after a warm-up and after all the sends (each after a full
 * GC), and the most abort listeners any one signal held at once.
 */
import { startNotifier } from '../src/notifier/index.js';
import { DiscordEmulator } from '../test/helpers/discord-emulator.js';
import { waitFor } from '../test/helpers/wait-for.js';
import { TOKEN, alert, appendAlerts, config, fixture } from '../test/notifier/helpers.js';

const N = Number(process.env.BENCH_NOTIFIER_SENDS ?? 3000);
const WARM = 200;

// Live abort listeners per signal (added minus removed), the most any one signal held: the
// leak this row watches for. A WeakMap, so counting keeps no signal alive.
const live = new WeakMap<EventTarget, number>();
let maxLive = 0;
const add = EventTarget.prototype.addEventListener;
const remove = EventTarget.prototype.removeEventListener;
EventTarget.prototype.addEventListener = function (this: EventTarget, type: string, ...rest: unknown[]) {
  if (type === 'abort' && this instanceof AbortSignal) { const c = (live.get(this) ?? 0) + 1; live.set(this, c); maxLive = Math.max(maxLive, c); }
  return (add as (...a: unknown[]) => void).call(this, type, ...rest);
} as typeof add;
EventTarget.prototype.removeEventListener = function (this: EventTarget, type: string, ...rest: unknown[]) {
  if (type === 'abort' && this instanceof AbortSignal && live.has(this)) live.set(this, Math.max(0, live.get(this)! - 1));
  return (remove as (...a: unknown[]) => void).call(this, type, ...rest);
} as typeof remove;
let warnings = 0;
process.on('warning', (w) => { if (/MaxListeners|memory leak/i.test(`${w.name} ${w.message}`)) warnings++; });

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
const mem = () => { gc(); gc(); const m = process.memoryUsage(); return { heapMB: m.heapUsed / 1048576, rssMB: m.rss / 1048576 }; };

async function main(): Promise<void> {
  const fx = fixture();
  const emu = new DiscordEmulator(TOKEN);
  await emu.start();
  const n = await startNotifier({ root: fx.root, stateDir: fx.stateDir, config: config(fx, emu.api), log: () => {}, timing: { pollMs: 20 } });
  const send = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const want = emu.messages.length + 1;
      appendAlerts(fx.root, [alert()]);
      await waitFor(() => emu.messages.length >= want, 20_000, 'a message', 2);
    }
  };
  try {
    await send(WARM);
    const before = mem();
    const t0 = performance.now();
    await send(N);
    const seconds = (performance.now() - t0) / 1000;
    // The emulator's own request log grows with every send: drop it before measuring.
    emu.requests = [];
    const after = mem();
    process.stdout.write(JSON.stringify({
      sends: N, seconds, before, after, heapGrowthMB: after.heapMB - before.heapMB, rssGrowthMB: after.rssMB - before.rssMB,
      maxAbortListeners: maxLive, listenerWarnings: warnings,
    }) + '\n');
  } finally { await n.stop(); await emu.stop(); fx.cleanup(); }
}

main().then(() => process.exit(0), (err) => { process.stderr.write(`${(err as Error).stack}\n`); process.exit(1); });
