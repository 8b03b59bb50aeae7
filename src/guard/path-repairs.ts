/**
 * The root path and the protected directories put right, as the engine runs it
 * (docs/ARCHITECTURE.md, invariants 2 and 19): find what is wrong (dir-repair.ts `lookDirs`,
 * the root path's lstat), repair it (repair.ts, which returns an outcome and raises nothing),
 * hold the new root, then report (report.ts: the alert, or the failed repair retried).
 * Only warden's own directories are changed; anything else at such a path is moved aside whole.
 */
import { newAlertId } from '../store/alerts.js';
import type { BaselineState } from '../store/baseline-state.js';
import type { Store } from '../store/store.js';
import type { Verdict } from './classify.js';
import { lookDirs, standingOf, type DirFinding } from './dir-repair.js';
import { BlockedPaths, CannotMoveAside, blockedAdvice, blockedDetail } from './blocked.js';
import { adviceCommandStyle, deployedAdvice } from './classify.js';
import { openRecordedRoot } from './root-return.js';
import { lstatSync } from 'node:fs';
import type { HeldRoot } from './held-root.js';
import type { Quarantine } from './quarantine.js';
import { remakeRoot, repairDir } from './repair.js';
import type { Report } from './report.js';
import type { StoreCheck } from './store-check.js';

/** What the repairs work with (the guard's, by reference). */
export interface RepairHost {
  readonly root: string;
  readonly held: HeldRoot;
  readonly state: BaselineState;
  readonly storeHandle: Store;
  readonly store: StoreCheck;
  readonly quarantine: Quarantine;
  readonly report: Report;
  /** Foreign objects that could not be moved aside: left alone, looked at again when they change (blocked.ts). */
  readonly blocked: BlockedPaths;
  log(line: string): void;
  stopped(): boolean;
  safely<T>(what: string, fn: () => T): T | undefined;
  /** The directory at `fd` is the root now: the store check, the baseline and the clean stamps follow it. */
  adopted(fd: number): void;
  /** Every protected path below the new root put right (the sweep). */
  sweepAll(): void;
  /** The root was replaced (run.ts publishes and records the new one). */
  rootReplaced(fd: number): void;
  /** Protected directories were made anew: the directory watches follow them. */
  dirsRemade(): void;
}

export class PathRepairs {
  constructor(private readonly h: RepairHost) {}

  /**
   * At start, before anything is written: is the directory the root path named when the
   * daemon opened it the one the store recorded (device and inode)? If not (swapped while
   * warden was stopped), it is not warden's: moved aside whole like any foreign directory,
   * and the approved tree put back in a directory warden makes. Returns true when it was replaced.
   */
  rootAtStart(): boolean {
    const h = this.h;
    if (!h.held.own()) return false; // already found and being repaired
    const replaced = h.safely('checking the root record', () => h.storeHandle.rootReplaced(h.held.fd));
    if (!replaced) return false;
    h.held.disown();
    this.putRootRight(true);
    return true;
  }

  /**
   * docs/CONTRACT.md §Detection, "the promise is about paths": when the root path (or
   * anything above it) was renamed and something else now sits at the path, that thing is
   * moved aside whole and the approved tree is put back in a directory warden makes. Returns
   * true when the path had changed (the sweep of the new root has run).
   */
  rootPath(): boolean {
    const h = this.h;
    if (h.stopped()) return false;
    if (h.held.pathHolds()) { h.blocked.clear(''); return false; }
    // What stands there could not be moved aside: left alone until it changes or its retry is due.
    if (h.blocked.waiting('', standingOf(lstatSync(h.root, { throwIfNoEntry: false }) ?? null), Date.now())) return true;
    // Waiting on a foreign root since the start: the recorded root back at the path (the mount gone) is held again.
    if (!h.held.own() && this.takeBackRecordedRoot()) return true;
    for (let attempt = 0; attempt < 3; attempt++) {
      this.putRootRight();
      if (h.held.pathHolds() || h.blocked.has('')) break;
    }
    return true;
  }

  private takeBackRecordedRoot(): boolean {
    const h = this.h;
    const r = openRecordedRoot(h.root, h.storeHandle);
    if (!r) return false;
    h.blocked.clear('');
    h.held.adopt(r.fd, r.id);
    h.adopted(r.fd);
    h.report.repaired('');
    h.log(`<5>warden: the root path ${h.root} names the recorded root directory again; guarding it`);
    h.safely('verifying the store', () => h.store.verify(false));
    h.sweepAll();
    h.rootReplaced(r.fd);
    h.dirsRemade();
    return true;
  }

  /**
   * What stands at a protected directory's path (the root: '') is foreign and could not be
   * moved aside: nothing in it is touched, one alert says what it is and what to do, and the
   * path is looked at again when another object stands there or the retry is due (blocked.ts).
   */
  private blockedAt(path: string, id: string, e: CannotMoveAside, whileStopped: boolean): void {
    const h = this.h;
    const isRoot = path === '';
    if (isRoot && !h.held.own() && h.held.release()) h.adopted(-1);
    if (!h.blocked.note(path, e.seen, Date.now())) return;
    const where = isRoot ? h.root : path;
    h.report.raise({
      id, path, whileStopped, verdict: { reason: 'revert-failed', also: [isRoot ? 'root-replaced' : 'dir-replaced'], action: 'reverted' }, action: 'revert-failed',
      quarantine: null, detail: blockedDetail(where, e.seen, e.code, isRoot), advice: deployedAdvice(blockedAdvice(where, isRoot, e.code), adviceCommandStyle()),
    });
  }

  private putRootRight(whileStopped = false): void {
    const h = this.h;
    const id = newAlertId();
    const verdict: Verdict = { reason: 'root-replaced', also: [], action: 'reverted' };
    try {
      const r = remakeRoot(h.quarantine, h.root, h.held.id, h.state.index.dirs[''], id);
      if (!r) return;
      h.held.adopt(r.fd, r.made);
      h.adopted(r.fd);
      h.report.repaired('');
      h.report.raise({ id, path: '', whileStopped, verdict, action: 'reverted', quarantine: r.quarantine, detail: r.detail });
      // verify and status compare the directory at the path with this record.
      h.safely('recording the root', () => h.storeHandle.recordRoot(r.fd));
      // The embedded store follows into the new root; then every protected path is put right.
      h.safely('verifying the store', () => h.store.verify(false));
      h.sweepAll();
      h.rootReplaced(r.fd);
      h.dirsRemade();
      h.blocked.clear('');
    } catch (err) {
      if (err instanceof CannotMoveAside) this.blockedAt('', id, err, whileStopped);
      else h.report.failed('', id, verdict, err, whileStopped);
    }
  }

  /**
   * Repair protected directories (missing, replaced by another directory, a link or a file,
   * wrong mode/owner). Returns how many were repaired.
   */
  dirs(whileStopped: boolean): number {
    const h = this.h;
    let n = 0;
    for (let pass = 0; pass < 4; pass++) {
      const findings = lookDirs(h.held.fd, h.state, h.held.dirIds);
      h.blocked.keepOnly(findings.filter((f) => f.foreign).map((f) => f.path));
      const todo = findings.filter((f) => !(f.foreign && h.blocked.waiting(f.path, f.seen, Date.now())));
      if (todo.length === 0) break;
      for (const f of todo) { this.repairOne(f, whileStopped); n++; }
    }
    if (n) h.dirsRemade();
    return n;
  }

  private repairOne(f: DirFinding, whileStopped: boolean): void {
    const h = this.h;
    const want = h.state.index.dirs[f.path];
    if (!want) return;
    const id = newAlertId();
    const verdict: Verdict = { reason: f.reason, also: f.also, action: 'reverted' };
    const r = repairDir(h.held.fd, h.root, h.quarantine, h.held.dirIds, f, want, id);
    if (!r) return;
    try {
      if (!r.ok) throw r.err;
      h.blocked.clear(f.path);
      h.report.repaired(f.path);
      h.report.raise({ id, path: f.path, whileStopped, verdict, action: 'reverted', quarantine: r.quarantine, detail: r.detail });
    } catch (err) {
      if (err instanceof CannotMoveAside) this.blockedAt(f.path, id, err, whileStopped);
      else h.report.failed(f.path, id, verdict, err, whileStopped);
    }
  }
}
