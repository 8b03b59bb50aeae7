/**
 * The guard's engine: two entry points, a hint for a path (`onPathEvent`) and a sweep
 * (`rescan`), both reached through one door, the hint queue (door.ts, hints.ts), which every
 * detector feeds. A hint becomes a check, a check a revert, a revert an alert:
 *
 *   hint → check: inspect (lstat + bounded read + hash) → classify → act: the approved
 *   content (approved.ts) → revert (revert.ts: quarantine, temp + fsync + rename + dir fsync)
 *   → report (report.ts: the alert, or a failed revert retried through the door)
 *
 * Everything on that path is synchronous: a check never interleaves with another check
 * or with a sanctioned change, so "one writer" holds inside the process by construction.
 */
import { errnoCode } from '../common/errors.js';
import type { WardenConfig } from '../config/warden-config.js';
import { DIR_MOVED, lstatAt, withDir } from '../fsx/beneath.js';
import type { Alert, AlertReason } from '../store/alert-types.js';
import { newAlertId } from '../store/alerts.js';
import type { BaselineState } from '../store/baseline-state.js';
import type { Store } from '../store/store.js';
import { EMBEDDED_STORE } from '../store/location.js';
import { completeDirs } from './dirs-on-the-way.js';
import { DirCache, baseOf, candidatePathsBelow, dirOf, inspectFileAt, type Finding } from './inspect.js';
import { statStamp } from './observe.js';
import { protectedSet, type ProtectedSet } from '../config/protected-set.js';
import { AlertSink } from './alert-sink.js';
import { Quarantine, QuarantineQuota } from './quarantine.js';
import { LateWrites } from './late-writes.js';
import { removeFinding, restoreFinding, type Approved, type Outcome, type RevertDeps } from './revert.js';
import { RetryBook } from './retry.js';
import { StoreCheck } from './store-check.js';
import { sweepTemps } from './temps.js';
import { Sweeper, type SweepCause } from './sweep.js';
import type { GuardOptions } from './guard-options.js';
import { OwedWrites } from './owed.js';
import { CleanStamps } from './clean-stamps.js';
import { HintQueue } from './hints.js';
import { RecentListings } from './recent-listings.js';
import type { Detectors, Door } from './door.js';
import { HeldRoot } from './held-root.js';
import { Report } from './report.js';
import { PathRepairs } from './path-repairs.js';
import { approvedFor } from './approved.js';
import { BlockedPaths } from './blocked.js';
import { RuntimeWrites } from './runtime-writes.js';
import { fstatSync } from 'node:fs';

export type { GuardOptions } from './guard-options.js';
export type { WriterSource } from './alert-build.js';

export class Guard<D extends Detectors = Detectors> {
  readonly root: string;
  /** The root held, and the protected directories warden made or verified (held-root.ts). */
  private readonly held: HeldRoot;
  /** Foreign objects at protected directory paths that could not be moved aside: left alone, watched (blocked.ts). */
  private readonly blocked = new BlockedPaths();
  readonly storeHandle: Store;
  config: WardenConfig;
  pset: ProtectedSet;
  readonly state: BaselineState;
  private readonly log: (line: string) => void;
  private readonly alerts: AlertSink;
  private readonly quarantine: Quarantine;
  /** Rejected inodes held open across file systems: their late writes are copied into quarantine. */
  private readonly late: LateWrites;
  private readonly quota = new QuarantineQuota();
  private readonly retries = new RetryBook();
  private readonly store: StoreCheck;
  private readonly revertDeps: RevertDeps;
  private readonly report: Report;
  private readonly repairs: PathRepairs;
  /** Rejected bytes not yet in quarantine, alerts not yet appended (a full disk). */
  private readonly owed: OwedWrites;
  /** Stat stamps of files verified clean by hash: lets the backstop rescan skip unchanged files. */
  private readonly cleanStamps = new CleanStamps((rel) => this.detectors.inodes?.cleanChanged(rel));
  private readonly sweeper = new Sweeper(this);
  /** The one door (door.ts): every detector's hints go through this queue to onPathEvent. */
  private readonly hints: HintQueue;
  /** For sweep.ts: new files found by a rescan are worked off after the waiting reverts (null: inline). */
  readonly defer: ((rel: string) => void) | null;
  /** The detectors, built on the door at construction (door.ts). */
  readonly detectors: D;
  /** Files the last rescan skipped because the stamp poll vouched for them (for the bench and tests). */
  get lastRescanVouched(): number { return this.sweeper.lastRescanVouched; }
  private stopped = false;
  /** Paths whose revert found no intact approved content (the store blob missing or altered). */
  readonly unavailable = new Set<string>();
  private readonly tally = { checks: 0, reverts: 0 };
  lastRescanAt = 0;

  constructor(opts: GuardOptions<D>) {
    this.root = opts.root;
    this.held = new HeldRoot(opts.root, opts.rootFd);
    this.storeHandle = opts.store;
    this.config = opts.config;
    this.pset = protectedSet(opts.config);
    this.state = opts.state;
    // A baseline recorded before the directories on the way to a file were (dirs-on-the-way.ts):
    // they are approved as they are now, until the next sanctioned change records them.
    completeDirs(opts.rootFd, this.state, this.pset);
    this.log = opts.log ?? ((l) => process.stderr.write(l + '\n'));
    // A layout entry found damaged on the way (quarantine/ planted as a link, a directory at
    // alerts.jsonl) is repaired at once, then the operation is tried again.
    const repair = (name: string) => this.store.verifyLayout(name).length > 0;
    this.alerts = new AlertSink(opts.store, opts.journal ?? this.log, opts.onAlert ?? (() => {}), repair, Date.now, () => this.owed.arm());
    this.quarantine = new Quarantine(opts.store, this.log, repair);
    this.late = new LateWrites((id, name, bytes) => this.safely(`keeping late writes of ${name}`, () => this.quarantine.rewrite(id, name, bytes)), () => this.maxBytes);
    this.quarantine.onHeld = (fd, id, name) => this.late.track(fd, id, name);
    this.owed = new OwedWrites(this.alerts, this.quarantine, this.log);
    // Read through the guard at each revert (a test swaps in a small quota).
    const quota = (): QuarantineQuota => this.quota;
    const dirs = (): BaselineState['index']['dirs'] => this.state.index.dirs;
    this.revertDeps = {
      root: this.root, quarantine: this.quarantine, get quota() { return quota(); }, late: this.late, maxBytes: () => this.maxBytes,
      approvedOwner: (p) => this.state.entry(p)?.uid ?? dirs()[dirOf(p)]?.uid ?? dirs()['']?.uid,
      runtimeWrites: new RuntimeWrites({ root: this.root, state: this.state, store: opts.store, config: () => this.config, report: () => this.report,
        markClean: (rel, stamp) => this.markClean(rel, undefined, stamp), later: (rel, ms) => { setTimeout(() => this.hints.hint(rel, false), ms).unref(); }, onBehalf: opts.onBehalf, log: this.log }),
    };
    this.store = new StoreCheck(opts.store, opts.state, (detail, path) => this.raiseTamper(detail, path), this.log, opts.rootFd, opts.blobStamps ?? null);
    this.report = new Report({
      root: this.root, state: this.state, pset: () => this.pset, config: () => this.config, writers: opts.writers ?? null, alerts: this.alerts,
      quarantine: this.quarantine, quota, retries: this.retries, again: (path, reason) => this.again(path, reason),
      markClean: (rel) => this.markClean(rel), sweepTemps: () => this.sweepTemps(),
    });
    this.hints = new HintQueue((rel, isDir, queuedAt) => this.onPathEvent(rel, isDir, queuedAt), { urgent: (rel, isDir) => this.isUrgent(rel, isDir), onOverflow: () => this.rescan() });
    this.defer = opts.deferNewFiles ? (rel) => this.hints.later(rel) : null;
    this.repairs = new PathRepairs({
      root: this.root, held: this.held, state: this.state, storeHandle: this.storeHandle, store: this.store, quarantine: this.quarantine,
      report: this.report, blocked: this.blocked, log: this.log, stopped: () => this.stopped, safely: (what, fn) => this.safely(what, fn), adopted: (fd) => this.adopted(fd),
      sweepAll: () => { this.sweep('root', true); }, rootReplaced: opts.onRootReplaced ?? (() => {}), dirsRemade: () => this.dirsRemade(),
    });
    this.detectors = opts.detectors ? opts.detectors(this.door()) : ({} as D);
  }

  /** The door every detector is built on (door.ts). */
  private door(): Door {
    let files: object | null = null;
    let paths: readonly string[] = [];
    return {
      hint: (rel, isDir) => this.hints.hint(rel, isDir),
      sweep: () => { this.rescan(); },
      flag: (reason, path, detail) => this.flag(reason, path, detail),
      rootPathHolds: () => this.rootPathHolds(),
      rootFd: () => this.rootFd,
      pset: () => this.pset,
      config: () => this.config,
      // The same array while the baseline is unchanged: the stamp poll sorts only a new one.
      approvedPaths: () => { if (this.state.index.files !== files) { files = this.state.index.files; paths = this.state.paths(); } return paths; },
      cleanStamp: (rel) => this.cleanStamps.get(rel),
    };
  }

  /** The directory at the root path that the guard holds. */
  get rootFd(): number { return this.held.fd; }

  get counters(): { checks: number; reverts: number; alerts: number; rescans: number; vouched: number; blobsVouched: number } {
    return { ...this.tally, alerts: this.alerts.count, rescans: this.sweeper.rescans, vouched: this.lastRescanVouched, blobsVouched: this.store.lastRescanVouched };
  }

  get maxBytes(): number { return this.config.max_bytes; }

  /** For sweep.ts: one more file looked at. */
  countCheck(): void { this.tally.checks++; }

  /** Verify everything; what changed while warden was not running is reverted with that reason. */
  startupVerify(): number {
    this.checkRootAtStart();
    // Still not the recorded root (the repair failed; it is retried with backoff): nothing
    // in it is touched (docs/ARCHITECTURE.md, invariant 19).
    if (!this.holdsOwnRoot()) return 0;
    this.sweepTemps();
    return this.sweep('startup', true);
  }

  /** At start: a root swapped while warden was stopped is moved aside whole (path-repairs.ts). True when it was replaced. */
  checkRootAtStart(): boolean {
    return this.repairs.rootAtStart();
  }

  /** Is the directory the guard holds warden's own root (not one found foreign at start)? */
  holdsOwnRoot(): boolean {
    return this.held.own();
  }

  /** Remove our own temp files that a failed restore left behind. */
  sweepTemps(): void {
    sweepTemps(this.rootFd, Object.keys(this.state.index.dirs));
  }

  /** Entry point 2, the sweep (the backstop rescan): directories, every candidate path, and the store. */
  rescan(): number {
    if (this.stopped) return 0;
    this.safely('flushing alerts', () => this.alerts.flush());
    if (this.safely('checking the root path', () => this.checkRootPath()) === true) { this.lastRescanAt = Date.now(); return 1; }
    this.safely('sweeping temp files', () => this.sweepTemps());
    this.sweeper.rescans++;
    this.sweeper.lastRescanVouched = 0;
    this.safely('reading the inode watches', () => this.detectors.inodes?.drainNow());
    const n = this.sweep('rescan', false);
    this.safely('verifying the store', () => this.store.verify(false, undefined, this.sweeper.rescans));
    this.lastRescanAt = Date.now();
    return n;
  }

  private sweep(cause: SweepCause, full: boolean): number {
    if (!this.holdsOwnRoot()) return 0;
    return this.sweeper.sweep(cause, full);
  }

  /**
   * For sweep.ts: do the inode watches vouch for `rel` (stamp-poll.ts `vouches`: its inode
   * watched, on a local file system, since before any writer still alive, nobody has it open,
   * its inode the clean stamp's)? Then the ordinary backstop rescan skips its lstat; every
   * FULL_SWEEP_EVERY-th rescan looks at every file whatever the watch says (idle CPU).
   */
  vouched(rel: string): boolean {
    return this.detectors.inodes?.vouches(rel) ?? false;
  }

  /** For sweep.ts and the revert: is the directory `fd` holds still the one at `dir` below the root? */
  stillAt(fd: number, dir: string): boolean {
    return this.held.stillAt(fd, dir);
  }

  /** For sweep.ts: is `rel` (in the directory `fd`) as it was when last verified clean by hash? */
  unchangedSinceClean(rel: string, fd: number): boolean {
    const stamp = this.cleanStamps.get(rel);
    if (!stamp) return false;
    const st = lstatAt(fd, baseOf(rel));
    return st !== null && st.isFile() && statStamp(st) === stamp;
  }

  /**
   * Run a check from an event, timer or rescan without ever letting an exception escape:
   * an unexpected error is logged and the backstop rescan looks again later.
   */
  safely<T>(what: string, fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      this.log(`<3>warden: ${what}: unexpected ${errnoCode(err) ?? (err as Error)?.message ?? String(err)}; will look again at the next rescan`);
      return undefined;
    }
  }

  /** Does a hint on `rel` go first? Approved files, directories and the store do; new files wait. */
  isUrgent(rel: string, isDirEvent: boolean): boolean {
    return isDirEvent || rel === '' || this.state.entry(rel) !== undefined || rel === 'snapshots' || rel.startsWith('snapshots/')
      || Object.hasOwn(this.state.index.dirs, rel) || this.pset.isProtectedDir(rel);
  }

  /** Entry point 1, a hint (from the hint queue) that something at `rel` (relative to the root) may have changed. */
  onPathEvent(rel: string, isDirEvent: boolean, queuedAt?: number): void {
    if (this.stopped) return;
    this.safely(`checking ${rel}`, () => this.route(rel, isDirEvent, queuedAt));
  }

  /** Which check a hint asks for: the root path, the store, a directory and what is below it, or one path. */
  private route(rel: string, isDirEvent: boolean, queuedAt?: number): void {
    // The root itself (or its name in its parent): first, is the path still the directory we hold?
    if ((rel === '' || !this.holdsOwnRoot()) && this.checkRootPath()) return;
    if (rel === EMBEDDED_STORE || rel.startsWith(`${EMBEDDED_STORE}/`)) {
      // The embedded store's path, seen from the root: a store event (or a swap of the path).
      if (this.storeHandle.mode === 'embedded') this.store.onEvent(rel === EMBEDDED_STORE ? '' : rel.slice(EMBEDDED_STORE.length + 1));
      return;
    }
    if (isDirEvent || rel === '' || Object.hasOwn(this.state.index.dirs, rel) || this.pset.isProtectedDir(rel)) {
      this.fixDirs(false);
      this.checkBelow(rel === '' ? '' : rel + '/', queuedAt);
      return;
    }
    // A directory renamed or made below a `**` glob's base: what it brings along raised no
    // event of its own (its watch is armed only now), so every match below it is checked now.
    this.check(rel, false);
    if (this.pset.inDeepGlob(rel) && !this.listings.covers(`${rel}/`, queuedAt) && withDir(this.rootFd, dirOf(rel), (fd) => lstatAt(fd, baseOf(rel))?.isDirectory() ?? false, () => false)) this.checkBelow(`${rel}/`, queuedAt);
  }

  /** Check every candidate path that starts with `prefix`, listed below that directory only, unless a recent listing covers it. */
  private checkBelow(prefix: string, queuedAt?: number): void {
    if (this.listings.covers(prefix, queuedAt)) return;
    this.listings.record(prefix);
    for (const p of candidatePathsBelow(this.rootFd, this.state, this.pset, prefix)) this.check(p, false);
  }
  private readonly listings = new RecentListings();

  /** A failed revert looked at again (retry.ts): a hint through the door, as a detector's would be. */
  private again(path: string, reason: AlertReason): void {
    if (reason === 'root-replaced') this.hints.hint('', true);
    else this.hints.hint(path, Object.hasOwn(this.state.index.dirs, path));
  }

  /** Inspect one path and put it right. Returns true when something was done. */
  check(rel: string, whileStopped: boolean, dirs?: DirCache, again = true): boolean {
    this.tally.checks++;
    // Neither approved nor matched by the settings (a directory below a ** base): nothing to inspect.
    if (!this.state.entry(rel) && !this.pset.kindOf(rel)) return false;
    // Inside a foreign directory that could not be moved aside: not warden's, never acted in.
    if (this.blocked.covers(rel)) return false;
    const own = dirs ?? new DirCache(this.rootFd);
    try {
      let fd = own.get(dirOf(rel));
      if (fd === null) {
        if (!this.state.entry(rel)) return false;
        // The parent directory is broken (gone, a link, a file): repair it, then look again.
        this.fixDirs(whileStopped);
        own.forget(dirOf(rel));
        fd = own.get(dirOf(rel));
        if (fd === null) return false;
      }
      // Another directory at the file's directory path (a mount raises no event there): judged first.
      if (!this.dirStillOurs(dirOf(rel), fd)) {
        this.fixDirs(whileStopped);
        own.forget(dirOf(rel));
        if (this.blocked.covers(rel)) return false;
        fd = own.get(dirOf(rel));
        if (fd === null) return false;
      }
      let lastStamp: string | undefined;
      const finding = inspectFileAt(fd, this.state, this.pset, rel, this.maxBytes, (o) => { lastStamp = o.stamp; });
      if (!finding) { this.markClean(rel, fd, lastStamp); return false; }
      // The directory moved away before the rename (nothing written there): once more from the
      // root's path; moved again, the revert fails and is retried with backoff.
      if (this.act(finding, whileStopped, fd, again) === 'moved') { own.forget(dirOf(rel)); return this.check(rel, whileStopped, own, false); }
      return true;
    } finally {
      if (!dirs) own.close();
    }
  }

  /** The stamp recorded when `rel` was last verified clean by hash (the stamp poll compares with it). */
  cleanStamp(rel: string): string | undefined {
    return this.cleanStamps.get(rel);
  }

  /** Does the root path still resolve to the directory we hold (same device and inode, a real directory)? */
  rootPathHolds(): boolean {
    return this.held.pathHolds();
  }

  /** The root path names something else: put it right (path-repairs.ts). True when it had changed. */
  checkRootPath(): boolean {
    return this.repairs.rootPath();
  }

  /** Is the guard guarding its root (false: waiting on a foreign object at the root path it could not move aside)? */
  guarding(): boolean {
    return this.held.own() && !this.blocked.has('');
  }

  /**
   * Is `fd` (opened at `dir`, an approved directory) the very directory warden made or
   * verified there (docs/ARCHITECTURE.md, invariant 19)? Not approved, or the root: yes.
   */
  private dirStillOurs(dir: string, fd: number): boolean {
    if (dir === '' || !Object.hasOwn(this.state.index.dirs, dir)) return true;
    const id = this.held.dirIds.get(dir);
    if (!id) return false;
    const st = fstatSync(fd);
    return st.dev === id.dev && st.ino === id.ino;
  }

  /** The guard holds the directory warden made at the root path (`fd`) now: what reads the root follows. */
  private adopted(fd: number): void {
    this.store.rootFd = fd;
    this.state.publishFor(fd);
    this.cleanStamps.clear();
  }

  /** Protected directories were made anew: the directory watches follow them. */
  private dirsRemade(): void {
    for (const d of this.detectors.dirs?.rearmChanged() ?? []) this.log(`<6>warden: re-armed the watch on ${d}`);
  }

  /** For sweep.ts and check: `rel` verified clean (its stat stamp recorded, its retries cleared). */
  markClean(rel: string, dirFd?: number, stamp?: string): void {
    this.retries.clear(rel);
    if (!this.state.entry(rel)) { this.cleanStamps.forget(rel); return; }
    if (stamp) { this.cleanStamps.set(rel, stamp); return; }
    const stampAt = (fd: number): void => {
      const st = lstatAt(fd, baseOf(rel));
      if (st?.isFile()) this.cleanStamps.set(rel, statStamp(st));
    };
    if (dirFd !== undefined) stampAt(dirFd);
    else withDir(this.rootFd, dirOf(rel), stampAt, () => undefined);
  }

  /** Repair protected directories; only warden's own are changed (path-repairs.ts). */
  fixDirs(whileStopped: boolean): number {
    return this.repairs.dirs(whileStopped);
  }

  /**
   * Put one finding right. `dirFd`: the file's directory, already open (saves a walk on the
   * revert path). `movedUp`: when the directory leaves its place in the root before the
   * rename, say so ('moved', nothing written, nothing alerted) for the caller to look again
   * from the root, rather than alert a failed revert.
   */
  act(f: Finding, whileStopped: boolean, dirFd?: number, movedUp = false): true | 'moved' {
    if (this.blocked.covers(f.path)) return true;
    if (dirFd === undefined) return withDir(this.rootFd, dirOf(f.path), (fd) => this.actAt(f, whileStopped, fd, movedUp), () => true);
    return this.actAt(f, whileStopped, dirFd, movedUp);
  }

  /**
   * The revert path, one step each: the approved content (approved.ts), the revert
   * (revert.ts), then the report (report.ts): the alert, or the failed revert retried.
   */
  private actAt(f: Finding, whileStopped: boolean, fd: number, movedUp: boolean): true | 'moved' {
    const id = newAlertId();
    const [out, approved] = f.verdict.action === 'removed' ? [removeFinding(this.revertDeps, id, fd, f), null] : this.restore(f, id, fd);
    if (!out.ok) {
      if (out.restored) this.tally.reverts++;
      if (movedUp && errnoCode(out.err) === DIR_MOVED) return 'moved';
      this.report.failed(f.path, id, f.verdict, out.err, whileStopped, out.quarantine);
      return true;
    }
    if (out.leftAlone) return true; // the runtime's own write, approved and alerted already, or one under way (runtime-writes.ts)
    if (approved) this.tally.reverts++;
    if (out.owe) this.owed.push(id, baseOf(f.path), out.owe);
    try {
      if (approved) this.report.reverted(f, id, whileStopped, approved, out);
      else this.report.removed(f, id, whileStopped, out);
    } catch (err) {
      if (out.linked && !out.quarantine) this.quarantine.discard(id, baseOf(f.path));
      this.report.failed(f.path, id, f.verdict, err, whileStopped, out.quarantine);
    }
    return true;
  }

  /** The quota asked first (as for a removal), then the approved content, then the restore. */
  private restore(f: Finding, id: string, fd: number): [Outcome, Approved | null] {
    const keep = this.quota.take();
    let approved: Approved;
    try {
      approved = approvedFor({
        state: this.state, storeFd: this.storeHandle.fd, rebuild: (sha) => this.store.verify(false, sha),
        unavailable: this.unavailable, tamper: (detail) => this.raiseTamper(detail),
      }, f.path);
    } catch (err) { return [{ ok: false, err, quarantine: null, restored: false }, null]; }
    return [restoreFinding(this.revertDeps, id, fd, f, approved, keep, () => this.stillAt(fd, dirOf(f.path))), approved];
  }

  /** Durable first (docs/CONTRACT.md §Alerts), then the journal line and the callback. */
  record(alert: Alert): void { this.alerts.record(alert); }

  /** Alerts that could not be appended yet; retried before every new alert and on each rescan. */
  pendingAlerts(): number { return this.alerts.pending(); }

  raiseTamper(detail: string, path = this.store.indexLabel): void {
    this.alerts.flag('baseline-tampered', path, detail);
  }

  /** An alert that reverts nothing: tamper, a degraded watcher. */
  flag(reason: AlertReason, path: string, detail: string): void {
    this.alerts.flag(reason, path, detail);
  }

  /** Compare the store with what we hold; put back anything edited outside warden. */
  verifyStore(allBlobs: boolean, hint?: string): void {
    this.store.verify(allBlobs, hint);
  }

  /** Swap in a new warden.toml (after a sanctioned change or SIGHUP). */
  setConfig(config: WardenConfig): void {
    this.config = config;
    this.pset = protectedSet(config);
    this.cleanStamps.clear();
  }

  stop(): void {
    this.stopped = true;
    this.hints.close();
    this.safely('flushing alerts', () => this.alerts.flush());
    this.alerts.reportUnwritten();
    this.retries.stop();
    this.owed.stop();
    this.late.stop();
    this.store.close();
  }

  failingPaths(): string[] { return this.retries.paths(); }
}
