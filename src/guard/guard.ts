/**
 * The guard: turns hints (watcher events, rescans) into checks, and checks into reverts.
 *
 *   event/rescan → inspect (lstat + bounded read + hash) → classify → quarantine →
 *   restore (temp + fsync + rename + dir fsync) → alert (append + fsync) → journal line
 *
 * Everything on that path is synchronous: a check never interleaves with another check
 * or with a sanctioned change, so "one writer" holds inside the process by construction.
 */
import { fstatSync, lstatSync } from 'node:fs';
import { errnoCode } from '../common/errors.js';
import type { WardenConfig } from '../config/warden-config.js';
import { DIR_MOVED, lstatAt, safeClose, withDir } from '../fsx/beneath.js';
import type { Alert, AlertReason } from '../store/alert-types.js';
import { newAlertId } from '../store/alerts.js';
import type { BaselineState } from '../store/baseline-state.js';
import type { Store } from '../store/store.js';
import { EMBEDDED_STORE } from '../store/location.js';
import type { Verdict } from './classify.js';
import { adviceCommandStyle, deployedAdvice } from './classify.js';
import { buildAlert, credentialVerdict, facts, rejectedGrants, relabelEmptied, type Raise, type WriterSource } from './alert-build.js';
import { completeDirs } from './dirs-on-the-way.js';
import { DirCache, baseOf, candidatePaths, dirOf, inspectFileAt, type Finding } from './inspect.js';
import { lookDirs, standingOf, type DirFinding } from './dir-repair.js';
import { BlockedPaths, CannotMoveAside, blockedAdvice, blockedDetail } from './blocked.js';
import { openRecordedRoot } from './root-return.js';
import type { Ident } from './root-path.js';
import { remakeRoot, repairDir } from './repair.js';
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

/** The identity the guard gives a root it found foreign at start: no directory has it. */
const FOREIGN: Ident = { dev: -1, ino: -1 };

export type { GuardOptions } from './guard-options.js';
export type { WriterSource } from './alert-build.js';

export class Guard {
  readonly root: string;
  /** The directory at the root path. Replaced (never silently) when the path is made to name another (docs/CONTRACT.md §Detection). */
  rootFd: number;
  /** Device and inode of the directory rootFd holds. */
  private rootId: Ident;
  /**
   * The protected directories below the root that warden made or verified itself, by path:
   * their device and inode (docs/ARCHITECTURE.md, invariant 19). Any other object at such
   * a path is foreign: moved aside whole, never changed.
   */
  private readonly dirIds = new Map<string, Ident>();
  /** Foreign objects at protected directory paths that could not be moved aside: left alone, watched (blocked.ts). */
  private readonly blocked = new BlockedPaths();
  readonly storeHandle: Store;
  config: WardenConfig;
  pset: ProtectedSet;
  readonly state: BaselineState;
  private readonly log: (line: string) => void;
  private readonly onDirRepaired: () => void;
  private readonly onRootReplaced: (fd: number) => void;
  private readonly writers: WriterSource | null;
  private readonly alerts: AlertSink;
  private readonly quarantine: Quarantine;
  /** Rejected inodes held open across file systems: their late writes are copied into quarantine. */
  private readonly late: LateWrites;
  private readonly quota = new QuarantineQuota();
  /** For sweep.ts: new files found by a rescan are worked off after the waiting reverts (null: inline). */
  readonly defer: ((rel: string) => void) | null;
  private readonly retries = new RetryBook();
  private readonly store: StoreCheck;
  private readonly revertDeps: RevertDeps;
  /** Rejected bytes not yet in quarantine, alerts not yet appended (a full disk). */
  private readonly owed: OwedWrites;
  /** Stat stamps of files verified clean by hash: lets the backstop rescan skip unchanged files. */
  private readonly cleanStamps = new CleanStamps((rel) => this.onCleanStamp(rel));
  /** Told when a clean stamp changes (null: all forgotten): the stamp poll watches the new inode. */
  onCleanStamp: (rel: string | null) => void = () => {};
  /**
   * Does the stamp poll vouch for `rel` (open-watch.ts: its inode watched, on a local file
   * system, since before any writer still alive, nobody has it open, its inode the clean
   * stamp's)? Then no write, truncate, chmod, chown or utime of it can happen without an
   * event, and the ordinary backstop rescan skips its lstat; every FULL_SWEEP_EVERY-th rescan
   * looks at every file whatever the watch says (idle CPU).
   */
  vouched: (rel: string) => boolean = () => false;
  /** Called before each rescan's sweep (the stamp poll reads its watches' events first). */
  beforeRescan: () => void = () => {};
  private readonly sweeper = new Sweeper(this);
  /** Files the last rescan skipped because the stamp poll vouched for them (for the bench and tests). */
  get lastRescanVouched(): number { return this.sweeper.lastRescanVouched; }
  private stopped = false;
  /** Paths whose revert found no intact approved content (the store blob missing or altered). */
  readonly unavailable = new Set<string>();
  private readonly tally = { checks: 0, reverts: 0 };
  lastRescanAt = 0;

  constructor(opts: GuardOptions) {
    this.root = opts.root;
    this.rootFd = opts.rootFd;
    const rs = fstatSync(opts.rootFd);
    this.rootId = { dev: rs.dev, ino: rs.ino };
    this.storeHandle = opts.store;
    this.config = opts.config;
    this.pset = protectedSet(opts.config);
    this.state = opts.state;
    // A baseline recorded before the directories on the way to a file were (dirs-on-the-way.ts):
    // they are approved as they are now, until the next sanctioned change records them.
    completeDirs(opts.rootFd, this.state, this.pset);
    this.log = opts.log ?? ((l) => process.stderr.write(l + '\n'));
    this.onDirRepaired = opts.onDirRepaired ?? (() => {});
    this.onRootReplaced = opts.onRootReplaced ?? (() => {});
    this.writers = opts.writers ?? null;
    // A layout entry found damaged on the way (quarantine/ planted as a link, a directory at
    // alerts.jsonl) is repaired at once, then the operation is tried again.
    const repair = (name: string) => this.store.verifyLayout(name).length > 0;
    this.alerts = new AlertSink(opts.store, opts.journal ?? this.log, opts.onAlert ?? (() => {}), repair);
    this.defer = opts.defer ?? null;
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
    };
    this.store = new StoreCheck(opts.store, opts.state, (detail, path) => this.raiseTamper(detail, path), this.log, opts.rootFd, opts.blobStamps ?? null);
  }

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

  /**
   * At start, before anything is written: is the directory the root path named when the
   * daemon opened it the one the store recorded (device and inode)? If not (swapped while
   * warden was stopped), it is not warden's: moved aside whole like any foreign directory,
   * and the approved tree put back in a directory warden makes (docs/ARCHITECTURE.md,
   * invariant 19). Returns true when it was replaced.
   */
  checkRootAtStart(): boolean {
    if (this.rootId.ino === FOREIGN.ino) return false; // already found and being repaired
    const replaced = this.safely('checking the root record', () => this.storeHandle.rootReplaced(this.rootFd));
    if (!replaced) return false;
    this.rootId = FOREIGN;
    this.putRootRight(true);
    return true;
  }

  /** Is the directory the guard holds warden's own root (not one found foreign at start)? */
  holdsOwnRoot(): boolean {
    return this.rootId.ino !== FOREIGN.ino;
  }

  /** Remove our own temp files that a failed restore left behind. */
  sweepTemps(): void {
    sweepTemps(this.rootFd, Object.keys(this.state.index.dirs));
  }

  /** The backstop rescan: directories, every candidate path, and the store. */
  rescan(): number {
    this.safely('flushing alerts', () => this.alerts.flush());
    if (this.safely('checking the root path', () => this.checkRootPath()) === true) { this.lastRescanAt = Date.now(); return 1; }
    this.safely('sweeping temp files', () => this.sweepTemps());
    this.sweeper.rescans++;
    this.sweeper.lastRescanVouched = 0;
    this.safely('reading the inode watches', () => this.beforeRescan());
    const n = this.sweep('rescan', false);
    this.safely('verifying the store', () => this.store.verify(false, undefined, this.sweeper.rescans));
    this.lastRescanAt = Date.now();
    return n;
  }

  private sweep(cause: SweepCause, full: boolean): number {
    if (!this.holdsOwnRoot()) return 0;
    return this.sweeper.sweep(cause, full);
  }

  /** Is the directory `fd` holds still the one at `dir` below the root (same device and inode)? */
  /** For sweep.ts and the revert. */
  stillAt(fd: number, dir: string): boolean {
    if (dir === '') return true;
    return withDir(this.rootFd, dir, (now) => {
      const a = fstatSync(fd), b = fstatSync(now);
      return a.dev === b.dev && a.ino === b.ino;
    }, () => false);
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

  /** A hint that something at `rel` (relative to the root) may have changed. */
  onPathEvent(rel: string, isDirEvent: boolean): void {
    if (this.stopped) return;
    this.safely(`checking ${rel}`, () => this.onPathEventUnsafe(rel, isDirEvent));
  }

  private onPathEventUnsafe(rel: string, isDirEvent: boolean): void {
    // The root itself (or its name in its parent): first, is the path still the directory we hold?
    if ((rel === '' || !this.holdsOwnRoot()) && this.checkRootPath()) return;
    if (rel === EMBEDDED_STORE || rel.startsWith(`${EMBEDDED_STORE}/`)) {
      // The embedded store's path, seen from the root: a store event (or a swap of the path).
      if (this.storeHandle.mode === 'embedded') this.store.onEvent(rel === EMBEDDED_STORE ? '' : rel.slice(EMBEDDED_STORE.length + 1));
      return;
    }
    if (isDirEvent || rel === '' || Object.hasOwn(this.state.index.dirs, rel) || this.pset.isProtectedDir(rel)) {
      this.fixDirs(false);
      const prefix = rel === '' ? '' : rel + '/';
      for (const p of candidatePaths(this.rootFd, this.state, this.pset)) if (p.startsWith(prefix)) this.check(p, false);
      return;
    }
    // A directory renamed or made below a `**` glob's base: what it brings along raised no
    // event of its own (its watch is armed only now), so every match below it is checked now.
    this.check(rel, false);
    if (this.pset.inDeepGlob(rel) && withDir(this.rootFd, dirOf(rel), (fd) => lstatAt(fd, baseOf(rel))?.isDirectory() ?? false, () => false)) {
      for (const p of candidatePaths(this.rootFd, this.state, this.pset)) if (p.startsWith(`${rel}/`)) this.check(p, false);
    }
  }

  /** Inspect one path and put it right. Returns true when something was done. */
  check(rel: string, whileStopped: boolean, dirs?: DirCache, again = true): boolean {
    this.tally.checks++;
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

  /**
   * Is `fd` (opened at `dir`, an approved directory) the very directory warden made or
   * verified there (docs/ARCHITECTURE.md, invariant 19)? Not approved, or the root: yes.
   */
  private dirStillOurs(dir: string, fd: number): boolean {
    if (dir === '' || !Object.hasOwn(this.state.index.dirs, dir)) return true;
    const id = this.dirIds.get(dir);
    if (!id) return false;
    const st = fstatSync(fd);
    return st.dev === id.dev && st.ino === id.ino;
  }

  /**
   * Write what a full disk kept back (owed.ts), at most one try a second: alerts that could
   * not be appended first, then rejected bytes owed to quarantine.
   */
  keepOwed(now = Date.now()): void {
    this.owed.keep(now);
  }

  /** The stamp recorded when `rel` was last verified clean by hash (the stamp poll compares with it). */
  cleanStamp(rel: string): string | undefined {
    return this.cleanStamps.get(rel);
  }

  /** Does the root path still resolve to the directory we hold (same device and inode, a real directory)? */
  rootPathHolds(): boolean {
    const st = lstatSync(this.root, { throwIfNoEntry: false });
    return st !== undefined && st.isDirectory() && st.dev === this.rootId.dev && st.ino === this.rootId.ino;
  }

  /**
   * docs/CONTRACT.md §Detection, "the promise is about paths": when the root path (or anything above it) was
   * renamed and something else now sits at the path, that thing is moved aside whole and
   * the approved tree is put back in a directory warden makes (docs/ARCHITECTURE.md,
   * invariants 2 and 19). Returns true when the path had changed (the sweep of the new root
   * has run).
   */
  checkRootPath(): boolean {
    if (this.stopped) return false;
    if (this.rootPathHolds()) { this.blocked.clear(''); return false; }
    // What stands there could not be moved aside: left alone until it changes or its retry is due.
    if (this.blocked.waiting('', standingOf(lstatSync(this.root, { throwIfNoEntry: false }) ?? null), Date.now())) return true;
    // Waiting on a foreign root since the start: the recorded root back at the path (the mount gone) is held again.
    if (!this.holdsOwnRoot() && this.takeBackRecordedRoot()) return true;
    for (let attempt = 0; attempt < 3; attempt++) {
      this.putRootRight();
      if (this.rootPathHolds() || this.blocked.has('')) break;
    }
    return true;
  }

  /** Is the guard guarding its root (false: waiting on a foreign object at the root path it could not move aside)? */
  guarding(): boolean {
    return this.holdsOwnRoot() && !this.blocked.has('');
  }

  private takeBackRecordedRoot(): boolean {
    const r = openRecordedRoot(this.root, this.storeHandle);
    if (!r) return false;
    this.blocked.clear('');
    this.adoptRoot(r.fd, r.id);
    this.log(`<5>warden: the root path ${this.root} names the recorded root directory again; guarding it`);
    this.safely('verifying the store', () => this.store.verify(false));
    this.sweep('root', true);
    this.onRootReplaced(r.fd);
    this.onDirRepaired();
    return true;
  }

  /**
   * What stands at a protected directory's path (the root: '') is foreign and could not be
   * moved aside: nothing in it is touched, one alert says what it is and what to do, and the
   * path is looked at again when another object stands there or the retry is due (blocked.ts).
   */
  private blockedAt(path: string, id: string, e: CannotMoveAside, whileStopped: boolean): void {
    const isRoot = path === '';
    if (isRoot && !this.holdsOwnRoot()) this.releaseForeignRoot();
    if (!this.blocked.note(path, e.seen, Date.now())) return;
    const where = isRoot ? this.root : path;
    this.raise({
      id, path, whileStopped, verdict: { reason: 'revert-failed', also: [isRoot ? 'root-replaced' : 'dir-replaced'], action: 'reverted' }, action: 'revert-failed',
      quarantine: null, detail: blockedDetail(where, e.seen, e.code, isRoot), advice: deployedAdvice(blockedAdvice(where, isRoot, e.code), adviceCommandStyle()),
    });
  }

  /**
   * The guard holds a descriptor of the foreign directory it found at the root path at start:
   * closed, so that it pins nothing (a file system mounted there can be unmounted); the
   * guard holds no root (-1) until it takes one back. Nothing acts through it meanwhile.
   */
  private releaseForeignRoot(): void {
    if (this.rootFd < 0) return;
    const old = this.rootFd;
    this.rootFd = -1;
    this.store.rootFd = -1;
    this.state.publishFor(-1);
    this.cleanStamps.clear();
    safeClose(old);
  }

  private putRootRight(whileStopped = false): void {
    const id = newAlertId();
    const verdict: Verdict = { reason: 'root-replaced', also: [], action: 'reverted' };
    try {
      const r = remakeRoot(this.quarantine, this.root, this.rootId, this.state.index.dirs[''], id);
      if (!r) return;
      this.adoptRoot(r.fd, r.made);
      this.raise({ id, path: '', whileStopped, verdict, action: 'reverted', quarantine: r.quarantine, detail: r.detail });
      // verify and status compare the directory at the path with this record.
      this.safely('recording the root', () => this.storeHandle.recordRoot(r.fd));
      // The embedded store follows into the new root; then every protected path is put right.
      this.safely('verifying the store', () => this.store.verify(false));
      this.sweep('root', true);
      this.onRootReplaced(r.fd);
      this.onDirRepaired();
      this.blocked.clear('');
    } catch (err) {
      if (err instanceof CannotMoveAside) this.blockedAt('', id, err, whileStopped);
      else this.failed('', id, verdict, err, whileStopped);
    }
  }

  /** Hold the directory warden made at the root path (`fd`) instead of the one it held. */
  private adoptRoot(fd: number, made: Ident): void {
    const old = this.rootFd;
    this.rootFd = fd;
    this.rootId = made;
    this.dirIds.clear();
    this.store.rootFd = fd;
    this.state.publishFor(fd);
    this.cleanStamps.clear();
    if (old >= 0) safeClose(old);
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

  /**
   * Repair protected directories (missing, replaced by another directory, a link or a file,
   * wrong mode/owner). Only warden's own directories are changed; anything else at the path
   * is moved aside whole (docs/ARCHITECTURE.md, invariant 19).
   */
  fixDirs(whileStopped: boolean): number {
    let n = 0;
    for (let pass = 0; pass < 4; pass++) {
      const findings = lookDirs(this.rootFd, this.state, this.dirIds);
      this.blocked.keepOnly(findings.filter((f) => f.foreign).map((f) => f.path));
      const todo = findings.filter((f) => !(f.foreign && this.blocked.waiting(f.path, f.seen, Date.now())));
      if (todo.length === 0) break;
      for (const f of todo) { this.actDir(f, whileStopped); n++; }
    }
    if (n) this.onDirRepaired();
    return n;
  }

  private actDir(f: DirFinding, whileStopped: boolean): void {
    const want = this.state.index.dirs[f.path];
    if (!want) return;
    const id = newAlertId();
    const verdict: Verdict = { reason: f.reason, also: f.also, action: 'reverted' };
    const r = repairDir(this.rootFd, this.root, this.quarantine, this.dirIds, f, want, id);
    if (!r) return;
    try {
      if (!r.ok) throw r.err;
      this.blocked.clear(f.path);
      this.raise({ id, path: f.path, whileStopped, verdict, action: 'reverted', quarantine: r.quarantine, detail: r.detail });
    } catch (err) {
      if (err instanceof CannotMoveAside) this.blockedAt(f.path, id, err, whileStopped);
      else this.failed(f.path, id, verdict, err, whileStopped);
    }
  }

  /** Put one finding right. `dirFd`: the file's directory, already open (saves a walk on the revert path). */
  /**
   * `movedUp`: when the directory leaves its place in the root before the rename, say so
   * ('moved', nothing written, nothing alerted) for the caller to look again from the root,
   * rather than alert a failed revert.
   */
  act(f: Finding, whileStopped: boolean, dirFd?: number, movedUp = false): true | 'moved' {
    if (this.blocked.covers(f.path)) return true;
    if (dirFd === undefined) return withDir(this.rootFd, dirOf(f.path), (fd) => this.actAt(f, whileStopped, fd, movedUp), () => true);
    return this.actAt(f, whileStopped, dirFd, movedUp);
  }

  /**
   * The revert path, one step each: the approved content (the store), the revert (revert.ts),
   * then the alert (alert-build.ts) or the failed revert retried with backoff.
   */
  private actAt(f: Finding, whileStopped: boolean, fd: number, movedUp: boolean): true | 'moved' {
    const id = newAlertId();
    const [out, approved] = f.verdict.action === 'removed' ? [removeFinding(this.revertDeps, id, fd, f), null] : this.restore(f, id, fd);
    if (!out.ok) {
      if (out.restored) this.tally.reverts++;
      if (movedUp && errnoCode(out.err) === DIR_MOVED) return 'moved';
      this.failed(f.path, id, f.verdict, out.err, whileStopped, out.quarantine);
      return true;
    }
    if (approved) this.tally.reverts++;
    if (out.owe) this.owed.push(id, baseOf(f.path), out.owe);
    try {
      if (approved) this.reverted(f, id, whileStopped, approved, out);
      else this.removed(f, id, whileStopped, out);
    } catch (err) {
      if (out.linked && !out.quarantine) this.quarantine.discard(id, baseOf(f.path));
      this.failed(f.path, id, f.verdict, err, whileStopped, out.quarantine);
    }
    return true;
  }

  /** The quota asked first (as for a removal), then the approved content, then the restore. */
  private restore(f: Finding, id: string, fd: number): [Outcome, Approved | null] {
    const keep = this.quota.take();
    let approved: Approved;
    try { approved = this.approvedFor(f.path); } catch (err) { return [{ ok: false, err, quarantine: null, restored: false }, null]; }
    return [restoreFinding(this.revertDeps, id, fd, f, approved, keep, () => this.stillAt(fd, dirOf(f.path))), approved];
  }

  /**
   * Approved bytes are not held in memory: read the blob, used only if it hashes to the
   * authenticated sha256. Missing or altered: the store check rebuilds it from another live
   * file that still has that content, if any; else the revert fails closed (tamper alert, throws).
   */
  private approvedFor(path: string): Approved {
    const entry = this.state.entry(path);
    let bytes = this.state.bytesOf(this.storeHandle.fd, path);
    if (entry && !bytes) { this.store.verify(false, entry.sha256); bytes = this.state.bytesOf(this.storeHandle.fd, path); }
    if (!entry || !bytes) {
      this.unavailable.add(path);
      this.raiseTamper(`the store copy of the approved content of ${path} is missing or altered, and no live file has it; ${path} cannot be reverted`);
      throw Object.assign(new Error('approved content unavailable'), { code: 'EBADBASELINE' });
    }
    this.unavailable.delete(path);
    return { entry, bytes };
  }

  private removed(f: Finding, id: string, whileStopped: boolean, out: Outcome & { ok: true }): void {
    const grants = rejectedGrants(this.root, f.path, f.kind, null, f.obs.bytes);
    this.raise({ id, path: f.path, whileStopped, verdict: f.verdict, action: 'removed', quarantine: out.quarantine, after: facts(f.obs), detail: out.keep ? undefined : this.quota.note, seen: f.obs, notKept: !out.keep, grants });
  }

  private reverted(f: Finding, id: string, whileStopped: boolean, approved: Approved, out: Outcome & { ok: true }): void {
    const { verdict, obs } = f;
    const name = baseOf(f.path);
    // The alert tells what the rejected file held (and, for credentials, which keys those
    // bytes changed, not the keys an empty file would drop).
    const heldSize = verdict.reason === 'emptied' && out.linked && out.quarantine ? this.quarantine.sizeOf(id, name) : null;
    const { verdict: relabelled, held } = relabelEmptied(verdict, heldSize);
    const rejected = held ? (this.quarantine.readBack(id, name, this.maxBytes) ?? obs.bytes) : obs.bytes;
    const { verdict: v, changes } = f.kind === 'credentials' ? credentialVerdict(verdict, relabelled, approved.bytes, rejected, this.config, f.path) : { verdict: relabelled, changes: undefined };
    if (this.retries.clear(f.path)) this.sweepTemps();
    const notKept = obs.type === 'file' && !out.keep;
    const { entry } = approved;
    this.raise({
      id, path: f.path, whileStopped, verdict: v, action: 'reverted', quarantine: out.quarantine,
      before: { sha256: entry.sha256, size: entry.size, mode: entry.mode }, after: facts(obs), credentialChanges: changes,
      grants: rejectedGrants(this.root, f.path, f.kind, approved.bytes, rejected),
      detail: [out.fullNote, notKept ? this.quota.note : held].filter(Boolean).join('; ') || undefined, seen: obs, notKept,
    });
    this.markClean(f.path);
  }

  /** A restore that could not finish: the file is left as it was; alert once, retry with backoff. */
  private failed(path: string, id: string, verdict: Verdict, err: unknown, whileStopped: boolean, quarantine: string | null = null): void {
    const code = errnoCode(err) ?? 'EIO';
    this.retries.failed(path,
      () => this.raise({ id, path, whileStopped, verdict: { reason: 'revert-failed', also: [verdict.reason], action: 'reverted' }, action: 'revert-failed', quarantine, detail: `restore failed: ${code}; retrying with backoff` }),
      () => this.safely(`retrying ${path}`, () => {
        if (verdict.reason === 'root-replaced') this.checkRootPath();
        else if (Object.hasOwn(this.state.index.dirs, path)) this.fixDirs(false);
        else this.check(path, false);
      }));
  }

  private raise(r: Raise): Alert {
    const entry = this.state.entry(r.path);
    const kind = entry?.kind ?? (Object.hasOwn(this.state.index.dirs, r.path) ? 'directory' : this.pset.kindOf(r.path));
    const alert = buildAlert(r, kind, this.writers);
    this.alerts.record(alert, r.notKept ?? false);
    return alert;
  }

  /** Durable first (docs/CONTRACT.md §Alerts), then the journal line and the callback. */
  record(alert: Alert): void {
    this.alerts.record(alert);
  }

  /** Alerts that could not be appended yet; retried before every new alert and on each rescan. */
  pendingAlerts(): number {
    return this.alerts.pending();
  }

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
    this.safely('flushing alerts', () => this.alerts.flush());
    this.alerts.reportUnwritten();
    this.retries.stop();
    this.late.stop();
    this.store.close();
  }

  failingPaths(): string[] {
    return this.retries.paths();
  }
}
