/**
 * `warden run`: the guard and/or the notifier (docs/CONTRACT.md §Deployment). The guard never loads network
 * code: the notifier is imported dynamically, and only when this process runs it.
 */
import { setFlagsFromString } from 'node:v8';
import { WardenError, formatLocated } from '../common/errors.js';
import type { WardenConfig } from '../config/warden-config.js';
// zod-free settings for the guard (zod loads only for a file the quick check cannot vouch for).
import { WARDEN_TOML, settingsFromBytes } from '../config/quick-config.js';
import { NotInitialised, Store, type StoreFd } from '../store/store.js';
import { ensureDirBeneath, lstatAt, openRoot, safeClose, withDir } from '../fsx/beneath.js';
import { observe } from '../guard/observe.js';
import { baseOf, dirOf } from '../guard/inspect.js';
import { BASELINE_DIR, CONTROL_DIR, INDEX_NAME, LOCK_NAME, PRIVATE_STORE_DIRS, QUARANTINE_DIR } from '../store/layout.js';
import { StoreBudget } from '../store/prune.js';
import { BaselineState, RECOVER } from '../store/baseline-state.js';
import { Guard, type WriterSource } from '../guard/guard.js';
import { DaemonDetectors } from '../guard/detectors.js';
import type { WatchSupervisor } from '../guard/watch-supervisor.js';
import { appendAlert, newAlertId } from '../store/alerts.js';
import type { Alert } from '../store/alert-types.js';
import { publishManifest } from '../store/manifest.js';
import { settingsFor } from '../store/root-settings.js';
import { keyPath, readSeal, sealPath } from '../store/keys.js';
import { lstatSync, readFileSync } from 'node:fs';
import { blobStampsPath } from '../store/blob-stamps.js';
import { loadKeyOrExplainMove, recordKeyOwner } from '../store/rehome.js';
import type { ApplyContext } from '../changes/apply.js';
import { attachChangeService, fileOnBehalf, handleChangeRequest } from './change-service.js';
import { listenControl } from './control.js';
import type { AnyReply, ControlRequest } from './protocol.js';
import { acquireLock, type Lock } from '../store/lock.js';
import { createJournalSender } from './journald.js';
import { createSdNotifier } from './sd-notify.js';
import { adviceCommandStyle, adviceFor, setAdviceCommandStyle } from '../guard/classify.js';
import { userInfo } from 'node:os';
import { muteStreamErrors, rateLimitedWriter, writeLineSync } from '../common/diagnostics.js';
import { linkWitness, type WitnessLink, type WitnessReport } from './witness-link.js';
import type { Writer } from '../store/alert-types.js';
import type { RecordLine } from '../witness/record.js';

/** EX_CONFIG: the guard exits with it when the root has no baseline (see the guard unit). */
export const EXIT_NOT_INITIALISED = 78;
/** The notifier exits with it when its sandbox no longer hides a private store directory. */
export const EXIT_SANDBOX_BREACH = 75;

/** No baseline index and no seal: this root was never initialised (a sealed root whose index vanished is tampered, not new). */
function notInitialised(storeFd: StoreFd, root: string): boolean {
  const noIndex = withDir(storeFd, BASELINE_DIR, (fd) => lstatAt(fd, INDEX_NAME) === null, () => true);
  return noIndex && readSeal(sealPath(root)) === null;
}

/**
 * The approved bytes of a file at start: its store blob, else the live file when that still
 * hashes to the approved sha256 (the store check rebuilds the blob from it after start).
 */
function approvedBytes(state: BaselineState, storeFd: StoreFd, rootFd: number, path: string): Buffer | null {
  const e = state.entry(path);
  if (!e) return null;
  const b = state.bytesOf(storeFd, path);
  if (b) return b;
  const live = withDir(rootFd, dirOf(path), (fd) => observe(fd, baseOf(path), e.size), () => null);
  return live?.sha256 === e.sha256 ? live.bytes : null;
}

/**
 * Say so and stop for good (the unit's RestartPreventExitStatus=78) rather than crash-loop:
 * the owner has to run `warden init` once. systemd's status line says it too.
 */
function notInitialisedError(root: string): WardenError {
  const msg = `not initialised: run \`warden init\` to record the approved baseline of ${root} (as the guard's account in the deployment; 'warden install-units --write' prints the command), then start the guard again`;
  createSdNotifier().status(msg);
  return new WardenError(msg, EXIT_NOT_INITIALISED);
}

/**
 * The root has a seal but its store (inside it, ROOT/snapshots) is not at the path: the path
 * names another directory now (a file system mounted there). Not "not initialised" (exit 78
 * would keep the unit down for good): a plain failure, so systemd tries again once it is fixed.
 */
function storeHiddenError(root: string): WardenError {
  let other = true;
  try {
    const rec = JSON.parse(readFileSync(keyPath(root).replace(/\.key$/, '.root'), 'utf8')) as { dev?: number; ino?: number };
    const st = lstatSync(root);
    other = rec.dev !== st.dev || rec.ino !== st.ino;
  } catch { /* no record: say what is most likely */ }
  const msg = other
    ? `${root} has a baseline seal, but its store (${root}/snapshots) is not at the root path: the path names another directory now (a file system mounted there?). warden changes nothing in it. Unmount it, or copy the old root's snapshots/ into it and run 'warden rehome --here' (docs/DEPLOY.md, "Putting a root on a file system of its own")`
    : `${root} has a baseline seal, but its store (${root}/snapshots) is gone: warden will not start from nothing. ${RECOVER}`;
  createSdNotifier().status(msg);
  return new WardenError(msg);
}

export interface RunOptions {
  root: string;
  guard: boolean;
  notifier: boolean;
  initIfNeeded: boolean;
  /** Run the witness in this process when it has CAP_SYS_ADMIN (default: true for the all-in-one, false for --guard). */
  witness?: boolean;
  /** Where "ready" and other stdout lines go. */
  stdout?: (line: string) => void;
  log?: (line: string) => void;
  /**
   * One of several roots of one process (daemon/multi-root.ts; docs/ARCHITECTURE.md, "Several
   * roots in one process"): its stderr lines name the root, and the host, not this root, says
   * `ready`, sets the status line and feeds the watchdog.
   */
  host?: { tag: string };
}

export interface Daemon {
  stop(): Promise<void>;
  guard: Guard | null;
  /** Resolves when the daemon stops on its own (fatal error) or is stopped. */
  done: Promise<void>;
  /** What the watchdog asks: the watches alive and the backstop rescan on time (the guard), the delivery loop running (a notifier alone). */
  healthy(): boolean;
  /** The status line (systemd's STATUS=). */
  statusLine(): string;
}

/**
 * The guard idles for days after a start that allocates briefly but a lot (10,000 files
 * inspected): V8 then grows its young generation to 16 MiB per semi-space and keeps it, and
 * those pages stay resident (~30 MB of a 10,000-file guard's RSS). Growth factor 1
 * keeps the semi-spaces at their initial size; scavenges get more frequent, each smaller.
 * (A flag read at every growth decision; --max-semi-space-size only counts at process start.)
 */
function keepYoungGenerationSmall(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}

export async function runDaemon(opts: RunOptions): Promise<Daemon> {
  keepYoungGenerationSmall();
  // A failing or flooded stderr/stdout never stops the guard (invariant 14; common/diagnostics.ts).
  muteStreamErrors();
  // On a terminal the <N> priority prefixes are noise; the journal (a pipe) keeps them.
  const tagged = (line: string): string => (opts.host ? line.replace(/^(<[0-7]>)?(warden: )?/, (_m, p?: string) => `${p ?? ''}warden ${opts.host!.tag}: `) : line);
  const ttyless = (w: (line: string) => void) => (line: string) => { const l = tagged(line); w(process.stderr.isTTY ? l.replace(/^<[0-7]>/, '') : l); };
  const log = opts.log ?? ttyless(rateLimitedWriter(2));
  const say = opts.stdout ?? ((l: string) => { writeLineSync(1, l); });
  process.umask(0o077);
  // The store is opened once and held: every later access goes through its descriptor,
  // whatever happens to the path it was opened from (store.ts).
  let store: Store;
  try { store = Store.open(opts.root, { create: opts.guard && opts.initIfNeeded }); }
  catch (err) { throw opts.guard && err instanceof NotInitialised ? (readSeal(sealPath(opts.root)) !== null ? storeHiddenError(opts.root) : notInitialisedError(opts.root)) : err; }
  if (opts.guard && !opts.initIfNeeded && notInitialised(store.fd, opts.root)) { store.close(); throw notInitialisedError(opts.root); }
  // In the deployment, the advice in alerts names the command that works there.
  if (store.loc.base.deployment && process.geteuid?.() !== 0) setAdviceCommandStyle({ account: (() => { try { return userInfo().username; } catch { return `#${process.geteuid?.() ?? 0}`; } })(), root: opts.root });
  // The guard takes its settings from the authenticated baseline once loaded (below); a
  // notifier alone, from the approved copy in the store it holds (never from the root).
  let config: WardenConfig;
  try { config = opts.guard ? await settingsFromBytes(null) : (await import('../store/approved-config.js')).loadWardenConfigFrom(store.fd, opts.root); }
  catch (err) { store.close(); throw err; }
  const sd = createSdNotifier();
  const cleanups: (() => Promise<void> | void)[] = [() => store.close()];
  let guard: Guard | null = null;
  let detectors: DaemonDetectors | null = null;
  let rootFd = -1;
  let notifier: { stop(): Promise<void>; reload(c: WardenConfig): void; status(): unknown; healthy(maxAgeMs: number): boolean } | null = null;
  let stopSelf: (() => Promise<void>) | null = null;
  let lockLost = false;
  let witnessReport: (() => WitnessReport) | null = null;
  let healthy: (every: number) => boolean = () => true;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => { resolveDone = r; });

  if (opts.guard) {
    rootFd = openRoot(opts.root);
    // The guard's, once it exists: it may release a foreign root it cannot move aside (-1).
    cleanups.push(() => { const fd = guard ? guard.rootFd : rootFd; if (fd >= 0) safeClose(fd); });
    const key = loadKeyOrExplainMove(opts.root, opts.initIfNeeded);
    // Held for the daemon's whole life: commands see it even when the socket is gone.
    const controlFd = ensureDirBeneath(store.fd, CONTROL_DIR);
    let lock: Lock;
    const onLost = (by: { pid: number }) => { log(`<2>warden: another warden daemon (pid ${by.pid}) took over this root's lock; stopping, so that two guards do not fight over the store`); lockLost = true; void stopSelf?.(); };
    try { lock = await acquireLock(controlFd, { role: 'daemon', waitMs: 10_000, key, label: store.label(`${CONTROL_DIR}/${LOCK_NAME}`), log, onLost }); }
    catch (err) { for (const c of cleanups.reverse()) await c(); throw err; }
    finally { safeClose(controlFd); }
    cleanups.push(() => lock.release());
    try {
      store.ensureLayout();
      // Only a root that never had a baseline is initialised: a sealed one whose index vanished
      // is tampered. (An lstat, not a read: the index is read and authenticated once, below.)
      if (opts.initIfNeeded && notInitialised(store.fd, opts.root)) {
        const { initRoot } = await import('../changes/init.js');
        const r = await initRoot(opts.root, { force: false });
        log(`<5>warden: no baseline yet: recorded ${r.files} file(s) as approved (warden init)`);
      }
      let state: BaselineState;
      try {
        // The index only: no blob is read at start. Each is read, and its hash checked, when a
        // revert needs it; the backstop rescan hashes every blob (then those whose stat changed).
        state = BaselineState.load(store.fd, key, { blobs: false, settle: true }, sealPath(opts.root)).publishFor(rootFd).holdBlobDirs(store.fd);
        const held = state;
        cleanups.push(() => held.releaseBlobDirs());
      } catch (err) {
        if (err instanceof WardenError && err.message.startsWith('baseline-tampered')) {
          // Fail closed, but leave a record the owner will be told about.
          const id = newAlertId();
          try {
            const where = store.label('baseline/index');
            appendAlert(store.fd, { id, time: new Date().toISOString(), path: where, action: 'flagged', reason: 'baseline-tampered', before: null, after: null, quarantine: null, detail: err.message, advice: RECOVER });
          } catch { /* the error below still says it */ }
          sd.status(`store failed authentication; not guarding: run 'warden init --force' on a terminal`);
        }
        throw err;
      }
      // Run on the approved settings, never on whatever is on disk now (it may be an edit
      // made while warden was stopped, which startup verification is about to revert).
      const approvedToml = approvedBytes(state, store.fd, rootFd, WARDEN_TOML);
      if (state.entry(WARDEN_TOML) && !approvedToml) throw new WardenError(`baseline-tampered: the approved content of ${WARDEN_TOML} is missing from the store or altered; warden will not adopt it. ${RECOVER}`);
      config = settingsFor(await settingsFromBytes(approvedToml), state.index);
      if (state.index.profile && !adviceCommandStyle()) setAdviceCommandStyle({ account: null, root: opts.root });
      // Alert journal lines get a bucket of their own: diagnostics cannot crowd them out.
      const journalLine = opts.log ?? ttyless(rateLimitedWriter(2, { burst: 2000, perSecond: 500 }));
      // Under systemd each alert is also a structured entry on journald's native socket
      // (journald.ts), which then carries the line: it is not written to stderr twice.
      const journald = createJournalSender(opts.root, journalLine);
      const journal = (line: string, alert?: Alert) => { if (alert && journald) journald.send(alert, line); else journalLine(line); };
      let link: WitnessLink | null = null;
      const writers: WriterSource = {
        lookup: (dev, ino) => link?.source.lookup(dev, ino) ?? null,
        lookupName: (path, ops) => link?.source.lookupName?.(path, ops) ?? null,
        unavailable: () => (link ? link.source.unavailable() : 'the witness is starting'),
        namesUnavailable: () => (link ? link.source.namesUnavailable?.() ?? null : 'the witness is starting'),
      };
      let budget: StoreBudget | null = null;
      let budgetRun: { stop(): void; kick(): void } | null = null;
      // docs/CONTRACT.md §Store budget: each durable alert adds what it kept; past the budget the oldest content is pruned.
      const onAlert = (a: Alert): void => {
        try { budget?.afterAlert(a); } catch (err) { log(`<3>warden: store budget: ${errnoText(err)}`); }
        budgetRun?.kick();
      };
      // Every detector feeds the guard's one door, the hint queue (guard/door.ts, guard/detectors.ts).
      const g: Guard<DaemonDetectors> = new Guard({
        root: opts.root, rootFd, store, config, state, log, journal, writers, onAlert, blobStamps: { path: blobStampsPath(opts.root), key },
        detectors: (door) => new DaemonDetectors(door, log, opts.root), deferNewFiles: true, onBehalf: (path, bytes) => fileOnBehalf(g, path, bytes, log), onRootReplaced: (fd) => {
        // docs/CONTRACT.md §Detection: the guard now holds the directory at the root path; what it publishes and
        // records names that one (the runtime's view fails closed until this manifest lands).
        rootFd = fd;
        try { store.recordRoot(fd); recordKeyOwner(opts.root, fd); } catch { /* only a later move is harder to name */ }
        publishManifest(fd, g.state.index, process.env, log);
        link?.rootChanged(fd); // the witness's marks follow: they were on the old directories' inodes
        log(`<2>warden: the root path ${opts.root} named something else; put the approved tree back there and guard it`);
      } });
      guard = g;
      const det = g.detectors;
      detectors = det;
      cleanups.push(() => det.close());
      // Swapped while warden was stopped: the directory opened above is not warden's; nothing
      // below writes into it (docs/ARCHITECTURE.md, invariant 19).
      g.checkRootAtStart();
      // Inotify or polling, errors at any time (also while arming), and the way back: watch-supervisor.ts.
      await det.watch();
      // The witness (docs/CONTRACT.md §Who did it): here when this process may run it, else the record of the one in its own unit.
      link = await linkWitness({
        root: opts.root, rootFd: g.rootFd, config: () => g.config, log, inProcess: opts.witness ?? opts.notifier,
        targets: () => ({ files: g.state.paths() as string[], dirs: g.pset.dirs.filter((d) => d !== '') }),
        onRefused: (r) => g.record(refusalAlert(r)),
      });
      const l = link;
      witnessReport = () => l.report();
      cleanups.push(() => l.stop());
      // Sanctioned changes: finish or undo an interrupted transaction, report expired approvals (before verifying).
      const changeService = await attachChangeService(g, log);
      cleanups.push(() => changeService.stop());
      g.startupVerify();
      // The root path names a foreign object that could not be moved aside (a mount point): the
      // guard stays up, touches nothing in it and waits, watching the path (guard/blocked.ts).
      const waiting = !g.guarding();
      if (waiting) log(`<2>warden: ${opts.root} names a directory warden did not make and cannot move aside; not guarding it, waiting for the path to change (see 'warden alerts')`);
      if (g.unavailable.size > 0) {
        // Fail closed, as a start always has: a file that differs and whose approved content
        // is gone from the store cannot be put back (the alert above says which).
        const first = [...g.unavailable][0] ?? '';
        sd.status(`store failed authentication; not guarding: run 'warden init --force' on a terminal`);
        g.stop();
        throw new WardenError(`baseline-tampered: the approved content of ${first} is missing from the store or altered; warden will not adopt it. ${RECOVER}`);
      }
      if (!waiting) publishManifest(rootFd, g.state.index, process.env, log); // the runtime's view (docs/CONTRACT.md §Runtime view)
      // The index bytes now; the blobs at the first backstop rescan (as before: it hashes each once).
      g.verifyStore(false, '-');
      g.lastRescanAt = Date.now();
      budget = new StoreBudget(store, () => g.config.store_max_bytes, log, (detail) => g.flag('store-budget', store.label(QUARANTINE_DIR), detail));
      const run = startBudget(budget, log);
      budgetRun = run;
      cleanups.push(run.stop);

      const ctx = (): ApplyContext => ({ root: opts.root, rootFd: g.rootFd, store, state: g.state, config: g.config, pset: g.pset });
      const reload = async (next: WardenConfig) => {
        config = next;
        g.setConfig(next);
        const c = ctx();
        const { dropStaleBlobs, reconcileProtectedSet } = await import('../changes/apply.js');
        const extra = reconcileProtectedSet(c, g.pset, next.max_bytes, log);
        if (extra.length) { g.state.commit(store.fd, extra); dropStaleBlobs(store.fd, g.state, extra); }
        await det.dirs.restart();
        notifier?.reload(next);
        link?.update(next); // an approved [witness] enforce takes effect now, not at the next start
        g.rescan();
        budgetRun?.kick();
      };
      const control = await listenControl(store, (req) => handleRequest(req, g, ctx, reload, () => detectors?.dirs ?? null, () => notifier?.status() ?? null, () => witnessReport?.() ?? null), { log });
      cleanups.push(() => control.close());

      // The clocks: the backstop rescan and the 100 ms tick (root path, stamp poll); stopped first.
      det.startClocks();
      cleanups.push(() => det.close());
      healthy = (every) => det.dirs.alive() && Date.now() - g.lastRescanAt < g.config.rescan_seconds * 1000 + every * 2;
      if (sd.watchdogIntervalMs && !opts.host) {
        const every = sd.watchdogIntervalMs;
        const wd = setInterval(() => { if (healthy(every)) sd.watchdog(); }, every);
        cleanups.push(() => clearInterval(wd));
      }
      // Removed when this daemon stops: a later SIGHUP must not reload a stopped guard.
      const onHup = (): void => {
        settingsFromBytes(g.state.bytesOf(store.fd, WARDEN_TOML)).then((c) => settingsFor(c, g.state.index)).then(
          (next) => reload(next).then(() => log('<5>warden: reloaded the approved config/warden.toml'), (err) => log(`<3>warden: SIGHUP reload failed: ${String((err as Error)?.message ?? err)}`)),
          (err) => log(`<3>warden: SIGHUP: config/warden.toml is invalid, keeping the old settings: ${err instanceof WardenError ? [err.message, ...err.details.map(formatLocated)].join('; ') : String(err)}`));
      };
      process.on('SIGHUP', onHup);
      cleanups.push(() => { process.off('SIGHUP', onHup); });
    } catch (err) {
      for (const c of cleanups.reverse()) await c();
      throw err;
    }
  }

  if (opts.notifier) {
    // Dynamic import: a guard-only process never loads discord or desktop code.
    const { startNotifier, defaultNotifierStateDir } = await import('../notifier/index.js');
    notifier = await startNotifier({ root: opts.root, store, config, stateDir: defaultNotifierStateDir(store, opts.guard), log });
    const n = notifier;
    cleanups.push(() => n.stop());
    if (!opts.guard) {
      const { startSandboxCheck } = await import('../notifier/sandbox-check.js');
      const check = startSandboxCheck(store.dir, (rel) => {
        log(`<2>warden: ${rel} became visible to the notifier (it was replaced after the notifier started, which detaches the unit's InaccessiblePaths= mount); exiting so that systemd restarts the notifier with it hidden`);
        process.exit(EXIT_SANDBOX_BREACH);
      }, 1000, PRIVATE_STORE_DIRS);
      if (check) cleanups.push(() => check.stop());
      const { loadWardenConfigFrom } = await import('../store/approved-config.js');
      const onHup = (): void => { try { n.reload(loadWardenConfigFrom(store.fd, opts.root)); } catch (err) { log(`<3>warden: SIGHUP: ${String((err as Error).message)}`); } };
      process.on('SIGHUP', onHup);
      cleanups.push(() => { process.off('SIGHUP', onHup); });
      healthy = (every) => n.healthy(every);
      if (sd.watchdogIntervalMs && !opts.host) {
        // Fed only while the delivery loop runs (sd-notify.ts): a stuck loop gets restarted.
        const every = sd.watchdogIntervalMs;
        const wd = setInterval(() => { if (healthy(every)) sd.watchdog(); }, every);
        cleanups.push(() => clearInterval(wd));
      }
    }
  }

  const g0 = guard as Guard | null;
  const statusLine = (): string => (g0 ? (g0.guarding() ? `guarding ${g0.state.paths().length} files` : `not guarding: the root path names a directory warden did not make and cannot move aside; waiting (see 'warden alerts')`) : 'notifier running');
  if (!opts.host) {
    say('ready');
    sd.ready();
    sd.status(statusLine());
  }
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
  return { stop, guard, done, healthy: () => healthy(sd.watchdogIntervalMs ?? 0), statusLine };
}

async function handleRequest(req: ControlRequest, g: Guard, ctx: () => ApplyContext, reload: (c: WardenConfig) => Promise<void>,
  watcher: () => WatchSupervisor | null, notifierStatus: () => unknown, witness: () => WitnessReport | null): Promise<AnyReply> {
  switch (req.op) {
    case 'ping':
      return {
        ok: true, pid: process.pid, generation: g.state.index.generation, files: g.state.paths().length,
        polling: watcher()?.polling ?? false, watcherAlive: watcher()?.alive() ?? false,
        failing: g.failingPaths(), counters: g.counters, notifier: notifierStatus(), witness: witness(),
      };
    case 'change':
      // Sanctioned changes and approvals (src/changes/approvals.ts).
      return handleChangeRequest(req.change, g, ctx(), reload);
  }
}

/** errno code or message of a caught error. */
function errnoText(err: unknown): string {
  return (err as NodeJS.ErrnoException)?.code ?? String((err as Error)?.message ?? err);
}

/** How often the whole store is walked again (late writes, history and delivery state grow between alerts). */
const BUDGET_SCAN_MS = 10 * 60_000;
/** Pruning far over budget (a start) works in slices of at most this long: reverts go between them. */
const PRUNE_SLICE_MS = 25;

/** The store budget's walk at start and now and then, pruning in slices; kick: prune now (a lower budget approved). */
function startBudget(budget: StoreBudget, log: (line: string) => void): { stop(): void; kick(): void } {
  let stopped = false;
  let running = false; // an alert raised while pruning (the notice) kicks again: the running slice goes on instead
  let slice: NodeJS.Timeout | null = null;
  const prune = (): void => {
    if (running || stopped) return;
    running = true;
    slice = null;
    let more = false;
    try { more = budget.enforce(Infinity, PRUNE_SLICE_MS); } catch (err) { log(`<3>warden: store budget: ${errnoText(err)}`); } finally { running = false; }
    if (more && !stopped && !slice) slice = setTimeout(prune, 5);
  };
  const scan = (): void => {
    try { budget.scan(); } catch (err) { log(`<3>warden: store budget: could not measure the store: ${errnoText(err)}`); return; }
    if (!slice) prune();
  };
  scan();
  const timer = setInterval(scan, BUDGET_SCAN_MS);
  timer.unref();
  return { stop: () => { stopped = true; clearInterval(timer); if (slice) clearTimeout(slice); }, kick: () => { if (!slice) prune(); } };
}

/** A refused open (enforce = true) as an alert: nothing was written, and who tried. */
function refusalAlert(r: RecordLine): import('../store/alert-types.js').Alert {
  const { t, dev: _d, ino: _i, path, ...w } = r;
  const by: Writer = { ...w, time: new Date(t).toISOString() };
  const rel = typeof path === 'string' ? path : '?';
  return {
    id: newAlertId(), time: new Date().toISOString(), path: rel, action: 'flagged', reason: 'refused', before: null, after: null, quarantine: null,
    by, detail: 'the witness refused an open for writing (EPERM); the file was not changed', advice: adviceFor(rel, 'refused', '', null),
  };
}
