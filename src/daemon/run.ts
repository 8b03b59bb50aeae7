/**
 * `warden run`: the guard and/or the notifier (SPEC §11). The guard never loads network
 * code: the notifier is imported dynamically, and only when this process runs it.
 */
import { WardenError, formatLocated } from '../common/errors.js';
import { WARDEN_TOML, configFromBytes, loadWardenConfig, type WardenConfig } from '../config/warden-config.js';
import { lstatAt, openRoot, safeClose, walkDir } from '../fsx/beneath.js';
import { BASELINE_DIR, INDEX_NAME } from '../store/layout.js';
import { BaselineState } from '../guard/baseline-state.js';
import { Guard } from '../guard/guard.js';
import { startWatcher, type WatchHandle } from '../guard/watcher.js';
import { HintQueue } from '../guard/hints.js';
import { appendAlert, newAlertId } from '../store/alerts.js';
import { readIndex } from '../store/baseline.js';
import { loadKey, readSeal, sealPath } from '../store/keys.js';
import { reconcileProtectedSet, type ApplyContext } from '../changes/apply.js';
import { attachChangeService, handleChangeRequest } from '../approvals/daemon.js';
import { initRoot } from '../changes/init.js';
import { listenControl, type Request, type Response } from './control.js';
import { acquireLock, type Lock } from './lock.js';
import { createSdNotifier } from './sd-notify.js';
import { ensureStoreDirs } from '../store/store-dirs.js';
import { adviceFor } from '../guard/classify.js';

/** EX_CONFIG: the guard exits with it when the root has no baseline (see the guard unit). */
export const EXIT_NOT_INITIALISED = 78;
/** The notifier exits with it when its sandbox no longer hides a private store directory. */
export const EXIT_SANDBOX_BREACH = 75;

/** No baseline index and no seal: this root was never initialised (a sealed root whose index vanished is tampered, not new). */
function notInitialised(rootFd: number, root: string): boolean {
  const w = walkDir(rootFd, BASELINE_DIR);
  if (!w.ok) { safeClose(w.parentFd); return readSeal(sealPath(root)) === null; }
  try { return lstatAt(w.fd, INDEX_NAME) === null && readSeal(sealPath(root)) === null; } finally { safeClose(w.fd); }
}

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
  let notifier: { stop(): Promise<void>; reload(c: WardenConfig): void; status(): unknown; healthy(maxAgeMs: number): boolean } | null = null;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => { resolveDone = r; });

  if (opts.guard) {
    rootFd = openRoot(opts.root);
    cleanups.push(() => safeClose(rootFd));
    const lock: Lock = await acquireLock(rootFd, 10_000);
    cleanups.push(() => lock.release());
    try {
      ensureStoreDirs(rootFd); // the notifier unit hides them; it can hide only what exists
      if (!opts.initIfNeeded && notInitialised(rootFd, opts.root)) {
        // Say so and stop for good (the unit's RestartPreventExitStatus=78) rather than
        // crash-loop on a missing key: the owner has to run `warden init` once.
        const msg = `not initialised: ${opts.root} has no baseline yet; record it once as the guard's account with 'warden init' (docs/DEPLOY.md §2.4; 'warden install-units --write' prints the command), then start the guard again`;
        sd.status(msg);
        throw new WardenError(msg, EXIT_NOT_INITIALISED);
      }
      const key = loadKey(opts.root, opts.initIfNeeded);
      const idx = readIndex(rootFd, key);
      // Only a root that never had a baseline is initialised: a sealed one whose index vanished is tampered.
      if (!idx.ok && idx.problem === 'missing' && opts.initIfNeeded && readSeal(sealPath(opts.root)) === null) {
        const r = await initRoot(opts.root, { force: false });
        log(`<5>warden: no baseline yet: recorded ${r.files} file(s) as approved (warden init)`);
      }
      let state: BaselineState;
      try {
        state = BaselineState.load(rootFd, key, { blobs: true }, sealPath(opts.root));
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
      const { startSandboxCheck } = await import('../notifier/sandbox-check.js');
      const check = startSandboxCheck(opts.root, (rel) => {
        log(`<2>warden: ${rel} became visible to the notifier (it was replaced after the notifier started, which detaches the unit's InaccessiblePaths= mount); exiting so that systemd restarts the notifier with it hidden`);
        process.exit(EXIT_SANDBOX_BREACH);
      });
      if (check) cleanups.push(() => check.stop());
      process.on('SIGHUP', () => { try { n.reload(loadWardenConfig(opts.root)); } catch (err) { log(`<3>warden: SIGHUP: ${String((err as Error).message)}`); } });
      if (sd.watchdogIntervalMs) {
        // Fed only while the delivery loop runs (sd-notify.ts): a stuck loop gets restarted.
        const every = sd.watchdogIntervalMs;
        const wd = setInterval(() => { if (n.healthy(every)) sd.watchdog(); }, every);
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
    guard?.stop();
    for (const c of cleanups.reverse()) { try { await c(); } catch { /* keep stopping */ } }
    sd.close();
    resolveDone();
    return done;
  };
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
