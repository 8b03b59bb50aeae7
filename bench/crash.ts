/** `npm run bench`, section: 6. crash trials (see bench/run.ts). */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { BENCH_DIST, killGroup, trackGroup, log } from './lib.js';
import { CRASH_TRIALS, type Json, node } from './config.js';
import { footprint } from './footprint.js';

// ---------------------------------------------------------------- 6. crash trials

/**
 * bench/crash-trials.ts runs in its own process group (bench/crash-child.ts, in chunks),
 * overlapping the idle-footprint window, and is stopped at the time budget: the trials of
 * the chunks that finished are counted.
 */
export class CrashRun {
  private chunks: Json[] = [];
  private unavailable: string | null = null;
  private proc: ReturnType<typeof spawn> | null = null;
  private exited: Promise<void> = Promise.resolve();
  private t0 = 0;
  private stoppedAtBudget = false;

  start(): void {
    if (!existsSync(join(BENCH_DIST, 'crash-trials.js'))) { this.unavailable = 'crash trials: not available yet'; log(this.unavailable); return; }
    this.t0 = performance.now();
    log(`crash trials: ${CRASH_TRIALS} in the background (own process group)`);
    const p = trackGroup(spawn(node, [join(BENCH_DIST, 'crash-child.js'), String(CRASH_TRIALS), '50'], { stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
    this.proc = p;
    let buf = '';
    p.stdout!.on('data', (d: Buffer) => {
      buf += String(d);
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i); buf = buf.slice(i + 1);
        try {
          const j = JSON.parse(line) as Json;
          if (j.unavailable) this.unavailable = String(j.note ?? 'crash trials: not available yet'); else this.chunks.push(j);
        } catch { /* not ours */ }
      }
    });
    let err = '';
    p.stderr!.on('data', (d: Buffer) => { err = (err + String(d)).slice(-4000); });
    this.exited = new Promise((res) => p.once('exit', (code) => { if (code) log(`crash trials exited ${code}: ${err.slice(-1000)}`); res(); }));
  }

  async finish(deadline: number): Promise<Json> {
    if (this.unavailable) return { available: false, note: this.unavailable };
    if (!this.proc) return { available: false, note: 'not started' };
    const left = Math.max(0, deadline - Date.now());
    const timer = new Promise<'budget'>((res) => setTimeout(() => res('budget'), left));
    const r = await Promise.race([this.exited.then(() => 'done' as const), timer]);
    if (r === 'budget' && this.proc.pid) { this.stoppedAtBudget = true; log('crash trials: time budget reached; stopping them'); killGroup(this.proc.pid); await this.exited; }
    const sum = (k: string) => this.chunks.reduce((a, c) => a + Number(c[k] ?? 0), 0);
    const trials = sum('trials');
    const out: Json = {
      available: true, requested: CRASH_TRIALS, trials, interrupted: sum('interrupted'), mixed: sum('mixed'),
      rolledBack: sum('rolledBack'), rolledForward: sum('rolledForward'), ms: performance.now() - this.t0,
      trialMs: sum('ms'), stoppedAtBudget: this.stoppedAtBudget, chunks: this.chunks,
    };
    out.met = { trials: trials >= 1000, mixed: out.mixed === 0 };
    log(`crash trials: ${trials} done, ${String(out.mixed)} mixed`);
    return out;
  }
}
