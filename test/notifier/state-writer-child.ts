/**
 * A StateWriter that records one delivery per write, forever, with a tiny compaction
 * threshold (so a kill lands in compactions too). Prints "saved N" once write N is durable.
 * Killed from outside by incremental-state.test.ts.
 */
import { StateWriter } from '../../src/notifier/state-writer.js';
import { emptyChannelState, type NotifierStateFile } from '../../src/notifier/delivery-state.js';

const { stateDir, root } = JSON.parse(process.env.WARDEN_TEST_STATE_WRITER ?? '{}') as { stateDir: string; root: string };
// eslint-disable-next-line prefer-const -- read by the writer's closure before it is loaded
let state: NotifierStateFile;
const w = new StateWriter(stateDir, root, () => state, (l) => process.stderr.write(l + '\n'), { compactBytes: 2048 });
state = w.load() ?? { version: 1, root, updated: '', notifier: { pid: process.pid, started: new Date().toISOString() }, channels: {}, expired: {}, last_liveness: null };
const ch = (state.channels.discord ??= emptyChannelState());
let n = Object.keys(ch.delivered).length;
for (;;) {
  ch.delivered[`d${String(n).padStart(6, '0')}`] = new Date().toISOString();
  n++;
  await w.save();
  process.stdout.write(`saved ${n}\n`);
}
