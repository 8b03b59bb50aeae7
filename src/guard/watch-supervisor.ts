/**
 * Keeps one watcher running and decides between inotify and polling (docs/CONTRACT.md §Detection).
 *
 * - An exhausted inotify (ENOSPC: watches; EMFILE/ENFILE: instances or descriptors) at any
 *   time — also while the first watcher is still arming, before anyone holds its handle —
 *   switches to polling and raises `watch-degraded` once per episode.
 * - Errors of a watcher that was already replaced are ignored (a generation number), and a
 *   flood of errors costs one log line, one alert and at most one rescan per second.
 * - While polling, inotify is tried again on the rescan timer (backing off when it still
 *   fails); when it arms cleanly, polling stops.
 * - A tree past the watcher's bounds (depth, path length, the number of directory watches)
 *   raises `watch-degraded` naming the bound, once per watcher.
 */
import type { ProtectedSet } from '../config/protected-set.js';
import type { AlertReason } from '../store/alert-types.js';
import { startWatcher, type WatchHandle } from './watcher.js';

const EXHAUSTED = new Set(['ENOSPC', 'EMFILE', 'ENFILE']);
const HEALTHY_MS = 10 * 60_000;

export interface SupervisorOptions {
  root: string;
  pset: () => ProtectedSet;
  onEvent: (rel: string, isDirEvent: boolean) => void;
  rescan: () => void;
  flag: (reason: AlertReason, path: string, detail: string) => void;
  log: (line: string) => void;
  /** First wait before inotify is tried again (then doubling, up to 10 min). */
  retryMs: () => number;
  now?: () => number;
}

export class WatchSupervisor {
  private handle: WatchHandle | null = null;
  private generation = 0;
  private busy: Promise<void> = Promise.resolve();
  private degradedAt = 0;
  private alerted = false;
  private inotifySince = 0;
  private retryDelay = 0;
  private nextTry = 0;
  private lastErrorRescan = 0;
  private errorsThisGen = 0;
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly o: SupervisorOptions) {
    this.now = o.now ?? Date.now;
  }

  get polling(): boolean { return this.handle?.polling ?? this.degradedAt !== 0; }
  alive(): boolean { return this.handle?.alive() ?? false; }

  /** Arm inotify; fall back to polling if it cannot be armed. Resolves once a watcher runs. */
  start(): Promise<void> { return this.serial(() => this.arm(false)); }

  /** After a reload (the protected set changed): a fresh watcher of the same kind. */
  restart(): Promise<void> { return this.serial(() => this.arm(this.degradedAt !== 0)); }

  /** From the rescan timer: while polling, try inotify again when it is time. */
  tick(): void {
    if (this.closed || this.degradedAt === 0 || this.now() < this.nextTry) return;
    void this.serial(() => this.arm(false));
  }

  rearmChanged(): string[] { return this.handle?.rearmChanged() ?? []; }

  close(): Promise<void> {
    this.closed = true;
    this.generation++;
    return this.serial(async () => { await this.handle?.close(); this.handle = null; });
  }

  private serial(fn: () => Promise<void>): Promise<void> {
    const next = this.busy.then(fn, fn).catch((e: unknown) => this.o.log(`<2>warden: watcher: ${String((e as Error)?.message ?? e)}; the backstop rescan continues`));
    this.busy = next;
    return next;
  }

  private async arm(polling: boolean): Promise<void> {
    if (this.closed) return;
    const gen = ++this.generation;
    this.errorsThisGen = 0;
    let failedWhileArming: (Error & { code?: string }) | null = null;
    let armed = false;
    const h = await startWatcher(this.o.root, this.o.pset(), {
      onEvent: (rel, d) => { if (gen === this.generation) this.o.onEvent(rel, d); },
      onError: (err) => {
        if (gen !== this.generation) return; // a watcher we already replaced
        if (!armed && EXHAUSTED.has(err.code ?? '') && !polling) { failedWhileArming ??= err; return; }
        this.onError(gen, err);
      },
      // A tree past the watcher's bounds (watcher.ts): said once per watcher, so once per arming.
      onLimit: (path, detail) => { if (gen === this.generation) this.o.flag('watch-degraded', path, detail); },
    }, polling);
    armed = true;
    if (this.closed || gen !== this.generation) { await h.close(); return; }
    if (failedWhileArming) {
      await h.close();
      await this.degrade(failedWhileArming);
      return;
    }
    const old = this.handle;
    this.handle = h;
    if (old && old !== h) await old.close();
    if (!polling) {
      if (this.degradedAt !== 0) this.o.log('<5>warden: inotify works again; stopped polling');
      this.degradedAt = 0;
      this.inotifySince = this.now();
    }
  }

  private onError(gen: number, err: Error & { code?: string }): void {
    this.errorsThisGen++;
    // One line per watcher, not per error: a full descriptor table produces thousands.
    if (this.errorsThisGen === 1) this.o.log(`<3>warden: watcher error: ${err.code ?? err.message}; rescanning`);
    if (EXHAUSTED.has(err.code ?? '') && this.handle && !this.handle.polling && gen === this.generation) {
      this.generation++; // further errors of this watcher are ignored
      void this.serial(() => this.degrade(err));
      return;
    }
    const t = this.now();
    if (t - this.lastErrorRescan >= 1000) { this.lastErrorRescan = t; this.o.rescan(); }
  }

  private async degrade(err: Error & { code?: string }): Promise<void> {
    if (this.closed) return;
    const t = this.now();
    const healthyLongEnough = this.inotifySince !== 0 && t - this.inotifySince >= HEALTHY_MS;
    if (healthyLongEnough) { this.alerted = false; this.retryDelay = 0; }
    if (!this.alerted) {
      this.alerted = true;
      this.o.flag('watch-degraded', '.', `inotify limit reached (${err.code ?? 'error'}); switched to polling, which is slower; inotify is tried again later`);
    }
    this.degradedAt = t;
    this.inotifySince = 0;
    this.retryDelay = Math.min(600_000, this.retryDelay ? this.retryDelay * 2 : Math.max(1000, this.o.retryMs()));
    this.nextTry = t + this.retryDelay;
    await this.arm(true);
    this.o.rescan();
  }
}
