/** `npm run bench`, section: 1. revert latency (see bench/run.ts). */
import { readFileSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { BENCH_DIST, log, makeRoot, newTempDir, sleep, startReady, summary, wardenSync, wardenToml, type Proc } from './lib.js';
import { N_REVERT, type Json, node, warden } from './config.js';

// ---------------------------------------------------------------- 1. revert latency

/**
 * Waits for the approved bytes to be readable at `file` again. Driven by a watch on the
 * directory (each event: read and compare) with a 1 ms poll as a fallback, so the observer
 * is the same for warden and the floor.
 */
export class RevertObserver {
  private w: FSWatcher;
  private pending: { resolve: (t: number) => void } | null = null;
  private timer: NodeJS.Timeout | null = null;
  constructor(private readonly file: string, private readonly approved: Buffer) {
    const name = basename(file);
    this.w = watch(dirname(file), (_e, n) => { if (n === name) this.look(); });
  }
  private look(): void {
    if (!this.pending) return;
    let cur: Buffer | null = null;
    try { cur = readFileSync(this.file); } catch { cur = null; }
    if (cur && cur.equals(this.approved)) {
      const t = performance.now();
      const p = this.pending;
      this.pending = null;
      if (this.timer) { clearInterval(this.timer); this.timer = null; }
      p.resolve(t);
    }
  }
  /** Write `bad` in place and resolve with ms until the approved bytes are back. */
  async attack(bad: Buffer, timeoutMs = 5000): Promise<number> {
    const done = new Promise<number>((resolve) => { this.pending = { resolve }; });
    const t0 = performance.now();
    writeFileSync(this.file, bad); // open(O_TRUNC) + write + close: an in-place edit
    this.look();
    this.timer = setInterval(() => this.look(), 1);
    const to = new Promise<number>((resolve) => setTimeout(() => resolve(-1), timeoutMs).unref());
    const t = await Promise.race([done, to]);
    if (t < 0) { this.pending = null; if (this.timer) clearInterval(this.timer); this.timer = null; return NaN; }
    return t - t0;
  }
  close(): void { this.w.close(); if (this.timer) clearInterval(this.timer); }
}

export async function revertLatency(): Promise<Json> {
  const approved = Buffer.from('# approved: 60 bytes of settings the owner signed off on.\n');
  const r = makeRoot('revert', () => wardenToml({ protect: ['data/*.txt'] }), { 'data/target.txt': approved });
  const init = wardenSync(r, ['init']);
  if (init.code !== 0) throw new Error(`warden init failed: ${init.stderr}`);
  const floorDir = newTempDir('floor');
  const floorFile = join(floorDir, 'target.txt');
  writeFileSync(floorFile, approved);

  const procs: Proc[] = [];
  try {
    const g = await startReady(node, warden(['run', '--guard', '--root', r.root]), r.env);
    procs.push(g);
    const f = await startReady(node, [join(BENCH_DIST, 'floor.js'), floorFile], r.env);
    procs.push(f);
    const targets = { warden: new RevertObserver(r.p('data/target.txt'), approved), floor: new RevertObserver(floorFile, approved) };
    const lat: Record<'warden' | 'floor', number[]> = { warden: [], floor: [] };
    let timeouts = 0;
    const WARMUP = 20;
    try {
      for (let i = -WARMUP; i < N_REVERT; i++) {
        // Alternate which one goes first, so drift in the machine hits both alike.
        const order: ('warden' | 'floor')[] = i % 2 ? ['warden', 'floor'] : ['floor', 'warden'];
        for (const who of order) {
          const bad = Buffer.from(`tampered ${who} ${i} ${randomBytes(8).toString('hex')}\n`);
          const ms = await targets[who].attack(bad);
          if (Number.isNaN(ms)) { timeouts++; log(`revert: ${who} write ${i} not reverted within 5 s`); }
          else if (i >= 0) lat[who].push(ms);
          // Space the writes: let trailing checks and the rename's own events settle.
          await sleep(40);
        }
        if (i > 0 && i % 100 === 0) log(`revert latency: ${i}/${N_REVERT}`);
      }
    } finally {
      targets.warden.close();
      targets.floor.close();
    }
    const reverts = (g.stderr().match(/^<4>warden: reverted data\/target\.txt/gm) ?? []).length;
    const w = summary(lat.warden);
    const fl = summary(lat.floor);
    return {
      writes: N_REVERT, warmup: WARMUP, timeouts, wardenJournalReverts: reverts,
      warden: w, floor: fl,
      ratio: { p50: w.p50 / fl.p50, p90: w.p90 / fl.p90, p99: w.p99 / fl.p99, max: w.max / fl.max },
      targets: { p50Ratio: 1.5, p99Ratio: 2 },
      met: { p50: w.p50 / fl.p50 <= 1.5, p99: w.p99 / fl.p99 <= 2 },
    };
  } finally {
    for (const p of procs) await p.stop();
  }
}
