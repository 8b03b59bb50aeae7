/**
 * `warden run`: the guard and/or the notifier (SPEC §11). The guard never loads network
 * code: the notifier is imported dynamically, and only when this process runs it.
 */
import { WardenError, formatLocated } from '../common/errors.js';
import { WARDEN_TOML, configFromBytes, type WardenConfig } from '../config/warden-config.js';
import { loadWardenConfig } from '../store/approved-config.js';
import { ensureDirBeneath, openRoot, safeClose } from '../fsx/beneath.js';
import { CONTROL_DIR, LOCK_FILE } from '../store/layout.js';
import { BaselineState } from '../store/baseline-state.js';
import { Guard } from '../guard/guard.js';
import { startWatcher, type WatchHandle } from '../guard/watcher.js';
import { HintQueue } from '../guard/hints.js';
import { appendAlert, newAlertId } from '../store/alerts.js';
import { readIndex } from '../store/baseline.js';
import { loadKey, readSeal, sealPath } from '../store/keys.js';
import { reconcileProtectedSet, type ApplyContext } from '../changes/apply.js';
import { attachChangeService, handleChangeRequest } from './change-service.js';
import { initRoot } from '../changes/init.js';
import { listenControl, type Request, type Response } from './control.js';
import { acquireLock, type Lock } from '../store/lock.js';
import { createSdNotifier } from './sd-notify.js';
import { adviceFor } from '../guard/classify.js';

export interface RunOptions {
  root: string;
  guard: boolean;
  notifier: boolean;
  initIfNeeded: boolean;
  /** Where "ready" and other stdout lines go. */
  stdout?: (line: string) => void;
  log?: (line: string) => void;
}

export interface Daemon {
  stop(): Promise<void>;
  guard: Guard | null;
  /** Resolves when the daemon stops on its own (fatal error) or is stopped. */
  done: Promise<void>;
}

export async function runDaemon(opts: RunOptions): Promise<Daemon> {
  const log = opts.log ?? ((l: string) => process.stderr.write(l + '\n'));
  const say = opts.stdout ?? ((l: string) => process.stdout.write(l + '\n'));
  process.umask(0o077);
  // The guard takes its settings from the authenticated baseline once loaded (below).
  let config = opts.guard ? configFromBytes(null) : loadWardenConfig(opts.root);
  const sd = createSdNotifier();
  const cleanups: (() => Promise<void> | void)[] = [];
  let guard: Guard | null = null;
  let watcher: WatchHandle | null = null;
  let rootFd = -1;
  let notifier: { stop(): Promise<void>; reload(c: WardenConfig): void; status(): unknown } | null = null;
  let stopSelf: (() => Promise<void>) | null = null;
  let lockLost = false;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => { resolveDone = r; });

  if (opts.guard) {
    rootFd = openRoot(opts.root);
    cleanups.push(() => safeClose(rootFd));
    const key = loadKey(opts.root, opts.initIfNeeded);
    // Held for the daemon's whole life: commands see it even when the socket is gone.
    const controlFd = ensureDirBeneath(rootFd, CONTROL_DIR);
    let lock: Lock;
    const onLost = (by: { pid: number }) => { log(`<2>warden: another warden daemon (pid ${by.pid}) took over this root's lock; stopping, so that two guards do not fight over the store`); lockLost = true; void stopSelf?.(); };
    try { lock = await acquireLock(controlFd, { role: 'daemon', waitMs: 10_000, key, label: LOCK_FILE, log, onLost }); } finally { safeClose(controlFd); }
    cleanups.push(() => lock.release());
    try {
      const idx = readIndex(rootFd, key);
      // Only a root that never had a baseline is initialised: a sealed one whose index vanished is tampered.
      if (!idx.ok && idx.problem === 'missing' && opts.initIfNeeded && readSeal(sealPath(opts.root)) === null) {
        const r = await initRoot(opts.root, { force: false });
        log(`<5>warden: no baseline yet: recorded ${r.files} file(s) as approved (warden init)`);
      }
      let state: BaselineState;
      try {
        state = BaselineState.load(rootFd, key, { blobs: true, settle: true }, sealPath(opts.root));
      } catch (err) {
        if (err instanceof WardenError && err.message.startsWith('baseline-tampered')) {
          // Fail closed, but leave a record the owner will be told about.
          const id = newAlertId();
          try {
            appendAlert(rootFd, { id, time: new Date().toISOString(), path: 'snapshots/baseline/index', action: 'flagged', reason: 'baseline-tampered', before: null, after: null, quarantine: null, detail: err.message, advice: adviceFor('snapshots/baseline/index', 'baseline-tampered', id, null) });
          } catch { /* the error below still says it */ }
        }
        throw err;
      }
      // Run on the approved settings, never on whatever is on disk now (it may be an edit
      // made while warden was stopped, which startup verification is about to revert).
      config = configFromBytes(state.bytesOf(rootFd, WARDEN_TOML));
      const g = new Guard({ root: opts.root, rootFd, config, state, log, onDirRepaired: () => {
        for (const d of watcher?.rearmChanged() ?? []) log(`<6>warden: re-armed the watch on ${d}`);
        // chokidar re-adds a directory asynchronously; the per-file inode watches re-arm now.
        watcher?.syncFiles(guard?.state.paths() ?? []);
      } });
      guard = g;
      const hints = new HintQueue((rel, isDir) => { g.onPathEvent(rel, isDir); watcher?.refreshFile(rel); });
      cleanups.push(() => hints.close());
      const onWatchError = (err: Error & { code?: string }) => {
        log(`<3>warden: watcher error: ${err.code ?? err.message}; rescanning`);
        g.rescan();
        if ((err.code === 'ENOSPC' || err.code === 'EMFILE') && watcher && !watcher.polling) {
          g.flag('watch-degraded', '.', `inotify limit reached (${err.code}); switched to polling, which is slower`);
          void (async () => {
            await watcher?.close();
            watcher = await startWatcher(opts.root, g.pset, { onEvent: (rel, d) => hints.hint(rel, d), onError: onWatchError }, true);
            g.rescan();
          })().catch((e: unknown) => log(`<2>warden: cannot start the polling watcher: ${String((e as Error)?.message ?? e)}; the backstop rescan continues`));
        }
      };
      watcher = await startWatcher(opts.root, g.pset, { onEvent: (rel, d) => hints.hint(rel, d), onError: onWatchError }, false);
      cleanups.push(async () => { await watcher?.close(); });
      // Sanctioned changes: finish or undo an interrupted transaction, report expired approvals (before verifying).
      const changeService = attachChangeService(g, log);
      cleanups.push(() => changeService.stop());
      g.startupVerify();
      // load() already checked every blob's hash; compare the index bytes only.
      g.verifyStore(false, '-');
      g.lastRescanAt = Date.now();
      watcher.syncFiles(g.state.paths());

      const ctx = (): ApplyContext => ({ root: opts.root, rootFd, state: g.state, config: g.config, pset: g.pset });
      const reload = async (next: WardenConfig) => {
        config = next;
        g.setConfig(next);
        const c = ctx();
        const extra = reconcileProtectedSet(c, g.pset, next.max_bytes);
        if (extra.length) g.state.commit(rootFd, extra);
        await watcher?.close();
        watcher = await startWatcher(opts.root, g.pset, { onEvent: (rel, d) => hints.hint(rel, d), onError: onWatchError }, false);
        watcher.syncFiles(g.state.paths());
        notifier?.reload(next);
        g.rescan();
      };
      const control = await listenControl(rootFd, async (req: Request): Promise<Response> => handleRequest(req, g, ctx, reload, () => watcher, () => notifier?.status() ?? null));
      cleanups.push(() => control.close());

      const rescanTimer = setInterval(() => {
        g.rescan();
        for (const d of watcher?.rearmChanged() ?? []) log(`<5>warden: re-armed the watch on ${d}`);
      }, Math.max(100, config.rescan_seconds * 1000));
      cleanups.push(() => clearInterval(rescanTimer));
      if (sd.watchdogIntervalMs) {
        const wd = setInterval(() => {
          const healthy = watcher?.alive() && Date.now() - g.lastRescanAt < g.config.rescan_seconds * 1000 + (sd.watchdogIntervalMs ?? 0) * 2;
          if (healthy) sd.watchdog();
        }, sd.watchdogIntervalMs);
        cleanups.push(() => clearInterval(wd));
      }
      process.on('SIGHUP', () => {
        try { reload(configFromBytes(g.state.bytesOf(rootFd, WARDEN_TOML))).then(() => log('<5>warden: reloaded the approved config/warden.toml'), (err) => log(`<3>warden: SIGHUP reload failed: ${String((err as Error)?.message ?? err)}`)); }
        catch (err) { log(`<3>warden: SIGHUP: config/warden.toml is invalid, keeping the old settings: ${err instanceof WardenError ? [err.message, ...err.details.map(formatLocated)].join('; ') : String(err)}`); }
      });
    } catch (err) {
      for (const c of cleanups.reverse()) await c();
      throw err;
    }
  }

  if (opts.notifier) {
    // Dynamic import: a guard-only process never loads discord or desktop code.
    const { startNotifier, defaultNotifierStateDir } = await import('../notifier/index.js');
    notifier = await startNotifier({ root: opts.root, config, stateDir: defaultNotifierStateDir(opts.root, opts.guard), log });
    const n = notifier;
    cleanups.push(() => n.stop());
    if (!opts.guard) {
      process.on('SIGHUP', () => { try { n.reload(loadWardenConfig(opts.root)); } catch (err) { log(`<3>warden: SIGHUP: ${String((err as Error).message)}`); } });
      if (sd.watchdogIntervalMs) {
        const wd = setInterval(() => sd.watchdog(), sd.watchdogIntervalMs);
        cleanups.push(() => clearInterval(wd));
      }
    }
  }

  say('ready');
  sd.ready();
  sd.status(guard ? `guarding ${guard.state.paths().length} files` : 'notifier running');
  let stopping = false;
  const stop = async () => {
    if (stopping) return done;
    stopping = true;
    sd.stopping();
    // Leave index and seal agreeing (a second writer may have moved either since the last check).
    if (!lockLost) { try { guard?.verifyStore(false, '-'); } catch { /* keep stopping */ } }
    guard?.stop();
    for (const c of cleanups.reverse()) { try { await c(); } catch { /* keep stopping */ } }
    sd.close();
    resolveDone();
    return done;
  };
  stopSelf = stop;
  return { stop, guard, done };
}

async function handleRequest(req: Request, g: Guard, ctx: () => ApplyContext, reload: (c: WardenConfig) => Promise<void>,
  watcher: () => WatchHandle | null, notifierStatus: () => unknown): Promise<Response> {
  switch (req.op) {
    case 'ping':
      return {
        ok: true, pid: process.pid, generation: g.state.index.generation, files: g.state.paths().length,
        polling: watcher()?.polling ?? false, watcherAlive: watcher()?.alive() ?? false,
        failing: g.failingPaths(), counters: g.counters, notifier: notifierStatus(),
      };
    case 'change':
      // Sanctioned changes and approvals (src/approvals/service.ts).
      return handleChangeRequest(req, g, ctx(), reload);
    case 'apply': {
      // Older request shape: a proposal that respects approval (applied now only when approval = "none").
      const r = await handleChangeRequest({ ...req, action: 'propose' }, g, ctx(), reload);
      const applied = r.applied as Record<string, unknown> | undefined;
      if (applied) return { ok: true, ...applied };
      return r.ok ? { ok: false, error: `approval needed: request ${String((r.pending as { id?: string })?.id)}; answer with 'warden approve ID'`, pending: r.pending, exitCode: 1 } : r;
    }
    case 'rescan':
      return { ok: true, reverted: g.rescan() };
    default:
      return { ok: false, error: `unknown request "${req.op}"` };
  }
}
