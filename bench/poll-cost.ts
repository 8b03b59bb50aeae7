/**
 * The stamp poll's cost alone: the guard's idle CPU on the 10,000-file root with
 * the poll on and, in the window after, off (test-seams.ts `stampPollOff`, set in-process by
 * test/helpers/seamed-main.ts from WARDEN_STAMP_POLL=off: the shipped daemon reads no such switch).
 * `node dist/bench/poll-cost.js` after a build; BENCH_IDLE_SECONDS sets each window (60).
 */
import { bigRoot } from './big-root.js';
import { join } from 'node:path';
import { IDLE_S, node } from './config.js';
import { idleWindow, type IdleStats } from './idle.js';
import { REPO, cleanupTemps, startReady, wardenSync } from './lib.js';

/** The CLI with the test seams set from the environment (test/helpers/seamed-main.ts). */
const SEAMED_CLI = join(REPO, 'dist', 'test', 'helpers', 'seamed-main.js');

async function main(): Promise<void> {
  const big = bigRoot('http://127.0.0.1:9'); // no notifier runs: the URL is never used
  try {
    const init = wardenSync(big, ['init']);
    if (init.code !== 0) throw new Error(`warden init failed: ${init.stderr}`);
    const out: Record<string, IdleStats> = {};
    for (const mode of ['on', 'off']) {
      const guard = await startReady(node, [SEAMED_CLI, 'run', '--guard', '--root', big.root], { ...big.env, WARDEN_STAMP_POLL: mode }, 60_000);
      try { out[mode] = ((await idleWindow(`guard, stamp poll ${mode}`, { guard }, IDLE_S)).guard as IdleStats); } finally { await guard.stop(); }
    }
    process.stdout.write(`${JSON.stringify({ seconds: IDLE_S, on: out.on, off: out.off })}\n`);
  } finally { cleanupTemps(); }
}
main().then(() => process.exit(0), (err) => { process.stderr.write(`${(err as Error).stack ?? String(err)}\n`); process.exit(1); });
