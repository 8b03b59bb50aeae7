/**
 * The witness's watchdog thread: if the answering thread stops beating (hung in a read of
 * /proc, say), close the fanotify descriptor. The kernel then lets every held open through
 * and no new permission event is generated: a hung witness never hangs the runtime's reads.
 * A thread of its own, so it works while the main thread is itself blocked in an open.
 */
import { closeSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

const { shared, fanFd, staleMs } = workerData as { shared: SharedArrayBuffer; fanFd: number; staleMs: number };
const hb = new Int32Array(shared);
let last = Atomics.load(hb, 0);
for (;;) {
  Atomics.wait(hb, 5, 0, staleMs);
  if (Atomics.load(hb, 1) !== 0 || Atomics.load(hb, 5) !== 0) break; // stopping
  const now = Atomics.load(hb, 0);
  if (now === last) {
    Atomics.store(hb, 1, 1);
    try { closeSync(fanFd); } catch { /* already closed */ }
    parentPort?.postMessage({ hung: true });
    break;
  }
  last = now;
}
