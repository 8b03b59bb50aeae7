/**
 * The guard: turns hints (watcher events, rescans) into checks, and checks into reverts.
 *
 *   event/rescan → inspect (lstat + bounded read + hash) → classify → quarantine →
 *   restore (temp + fsync + rename + dir fsync) → alert (append + fsync) → journal line
 *
 * Everything on that path is synchronous: a check never interleaves with another check
 * or with a sanctioned change, so "one writer" holds inside the process by construction.
 */
import { fsyncSync, readdirSync } from 'node:fs';
import { errnoCode } from '../common/errors.js';
import type { WardenConfig } from '../config/warden-config.js';
import {
  ensureDirBeneath, fixDirAt, linkAt, lstatAt, makeDirAt, moveAt, readSmallAt, replaceFileAt,
  safeClose, walkDir, createFileAt, at, unlinkAt,
} from '../fsx/beneath.js';
import type { Alert, AlertReason, FileFacts } from '../store/alert-types.js';
import { appendAlert, newAlertId } from '../store/alerts.js';
import { blobDir, sha256Hex } from '../store/baseline.js';
import { BASELINE_DIR, INDEX_NAME, QUARANTINE_DIR } from '../store/layout.js';
import type { BaselineState } from './baseline-state.js';
import { adviceFor, type Observation, type Verdict } from './classify.js';
import { diffCredentials } from '../credentials/rules.js';
import { DirCache, baseOf, candidatePaths, dirOf, inspectDirs, inspectFileAt, type Finding } from './inspect.js';
import { statStamp } from './observe.js';
import { protectedSet, type ProtectedSet } from '../config/protected-set.js';

export interface GuardOptions {
  root: string;
  rootFd: number;
  config: WardenConfig;
  state: BaselineState;
  /** Called once per alert after it is durable in alerts.jsonl. */
  onAlert?: (alert: Alert) => void;
  /** Diagnostics that are not alerts. */
  log?: (line: string) => void;
  /** After a protected directory was recreated: the watcher re-arms it. */
  onDirRepaired?: () => void;
}

interface Failure { attempts: number; timer: NodeJS.Timeout | null; alerted: boolean }

const RETRY_MIN_MS = 250;
/** The temp names replaceFileAt creates (".<name>.warden-<pid>-<hex>.tmp"). */
const TEMP_NAME = /^\..+\.warden-\d+-[0-9a-f]{8}\.tmp$/;
const RETRY_MAX_MS = 60_000;

export class Guard {
  readonly root: string;
  readonly rootFd: number;
  config: WardenConfig;
  pset: ProtectedSet;
  readonly state: BaselineState;
  private readonly onAlert: (a: Alert) => void;
  private readonly log: (line: string) => void;
  private readonly onDirRepaired: () => void;
  private readonly failures = new Map<string, Failure>();
  /** Alerts not yet durable (alerts.jsonl unwritable): retried, never dropped. */
  private readonly unwritten: Alert[] = [];
  /** Stat stamps of files verified clean by hash: lets the backstop rescan skip unchanged files. */
  private readonly cleanStamps = new Map<string, string>();
  /** Stat stamps of store blobs last verified by hash. */
  private readonly blobStamps = new Map<string, string>();
  private stopped = false;
  counters = { checks: 0, reverts: 0, alerts: 0 };
  lastRescanAt = 0;

  constructor(opts: GuardOptions) {
    this.root = opts.root;
    this.rootFd = opts.rootFd;
    this.config = opts.config;
    this.pset = protectedSet(opts.config);
    this.state = opts.state;
    this.onAlert = opts.onAlert ?? (() => {});
    this.log = opts.log ?? ((l) => process.stderr.write(l + '\n'));
    this.onDirRepaired = opts.onDirRepaired ?? (() => {});
  }

  get maxBytes(): number { return this.config.max_bytes; }

  /** Verify everything; what changed while warden was not running is reverted with that reason. */
  startupVerify(): number {
    this.sweepTemps();
    return this.sweep('startup', true);
  }

  /**
   * Remove our own temp files left behind when a restore failed and its cleanup failed
   * too (e.g. the directory became immutable between create and rename). Everything runs
   * synchronously, so no restore is in flight while this runs.
   */
  sweepTemps(): void {
    for (const dir of Object.keys(this.state.index.dirs)) {
      const w = walkDir(this.rootFd, dir);
      if (!w.ok) { safeClose(w.parentFd); continue; }
      try {
        for (const name of readdirSync(at(w.fd, '.'))) {
          if (!TEMP_NAME.test(name)) continue;
          try { unlinkAt(w.fd, name); } catch { /* still stuck: next time */ }
        }
      } catch { /* unreadable: next time */ } finally { safeClose(w.fd); }
    }
  }

  /** The backstop rescan: directories, every candidate path, and the store. */
  rescan(): number {
    this.safely('flushing alerts', () => this.flushUnwritten());
    this.safely('sweeping temp files', () => this.sweepTemps());
    const n = this.sweep('rescan', false);
    this.safely('verifying the store', () => this.verifyStore(false));
    this.lastRescanAt = Date.now();
    return n;
  }

  private sweep(cause: 'startup' | 'rescan', full: boolean): number {
    let n = this.safely('repairing directories', () => this.fixDirs(cause === 'startup')) ?? 0;
    const dirs = new DirCache(this.rootFd);
    try {
      for (const rel of this.safely('listing protected paths', () => candidatePaths(this.rootFd, this.state, this.pset)) ?? []) {
        if (this.safely(`checking ${rel}`, () => (!full && this.unchangedSinceClean(rel, dirs)) ? false : this.check(rel, cause === 'startup', dirs))) n++;
      }
    } finally {
      dirs.close();
    }
    return n;
  }

  private unchangedSinceClean(rel: string, dirs: DirCache): boolean {
    const stamp = this.cleanStamps.get(rel);
    if (!stamp) return false;
    const fd = dirs.get(dirOf(rel));
    if (fd === null) return false;
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

  /** A hint that something at `rel` (relative to the root) may have changed. */
  onPathEvent(rel: string, isDirEvent: boolean): void {
    if (this.stopped) return;
    this.safely(`checking ${rel}`, () => this.onPathEventUnsafe(rel, isDirEvent));
  }

  private onPathEventUnsafe(rel: string, isDirEvent: boolean): void {
    if (rel === 'snapshots' || rel.startsWith('snapshots/')) { this.onStoreEvent(rel); return; }
    if (isDirEvent || rel === '' || Object.hasOwn(this.state.index.dirs, rel) || this.pset.isProtectedDir(rel)) {
      this.fixDirs(false);
      const prefix = rel === '' ? '' : rel + '/';
      for (const p of candidatePaths(this.rootFd, this.state, this.pset)) if (p.startsWith(prefix)) this.check(p, false);
      return;
    }
    this.check(rel, false);
  }

  /** Inspect one path and put it right. Returns true when something was done. */
  check(rel: string, whileStopped: boolean, dirs?: DirCache): boolean {
    this.counters.checks++;
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
      let lastStamp: string | undefined;
      const finding = inspectFileAt(fd, this.state, this.pset, rel, this.maxBytes, (o) => { lastStamp = o.stamp; });
      if (!finding) { this.markClean(rel, fd, lastStamp); return false; }
      this.act(finding, whileStopped, fd);
      return true;
    } finally {
      if (!dirs) own.close();
    }
  }

  private markClean(rel: string, dirFd?: number, stamp?: string): void {
    const f = this.failures.get(rel);
    if (f) { if (f.timer) clearTimeout(f.timer); this.failures.delete(rel); }
    if (!this.state.entry(rel)) { this.cleanStamps.delete(rel); return; }
    if (stamp) { this.cleanStamps.set(rel, stamp); return; }
    let fd = dirFd;
    if (fd === undefined) {
      const w = walkDir(this.rootFd, dirOf(rel));
      if (!w.ok) { safeClose(w.parentFd); return; }
      fd = w.fd;
    }
    try {
      const st = lstatAt(fd, baseOf(rel));
      if (st?.isFile()) this.cleanStamps.set(rel, statStamp(st));
    } finally { if (dirFd === undefined) safeClose(fd); }
  }

  /** Repair protected directories (missing, replaced by a link or a file, wrong mode/owner). */
  fixDirs(whileStopped: boolean): number {
    let n = 0;
    for (let pass = 0; pass < 4; pass++) {
      const findings = inspectDirs(this.rootFd, this.state);
      if (findings.length === 0) break;
      for (const f of findings) { this.actDir(f, whileStopped); n++; }
    }
    if (n) this.onDirRepaired();
    return n;
  }

  private actDir(f: Finding, whileStopped: boolean): void {
    const want = this.state.index.dirs[f.path];
    if (!want) return;
    const id = newAlertId();
    let quarantine: string | null = null;
    const w = walkDir(this.rootFd, dirOf(f.path));
    if (!w.ok) { safeClose(w.parentFd); return; }
    try {
      const name = baseOf(f.path);
      const opts = { mode: want.mode, uid: want.uid, gid: want.gid };
      if (f.verdict.reason === 'mode' || f.verdict.reason === 'owner') {
        fixDirAt(w.fd, name, opts);
      } else {
        if (f.obs.type !== 'absent') quarantine = this.moveToQuarantine(id, w.fd, name);
        makeDirAt(w.fd, name, opts);
      }
      this.raise(id, f.path, whileStopped, f.verdict, 'reverted', quarantine, null, null);
    } catch (err) {
      this.failed(f.path, id, f.verdict, err, whileStopped);
    } finally {
      safeClose(w.fd);
    }
  }

  /** Put one finding right. `dirFd`: the file's directory, already open (saves a walk on the revert path). */
  private act(f: Finding, whileStopped: boolean, dirFd?: number): void {
    const id = newAlertId();
    const { verdict, obs } = f;
    let fd = dirFd;
    if (fd === undefined) {
      const w = walkDir(this.rootFd, dirOf(f.path));
      if (!w.ok) { safeClose(w.parentFd); return; }
      fd = w.fd;
    }
    const w = { fd };
    const name = baseOf(f.path);
    let quarantine: string | null = null;
    let movedAside = false;
    try {
      if (verdict.action === 'removed') {
        quarantine = this.moveToQuarantine(id, w.fd, name);
        fsyncQuiet(w.fd);
        this.raise(id, f.path, whileStopped, verdict, 'removed', quarantine, null, facts(obs));
        return;
      }
      const entry = this.state.entry(f.path);
      const approved = this.state.bytesOf(this.rootFd, f.path);
      if (!entry || !approved) {
        this.raiseTamper(`the approved content of ${f.path} is not in memory and the store copy is missing or altered`);
        throw Object.assign(new Error('approved content unavailable'), { code: 'EBADBASELINE' });
      }
      // Things that cannot be replaced by rename (dir) or must be kept as they are
      // (link, FIFO, socket, device) are moved aside first; too-large files are linked.
      if (obs.type !== 'file' && obs.type !== 'absent') { quarantine = this.moveToQuarantine(id, w.fd, name); movedAside = true; }
      else if (obs.type === 'file' && obs.bytes === null) ({ path: quarantine, moved: movedAside } = this.linkOrMoveToQuarantine(id, w.fd, name));
      try {
        replaceFileAt(w.fd, name, approved, { mode: entry.mode, uid: entry.uid, gid: entry.gid });
      } catch (err) {
        // SPEC §5: never move a file aside and then leave its path missing.
        if (movedAside && this.putBack(id, w.fd, name)) quarantine = null;
        throw err;
      }
      this.counters.reverts++;
      // Rejected content we already hold is written after the restore, to keep the revert short.
      if (obs.type === 'file' && obs.bytes) quarantine = this.writeQuarantine(id, name, obs.bytes);
      let v = verdict;
      let changes;
      if (f.kind === 'credentials' && obs.bytes && (verdict.reason === 'content' || verdict.reason === 'emptied')) {
        const d = diffCredentials(approved.toString('utf8'), obs.bytes.toString('utf8'), this.config, f.path);
        changes = d.changes;
        if (d.halfApplied) v = { ...verdict, reason: 'half-applied', also: [verdict.reason, ...verdict.also] };
      }
      const failure = this.failures.get(f.path);
      if (failure) { if (failure.timer) clearTimeout(failure.timer); this.failures.delete(f.path); this.sweepTemps(); }
      this.raise(id, f.path, whileStopped, v, 'reverted', quarantine, { sha256: entry.sha256, size: entry.size, mode: entry.mode }, facts(obs), changes);
      this.markClean(f.path);
    } catch (err) {
      this.failed(f.path, id, verdict, err, whileStopped, quarantine);
    } finally {
      if (dirFd === undefined) safeClose(fd);
    }
  }

  /** A restore that could not finish: the file is left as it was; alert once, retry with backoff. */
  private failed(path: string, id: string, verdict: Verdict, err: unknown, whileStopped: boolean, quarantine: string | null = null): void {
    const code = errnoCode(err) ?? 'EIO';
    let f = this.failures.get(path);
    if (!f) { f = { attempts: 0, timer: null, alerted: false }; this.failures.set(path, f); }
    // Only the retry timer escalates the backoff: events arriving meanwhile (our own failed
    // attempt makes some) must not push the next retry further away.
    if (f.timer && f.alerted) return;
    f.attempts++;
    if (!f.alerted) {
      f.alerted = true;
      this.raise(id, path, whileStopped, { reason: 'revert-failed', also: [verdict.reason], action: 'reverted' }, 'revert-failed', quarantine, null, null, undefined, `restore failed: ${code}; retrying with backoff`);
    }
    if (f.timer) clearTimeout(f.timer);
    if (this.stopped) return;
    const delay = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (f.attempts - 1));
    f.timer = setTimeout(() => {
      const cur = this.failures.get(path);
      if (cur) cur.timer = null;
      this.safely(`retrying ${path}`, () => { if (Object.hasOwn(this.state.index.dirs, path)) this.fixDirs(false); else this.check(path, false); });
    }, delay);
    f.timer.unref?.();
  }

  private quarantineDir(id: string): number {
    return ensureDirBeneath(this.rootFd, `${QUARANTINE_DIR}/${id}`, 0o700);
  }

  private moveToQuarantine(id: string, dirFd: number, name: string): string {
    const q = this.quarantineDir(id);
    try { moveAt(dirFd, name, q, name); fsyncQuiet(q); } finally { safeClose(q); }
    return `${QUARANTINE_DIR}/${id}/${name}`;
  }

  private linkOrMoveToQuarantine(id: string, dirFd: number, name: string): { path: string; moved: boolean } {
    const q = this.quarantineDir(id);
    let moved = false;
    try {
      try { linkAt(dirFd, name, q, name); } catch { moveAt(dirFd, name, q, name); moved = true; }
    } finally { safeClose(q); }
    return { path: `${QUARANTINE_DIR}/${id}/${name}`, moved };
  }

  /** A restore failed after the rejected entry was moved into quarantine: move it back (nothing else took its place). */
  private putBack(id: string, dirFd: number, name: string): boolean {
    try {
      const q = this.quarantineDir(id);
      try {
        if (lstatAt(dirFd, name) !== null) return false;
        moveAt(q, name, dirFd, name);
        fsyncQuiet(dirFd);
        return true;
      } finally { safeClose(q); }
    } catch (err) {
      this.log(`<2>warden: could not put ${name} back after a failed restore: ${errnoCode(err) ?? String(err)}; it is in ${QUARANTINE_DIR}/${id}/`);
      return false;
    }
  }

  private writeQuarantine(id: string, name: string, bytes: Buffer): string | null {
    try {
      const q = this.quarantineDir(id);
      try { createFileAt(q, name, bytes, 0o600); } finally { safeClose(q); }
      return `${QUARANTINE_DIR}/${id}/${name}`;
    } catch (err) {
      this.log(`<3>warden: could not keep rejected content of ${name} in quarantine: ${errnoCode(err) ?? err}`);
      return null;
    }
  }

  private raise(id: string, path: string, whileStopped: boolean, verdict: Verdict, action: Alert['action'], quarantine: string | null,
    before: FileFacts | null, after: FileFacts | null, credentialChanges?: Alert['credential_changes'], detail?: string): Alert {
    const reason: AlertReason = whileStopped && verdict.reason !== 'revert-failed' ? 'changed-while-stopped' : verdict.reason;
    const also = whileStopped && verdict.reason !== 'revert-failed' ? [verdict.reason, ...verdict.also] : verdict.also;
    const kind = this.state.entry(path)?.kind ?? this.pset.kindOf(path);
    const alert: Alert = {
      id, time: new Date().toISOString(), path, action, reason, before, after, quarantine,
      ...(also.length ? { also } : {}),
      ...(detail ? { detail } : {}),
      ...(credentialChanges ? { credential_changes: credentialChanges } : {}),
      advice: adviceFor(path, reason === 'changed-while-stopped' ? (also[0] ?? reason) : reason, id, kind),
    };
    this.record(alert);
    return alert;
  }

  /** Durable first (SPEC §6), then the journal line and the callback. */
  record(alert: Alert): void {
    this.counters.alerts++;
    try {
      this.flushUnwritten();
      appendAlert(this.rootFd, alert);
    } catch (err) {
      this.unwritten.push(alert);
      this.log(`<2>warden: cannot append to snapshots/alerts.jsonl (${errnoCode(err) ?? err}); alert ${alert.id} kept in memory and retried`);
    }
    this.log(journalLine(alert));
    this.onAlert(alert);
  }

  /** Alerts that could not be appended yet; retried before every new alert and on each rescan. */
  pendingAlerts(): number {
    return this.unwritten.length;
  }

  private flushUnwritten(): void {
    while (this.unwritten.length) {
      appendAlert(this.rootFd, this.unwritten[0] as Alert);
      this.unwritten.shift();
    }
  }

  raiseTamper(detail: string, path = `${BASELINE_DIR}/${INDEX_NAME}`): void {
    this.flag('baseline-tampered', path, detail);
  }

  /** An alert that reverts nothing: tamper, a degraded watcher. */
  flag(reason: AlertReason, path: string, detail: string): void {
    const id = newAlertId();
    this.record({
      id, time: new Date().toISOString(), path, action: 'flagged', reason, before: null, after: null,
      quarantine: null, detail, advice: adviceFor(path, reason, id, null),
    });
  }

  /** Compare the store with what we hold; put back anything edited outside warden. */
  verifyStore(allBlobs: boolean, hint?: string): void {
    const w = walkDir(this.rootFd, BASELINE_DIR);
    let raw: Buffer | null = null;
    let problem: string | null = null;
    if (!w.ok) { safeClose(w.parentFd); problem = `${BASELINE_DIR} is missing or not a directory`; }
    else {
      try { raw = readSmallAt(w.fd, INDEX_NAME); if (!raw) problem = 'index deleted'; } catch (err) { problem = `index unreadable (${errnoCode(err)})`; }
      finally { safeClose(w.fd); }
    }
    if (!problem && raw && !raw.equals(this.state.indexBytes)) problem = 'index content differs from the authenticated baseline';
    if (problem) {
      this.raiseTamper(`${problem}; the baseline held in memory was written back`);
      try { this.state.rewriteIndex(this.rootFd); } catch (err) { this.log(`<2>warden: cannot rewrite the baseline index: ${errnoCode(err) ?? err}`); }
    }
    // Blobs: on a hint, that one; on a rescan, only those whose stat stamp changed since they
    // were last hashed; allBlobs re-hashes everything.
    const dirs = new DirCache(this.rootFd);
    const seen = new Set<string>();
    try {
      for (const path of this.state.paths()) {
        const e = this.state.entry(path);
        if (!e || seen.has(e.sha256)) continue;
        seen.add(e.sha256);
        if (!allBlobs && hint && hint !== e.sha256) continue;
        const fd = dirs.get(blobDir(e.kind));
        let ok = false;
        if (fd !== null) {
          try {
            const st = lstatAt(fd, e.sha256);
            const stamp = st ? statStamp(st) : null;
            if (!allBlobs && !hint && stamp && this.blobStamps.get(e.sha256) === stamp) continue;
            const b = readSmallAt(fd, e.sha256);
            ok = b !== null && sha256Hex(b) === e.sha256;
            if (ok && stamp) this.blobStamps.set(e.sha256, stamp);
          } catch { ok = false; }
        }
        if (!ok) {
          this.blobStamps.delete(e.sha256);
          this.raiseTamper(`the stored approved content of ${path} was altered or removed; written back from memory`, `${blobDir(e.kind)}/${e.sha256}`);
          try { if (!this.state.rewriteBlob(this.rootFd, path)) this.log(`<2>warden: approved content of ${path} is not in memory; cannot repair the store`); }
          catch (err) { this.log(`<2>warden: cannot rewrite blob: ${errnoCode(err) ?? err}`); }
        }
      }
    } finally {
      dirs.close();
    }
  }

  private onStoreEvent(rel: string): void {
    if (rel === `${BASELINE_DIR}/${INDEX_NAME}` || rel === BASELINE_DIR) { this.verifyStore(false, '-'); return; }
    const m = /^snapshots\/(blobs|secrets)\/([0-9a-f]{64})$/.exec(rel);
    if (m) { this.verifyStore(false, m[2]); return; }
    if (/^snapshots(\/(blobs|secrets))?$/.test(rel)) this.verifyStore(true);
  }

  /** Swap in a new warden.toml (after a sanctioned change or SIGHUP). */
  setConfig(config: WardenConfig): void {
    this.config = config;
    this.pset = protectedSet(config);
    this.cleanStamps.clear();
  }

  stop(): void {
    this.stopped = true;
    this.safely('flushing alerts', () => this.flushUnwritten());
    if (this.unwritten.length) this.log(`<2>warden: ${this.unwritten.length} alert(s) could not be written to snapshots/alerts.jsonl: ${this.unwritten.map((a) => a.id).join(', ')}`);
    for (const f of this.failures.values()) if (f.timer) clearTimeout(f.timer);
    this.failures.clear();
  }

  failingPaths(): string[] {
    return [...this.failures.keys()];
  }
}

function facts(obs: Observation): FileFacts | null {
  if (obs.type === 'absent') return null;
  return { sha256: obs.sha256 ?? '', size: obs.size, mode: obs.mode };
}

/** Durability of a move is best effort: the alert, fsynced, is the record that matters. */
function fsyncQuiet(fd: number): void {
  try { fsyncSync(fd); } catch { /* e.g. EINVAL on odd filesystems */ }
}

const PRIORITY: Record<Alert['action'], number> = { reverted: 4, removed: 4, 'revert-failed': 3, flagged: 2 };

/** sd-daemon style: "<N>" priority prefix, picked up by journald from stderr. */
export function journalLine(a: Alert): string {
  const keys = a.credential_changes?.length ? ` keys: ${a.credential_changes.map((c) => `${c.group}.${c.key} ${c.before ?? '-'}→${c.after ?? '-'}`).join(', ')};` : '';
  const extra = a.also?.length ? ` (+${a.also.join(', ')})` : '';
  return `<${PRIORITY[a.action]}>warden: ${a.action} ${a.path}: ${a.reason}${extra};${keys} alert ${a.id}. ${a.advice}`;
}
