/**
 * The runtime's own writes on the revert path (docs/PROFILES.md, "The runtime's own
 * writes"): a changed file of a profile's root whose profile lets the runtime write some of
 * its keys is judged key by key against the approved version (grants/write-judge.ts,
 * strict, fail closed) before it is restored:
 *
 *   own       → not reverted: the new bytes become the approved version (baseline first,
 *               as a sanctioned change: blob, then the authenticated index), a history
 *               commit off the revert path, and an alert of action `noted` (info) naming
 *               the keys, credential values as fingerprints only;
 *   on-behalf → reverted as any direct edit, and the rejected bytes filed as a pending
 *               request (`onBehalf`, the daemon's change service), which `warden approve
 *               ID` applies in one step; the alert says so;
 *   foreign   → reverted as any direct edit.
 *
 * Only a change of content alone is ever the runtime's own (the mode, owner and attributes
 * as approved); anything not a readable regular file is foreign.
 */
import { escapeText } from '../common/escape.js';
import type { RootSettings } from '../config/protected-set.js';
import type { ProfileRootRecord } from '../config/profile-root.js';
import type { FileFacts } from '../profiles/paths.js';
import type { WardenConfig } from '../config/warden-config.js';
import { judgeWrite, type WriteJudgement } from '../grants/index.js';
import { historyMirror } from '../grants/redact.js';
import { rootProfileFor } from '../profiles/root-profile.js';
import type { RootProfile } from '../profiles/root-rules.js';
import { rulesAt } from '../profiles/root-rules.js';
import type { BaselineState } from '../store/baseline-state.js';
import type { Store } from '../store/store.js';
import { facts, rejectedGrants } from './alert-build.js';
import type { Finding } from './inspect.js';
import type { Report } from './report.js';
import type { Approved } from './revert.js';

export interface RuntimeWriteDeps {
  root: string;
  state: BaselineState;
  store: Store;
  config(): WardenConfig;
  report(): Report;
  /** `rel` verified clean: `stamp`, the stat stamp of the bytes judged (never a later write's). */
  markClean(rel: string, stamp: string | undefined): void;
  /** Look at `rel` again in `ms` (a hint through the door): a write under way, waited for. */
  later(rel: string, ms: number): void;
  /** File the rejected bytes of an on-behalf write as a pending request; absent (no change service): the write is only reverted. */
  onBehalf?: ((path: string, bytes: Buffer) => void) | undefined;
  log(line: string): void;
}

/**
 * What the revert does with the finding: leave it (accepted as approved and alerted, or a
 * write under way, looked at again shortly), or restore it with a note for its alert.
 */
export type RuntimeWriteAct = { leave: 'accepted' | 'unfinished' } | { leave?: undefined; note?: string };

const FOREIGN: RuntimeWriteAct = {};

/**
 * How long a write under way (the file empty, or stopping short) in a file the runtime
 * rewrites by itself is waited for before it is reverted: Codex truncates, then writes a
 * few hundred bytes in one call. Such content parses as nothing, so it grants nothing meanwhile.
 */
export const UNFINISHED_MS = 300;
const LOOK_AGAIN_MS = 25;

export class RuntimeWrites {
  /** Paths whose write is waited for, and since when (ms). */
  private readonly waiting = new Map<string, number>();
  /** History commits, one after another (two refreshes in a row must not race for git's index lock). */
  private history: Promise<unknown> = Promise.resolve();

  constructor(private readonly d: RuntimeWriteDeps, private readonly now = Date.now) {}

  /** What the root's profile says of each path, worked out once per recorded profile (about 0.3 ms a path: never paid on each revert). */
  private facts: { rec: ProfileRootRecord | undefined; rp: RootProfile | null; at: Map<string, FileFacts | null> } | null = null;

  /** The root's profile and its facts about `path`: null for a file its runtime writes nothing of (or a root with no profile). */
  private rulesFor(path: string): { rp: RootProfile; facts: FileFacts } | null {
    const rec = (this.d.config() as RootSettings).profileRoot;
    if (!rec) return null;
    if (this.facts?.rec !== rec) this.facts = { rec, rp: rootProfileFor(this.d.root, rec), at: new Map() };
    const { rp, at } = this.facts;
    if (!rp) return null;
    let facts = at.get(path);
    if (facts === undefined) {
      const found = rulesAt(rp, path);
      facts = found && found.runtimeWrites.length > 0 ? found : null;
      if (at.size < 10_000) at.set(path, facts);
    }
    return facts ? { rp, facts } : null;
  }

  /** Judge the finding; accept an own write here and now. Never throws: anything unexpected is foreign. */
  judge(id: string, f: Finding, approved: Approved): RuntimeWriteAct {
    const { obs, verdict } = f;
    if (f.kind !== 'text' || obs.type !== 'file' || obs.bytes === null || (verdict.reason !== 'content' && verdict.reason !== 'emptied')) return FOREIGN;
    try {
      const found = this.rulesFor(f.path);
      if (!found) return FOREIGN;
      const { rp, facts } = found;
      const j = judgeWrite(facts.entry.format, facts, approved.bytes, obs.bytes);
      if (j.kind === 'foreign' && j.unfinished && verdict.also.length === 0) {
        const since = this.waiting.get(f.path) ?? this.now();
        if (this.now() - since < UNFINISHED_MS) {
          this.waiting.set(f.path, since);
          this.d.later(f.path, LOOK_AGAIN_MS);
          return { leave: 'unfinished' };
        }
      }
      this.waiting.delete(f.path);
      if (j.kind === 'own' && verdict.also.length === 0) {
        const { entry } = approved;
        // The commit point: a failure here leaves the approved version as it was, and the file is reverted.
        this.d.state.commit(this.d.store.fd, [{ path: f.path, kind: entry.kind, bytes: obs.bytes, mode: entry.mode, uid: entry.uid, gid: entry.gid, ...(entry.xattrs ? { xattrs: entry.xattrs } : {}) }]);
        this.accepted(id, f, approved, obs.bytes, j, rp);
        return { leave: 'accepted' };
      }
      if (j.kind === 'own') return { note: `the runtime's own keys changed (${keys(j)}), but so did its ${verdict.also.join(', ')}: not the runtime's own write` };
      if (j.kind === 'on-behalf' && this.d.onBehalf) {
        this.d.onBehalf(f.path, obs.bytes);
        return { note: `${rp.profile.runtime} wrote this on the user's behalf (${keys(j)}): reverted, and filed as a pending request that 'warden approve' lists and 'warden approve ID' applies in one step` };
      }
      return j.kind === 'foreign' ? { note: `not the runtime's own write: ${escapeText(j.why)}${j.unfinished ? ` (waited ${UNFINISHED_MS} ms for the write to finish)` : ''}` } : FOREIGN;
    } catch (err) {
      this.d.log(`<4>warden: judging ${escapeText(f.path)} as a runtime's write failed (${(err as Error)?.message ?? String(err)}); reverted`);
      return FOREIGN;
    }
  }

  /** After the commit: the stamp, the alert, history (each on its own: the new version is approved already). */
  private accepted(id: string, f: Finding, approved: Approved, bytes: Buffer, j: WriteJudgement & { kind: 'own' }, rp: RootProfile): void {
    const { entry } = approved;
    const { store } = this.d;
    const failed = (what: string) => (err: unknown) => this.d.log(`<3>warden: ${escapeText(f.path)}: the runtime's own write is approved, but ${what} failed: ${String((err as Error)?.message ?? err).split('\n')[0]}`);
    try { this.d.markClean(f.path, f.obs.stamp); } catch { /* the next rescan hashes it again */ }
    try { this.alert(id, f, approved, bytes, j, rp); } catch (err) { failed('its alert')(err); }
    try {
      const mirror = historyMirror(rp, f.path, bytes);
      this.history = this.history
        .then(() => import('../store/history.js'))
        .then(({ commitHistory }) => commitHistory(store, [{ path: f.path, kind: entry.kind, bytes, ...(mirror ? { mirror } : {}) }], `runtime-write ${f.path}`, rp.profile.runtime))
        .catch(failed('recording it in history'));
    } catch (err) { failed('recording it in history')(err); }
  }

  private alert(id: string, f: Finding, approved: Approved, bytes: Buffer, j: WriteJudgement & { kind: 'own' }, rp: RootProfile): void {
    const { entry } = approved;
    const grants = rejectedGrants(this.d.root, f.path, f.kind, approved.bytes, bytes, rp);
    this.d.report().raise({
      id, path: f.path, whileStopped: false, verdict: { reason: 'runtime-write', also: [], action: 'reverted' }, action: 'noted', quarantine: null,
      before: { sha256: entry.sha256, size: entry.size, mode: entry.mode }, after: facts(f.obs), grants, seen: f.obs,
      detail: `${rp.profile.runtime} changed ${keys(j)} by itself, as the ${rp.profile.name} profile lets it: accepted as the approved version (generation ${this.d.state.index.generation})`,
    });
  }
}

function keys(j: WriteJudgement & { kind: 'own' | 'on-behalf' }): string {
  if (j.keys.length === 0) return 'no key (the same content, written anew)';
  const shown = j.keys.slice(0, 8).map((k) => escapeText(k)).join(', ');
  return j.keys.length > 8 ? `${shown} and ${j.keys.length - 8} more` : shown;
}
