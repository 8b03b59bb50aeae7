/**
 * What the guard says after it acted (docs/ARCHITECTURE.md, "The pipeline", step "record"):
 * the alert of a revert or a removal, built from the finding and the revert's outcome
 * (alert-build.ts) and recorded (alert-sink.ts), or a revert that could not finish, alerted
 * once and looked at again with backoff (retry.ts) through the guard's one door.
 */
import { errnoCode } from '../common/errors.js';
import type { ProtectedSet } from '../config/protected-set.js';
import type { WardenConfig } from '../config/warden-config.js';
import { baseOf } from '../common/rel-path.js';
import type { Alert, AlertReason } from '../store/alert-types.js';
import type { BaselineState } from '../store/baseline-state.js';
import { buildAlert, credentialVerdict, facts, rejectedGrants, relabelEmptied, type Raise, type WriterSource } from './alert-build.js';
import type { RootSettings } from '../config/protected-set.js';
import { rootProfileFor } from '../profiles/root-profile.js';
import type { RootProfile } from '../profiles/root-rules.js';
import type { AlertSink } from './alert-sink.js';
import type { Verdict } from './classify.js';
import type { Finding } from './inspect.js';
import type { Quarantine, QuarantineQuota } from './quarantine.js';
import type { RetryBook } from './retry.js';
import type { Approved, Outcome } from './revert.js';

/** What the report works with (the guard's, by reference). */
export interface ReportDeps {
  root: string;
  state: BaselineState;
  pset(): ProtectedSet;
  config(): WardenConfig;
  writers: WriterSource | null;
  alerts: AlertSink;
  quarantine: Quarantine;
  quota(): QuarantineQuota;
  retries: RetryBook;
  /** Look at `path` again (a hint through the door): the retry of a revert that failed. */
  again(path: string, reason: AlertReason): void;
  /** `rel` verified clean again: its stat stamp recorded. */
  markClean(rel: string): void;
  /** Remove temp files a failed restore left behind. */
  sweepTemps(): void;
}

export class Report {
  constructor(private readonly d: ReportDeps) {}

  /** A path that should not exist was moved into quarantine (or dropped: the quota). */
  removed(f: Finding, id: string, whileStopped: boolean, out: Outcome & { ok: true }): void {
    const quota = this.d.quota();
    const grants = rejectedGrants(this.d.root, f.path, f.kind, null, f.obs.bytes, this.profile());
    this.raise({ id, path: f.path, whileStopped, verdict: f.verdict, action: 'removed', quarantine: out.quarantine, after: facts(f.obs), detail: out.keep ? undefined : quota.note, seen: f.obs, notKept: !out.keep, grants });
  }

  /** The root's profile, whose rules say what a rejected version grants (docs/PROFILES.md, "Grants in alerts, diffs and prompts"). */
  private profile(): RootProfile | null {
    return rootProfileFor(this.d.root, (this.d.config() as RootSettings).profileRoot);
  }

  /**
   * An approved file has its approved bytes back. The alert tells what the rejected file
   * held (and, for credentials, which keys those bytes changed, not the keys an empty file
   * would drop).
   */
  reverted(f: Finding, id: string, whileStopped: boolean, approved: Approved, out: Outcome & { ok: true }): void {
    const { verdict, obs } = f;
    const d = this.d;
    const name = baseOf(f.path);
    const maxBytes = d.config().max_bytes;
    const heldSize = verdict.reason === 'emptied' && out.linked && out.quarantine ? d.quarantine.sizeOf(id, name) : null;
    const { verdict: relabelled, held } = relabelEmptied(verdict, heldSize);
    const rejected = held ? (d.quarantine.readBack(id, name, maxBytes) ?? obs.bytes) : obs.bytes;
    const { verdict: v, changes } = f.kind === 'credentials' ? credentialVerdict(verdict, relabelled, approved.bytes, rejected, d.config(), f.path) : { verdict: relabelled, changes: undefined };
    if (d.retries.clear(f.path)) d.sweepTemps();
    const notKept = obs.type === 'file' && !out.keep;
    const { entry } = approved;
    this.raise({
      id, path: f.path, whileStopped, verdict: v, action: 'reverted', quarantine: out.quarantine,
      before: { sha256: entry.sha256, size: entry.size, mode: entry.mode }, after: facts(obs), credentialChanges: changes,
      grants: rejectedGrants(d.root, f.path, f.kind, approved.bytes, rejected, this.profile()),
      detail: [out.note, out.fullNote, notKept ? d.quota().note : held].filter(Boolean).join('; ') || undefined, seen: obs, notKept,
    });
    d.markClean(f.path);
  }

  /** A restore that could not finish: the file is left as it was; alert once, retry with backoff. */
  failed(path: string, id: string, verdict: Verdict, err: unknown, whileStopped: boolean, quarantine: string | null = null): void {
    const code = errnoCode(err) ?? 'EIO';
    this.d.retries.failed(path,
      () => this.raise({ id, path, whileStopped, verdict: { reason: 'revert-failed', also: [verdict.reason], action: 'reverted' }, action: 'revert-failed', quarantine, detail: `restore failed: ${code}; retrying with backoff` }),
      () => this.d.again(path, verdict.reason));
  }

  /**
   * A directory (the root: '') warden put right itself: a failure it had is over, so no retry
   * is left pending and status lists it no more, and its next failure is alerted again and
   * retried from the first backoff step (retry.ts).
   */
  repaired(path: string): void {
    this.d.retries.clear(path);
  }

  /** One alert: its kind from the baseline (or the protected set), who did it, then durable (alert-sink.ts). */
  raise(r: Raise): Alert {
    const { state } = this.d;
    const entry = state.entry(r.path);
    const kind = entry?.kind ?? (Object.hasOwn(state.index.dirs, r.path) ? 'directory' : this.d.pset().kindOf(r.path));
    const alert = buildAlert(r, kind, this.d.writers);
    this.d.alerts.record(alert, r.notKept ?? false);
    return alert;
  }
}
