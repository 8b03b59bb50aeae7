/**
 * Preloaded into the daemons of bench/soak.ts (`node --expose-gc --import soak-probe.js …`):
 * every SOAK_PROBE_S seconds (default 5) it runs a full GC and writes one JSON line to
 * SOAK_PROBE_FILE with the heap in use after it and the `abort` listeners (added minus
 * removed, counted beside each signal in a WeakMap so counting keeps no signal alive): the
 * most any one signal held, the total on signals not yet collected, and how many were added. A bench seam only: the probe
 * is loaded by the bench's own command line, never by the shipped daemon.
 */
import { appendFileSync } from 'node:fs';

const file = process.env.SOAK_PROBE_FILE;
const everyMs = Number(process.env.SOAK_PROBE_S ?? 5) * 1000;

// Per signal a holder of its live listener count; when a signal is collected its listeners
// leave the live total (FinalizationRegistry), so `live` counts listeners on live signals only.
const held = new WeakMap<EventTarget, { c: number }>();
const gone = new FinalizationRegistry<{ c: number }>((h) => { live -= h.c; });
let maxOne = 0;
let live = 0;
let added = 0;
let warnings = 0;
const add = EventTarget.prototype.addEventListener;
const remove = EventTarget.prototype.removeEventListener;
EventTarget.prototype.addEventListener = function (this: EventTarget, type: string, ...rest: unknown[]) {
  if (type === 'abort' && this instanceof AbortSignal) {
    let h = held.get(this);
    if (!h) { h = { c: 0 }; held.set(this, h); gone.register(this, h); }
    h.c++; live++; added++;
    maxOne = Math.max(maxOne, h.c);
  }
  return (add as (...a: unknown[]) => void).call(this, type, ...rest);
} as typeof add;
EventTarget.prototype.removeEventListener = function (this: EventTarget, type: string, ...rest: unknown[]) {
  const h = type === 'abort' && this instanceof AbortSignal ? held.get(this) : undefined;
  if (h && h.c > 0) { h.c--; live--; }
  return (remove as (...a: unknown[]) => void).call(this, type, ...rest);
} as typeof remove;
process.on('warning', (w) => { if (/MaxListeners|memory leak/i.test(`${w.name} ${w.message}`)) warnings++; });

const gc = (globalThis as { gc?: () => void }).gc;
if (file) {
  setInterval(() => {
    gc?.();
    const m = process.memoryUsage();
    try {
      appendFileSync(file, JSON.stringify({ t: Date.now(), pid: process.pid, heapMB: +(m.heapUsed / 1048576).toFixed(2), rssMB: +(m.rss / 1048576).toFixed(2), maxAbortListeners: maxOne, liveAbortListeners: live, abortListenersAdded: added, listenerWarnings: warnings }) + '\n');
    } catch { /* the bench removed its directory: nothing to report to */ }
  }, everyMs).unref();
}
