/**
 * The alert builder: what one alert says, from a verdict and what the revert did
 * (docs/ARCHITECTURE.md, "The pipeline", step "record"). Pure but for the witness lookup:
 * the reason (changed-while-stopped folds the found reason into `also`), the relabelling of
 * "emptied" as "content" when the quarantined inode was written after the truncate, the
 * credential diff, and who did it (writerOf, joined exactly from the witness's record).
 */
import type { WardenConfig } from '../config/warden-config.js';
import type { Alert, AlertReason, FileFacts, NameOp, Writer, WriterUnknown } from '../store/alert-types.js';
import { diffCredentials } from '../credentials/rules.js';
import { adviceFor, type Observation, type Verdict } from './classify.js';
import { grantsAt, type RootGrants } from '../grants/index.js';
import { classicRootProfile } from '../profiles/root-profile.js';
import type { RootProfile } from '../profiles/root-rules.js';

/** Who wrote an inode, joined exactly (device + inode, within the record's window). */
export interface WriterSource {
  lookup(dev: number, ino: number): { writer: Writer; others: number } | null;
  /**
   * Who did one of OPS to the name PATH just before now (the witness's second group: chmod,
   * chown, delete, rename, create), each record used once; or, when the record says its
   * actor was gone before it could be read, why it is not known.
   */
  lookupName?(path: string, ops: readonly NameOp[]): { writer: Writer; others: number } | { unknown: string } | null;
  /** Why the witness cannot answer now (not running, record missing), or null when it can. */
  unavailable(): string | null;
  /** Why the witness does not see names (chmod, chown, deletes, renames), or null when it does. */
  namesUnavailable?(): string | null;
}

/** The reasons a witness cannot see: it sees opens, and these are not (or not only) opens. */
const NOT_AN_OPEN: Partial<Record<AlertReason, string>> = {
  deleted: 'a deletion', symlink: 'a symlink put in its place', 'not-regular': 'a non-file put in its place', mode: 'a chmod', owner: 'a chown',
  acl: 'a change of its ACL', xattr: 'a change of its extended attributes',
  'dir-replaced': 'another directory put in its place', 'root-replaced': 'another directory (or a link, a file, nothing) put at the root path',
};

/**
 * Which name events explain a reason (joined by the path's name): a mode, owner, ACL or
 * extended attribute change by an attribute change only; a missing file by a delete or a rename away; another
 * directory at a protected directory's path or the root's by whoever renamed it in, made it,
 * or (nothing put there) renamed or removed what was there; anything else
 * (new content on a new inode, a symlink or non-file in its place, a new file) by a rename
 * over it or a create, new content on the same inode with no open seen by a truncate by
 * name (modify). A mode change is never explained by an earlier open, nor an open by
 * a chmod.
 */
const NAME_OPS: Partial<Record<AlertReason, readonly NameOp[]>> = {
  mode: ['attrib'], owner: ['attrib'], acl: ['attrib'], xattr: ['attrib'], deleted: ['delete', 'rename-away'],
  // A directory's path made to name another: whoever put it there (renamed in, exchanged, made) or, with nothing put, renamed or removed what was there.
  'dir-replaced': ['rename-in', 'create', 'rename-away', 'delete'], 'root-replaced': ['rename-in', 'create', 'rename-away', 'delete'],
};
const REPLACED_OPS: readonly NameOp[] = ['rename-in', 'create', 'modify'];

/** What one alert says: named, since most fields are optional and alike in type. */
export interface Raise {
  id: string;
  path: string;
  /** Found by the startup pass: the alert says changed-while-stopped. */
  whileStopped: boolean;
  verdict: Verdict;
  action: Alert['action'];
  quarantine?: string | null;
  before?: FileFacts | null;
  after?: FileFacts | null;
  credentialChanges?: Alert['credential_changes'] | undefined;
  detail?: string | undefined;
  /** The rejected file as seen (device + inode): what the witness's record is joined on. */
  seen?: Observation | undefined;
  /** Its rejected content was not kept (quarantine quota reached): a folded alert counts it. */
  notKept?: boolean;
  /** What the owner does, when the reason's usual advice does not fit (blocked.ts). */
  advice?: string;
  /** What the rejected content granted or took away (rejectedGrants). */
  grants?: RootGrants | undefined;
}

/** The alert for R; `kind` is the path's kind (file kind, 'directory'), `writers` the witness (null: none). */
export function buildAlert(r: Raise, kind: string | null, writers: WriterSource | null, now = new Date()): Alert {
  const { id, path, whileStopped, verdict, action, quarantine = null, before = null, after = null, credentialChanges, detail, seen, grants } = r;
  const reason: AlertReason = whileStopped && verdict.reason !== 'revert-failed' ? 'changed-while-stopped' : verdict.reason;
  const also = whileStopped && verdict.reason !== 'revert-failed' ? [verdict.reason, ...verdict.also] : verdict.also;
  return {
    id, time: now.toISOString(), path: path === '' ? '.' : path, action, reason, before, after, quarantine,
    ...(also.length ? { also } : {}),
    ...(detail ? { detail } : {}),
    ...(credentialChanges ? { credential_changes: credentialChanges } : {}),
    ...(grants ? { grants: grants.grants, grants_summary: grants.summary, ...(grants.left_off ? { grants_left_off: grants.left_off } : {}) } : {}),
    ...(action === 'revert-failed' ? {} : { by: writerOf(writers, path, verdict.reason, whileStopped, seen) }),
    advice: r.advice ?? adviceFor(path, reason === 'changed-while-stopped' ? (also[0] ?? reason) : reason, id, kind),
  };
}

/** Who made this direct edit, joined exactly from the witness's record, or why that is not known. */
export function writerOf(src: WriterSource | null, path: string, reason: AlertReason, whileStopped: boolean, seen: Observation | undefined): Writer | WriterUnknown {
  if (!src) return { unknown: 'no witness running' };
  const byName = NAME_OPS[reason];
  if (!byName && seen && seen.type === 'file' && seen.dev !== undefined) {
    const j = src.lookup(seen.dev, seen.ino);
    if (j) return j.others ? { ...j.writer, others: j.others } : j.writer;
  }
  if (src.lookupName && !whileStopped) {
    const j = src.lookupName(path, byName ?? REPLACED_OPS);
    if (j && 'unknown' in j) return j;
    if (j) return j.others ? { ...j.writer, others: j.others } : j.writer;
  }
  const down = src.unavailable();
  if (down) return { unknown: down };
  if (whileStopped) return { unknown: 'changed while warden was not running' };
  const what = NOT_AN_OPEN[reason];
  if (what) {
    const blind = src.namesUnavailable ? src.namesUnavailable() : 'it does not watch names';
    if (blind) return { unknown: `the witness sees opens for writing, and ${what} is not one (${blind})` };
    const ops = !byName ? 'rename or create' : byName.includes('rename-in') ? 'rename, create or removal' : 'attribute change, delete or rename';
    return { unknown: `the witness saw no ${ops} of this name by another process` };
  }
  return { unknown: src.namesUnavailable && !src.namesUnavailable()
    ? 'the witness saw no open for writing of this file, and no truncate, rename or create of it (a write through a shared mapping mapped earlier is none of these)'
    : 'the witness saw no open for writing of this file' };
}

/** What an alert says about a file as seen (null: absent). */
export function facts(obs: Observation): FileFacts | null {
  if (obs.type === 'absent') return null;
  return { sha256: obs.sha256 ?? null, size: obs.size, mode: obs.mode };
}

/**
 * `echo … > file` truncates, then writes: seen empty, the hard-linked quarantine copy holds
 * what was written after (`heldSize` bytes, 0/null: nothing). Then the alert says content,
 * and tells what the rejected file held. Returns the verdict and that note.
 */
export function relabelEmptied(verdict: Verdict, heldSize: number | null): { verdict: Verdict; held?: string } {
  if (verdict.reason !== 'emptied' || !heldSize) return { verdict };
  return { verdict: { ...verdict, reason: 'content' }, held: `seen empty, then written: the rejected file held ${heldSize} byte(s), kept in quarantine` };
}

/**
 * For a credentials file: which keys the rejected bytes changed (never their values), and
 * half-applied when the change left the file inconsistent. `found`: the verdict as found
 * (before relabelling), `v`: the verdict so far.
 */
export function credentialVerdict(found: Verdict, v: Verdict, approved: Buffer, rejected: Buffer | null, config: WardenConfig, path: string): { verdict: Verdict; changes?: Alert['credential_changes'] } {
  if (!rejected || (found.reason !== 'content' && found.reason !== 'emptied')) return { verdict: v };
  const d = diffCredentials(approved.toString('utf8'), rejected.toString('utf8'), config, path);
  return { verdict: d.halfApplied ? { ...found, reason: 'half-applied', also: [found.reason, ...found.also] } : v, changes: d.changes };
}

/**
 * What the rejected bytes grant or take away against the approved ones, under the root's
 * profile (docs/PROFILES.md, "Grants in alerts, diffs and prompts"): undefined for a file
 * the profile has no grant or credential keys for. Said after the revert, never before it;
 * a comparison that throws costs the alert its grants, never the alert.
 */
export function rejectedGrants(root: string, path: string, kind: string | null, approved: Buffer | null, rejected: Buffer | null, profile: RootProfile | null = classicRootProfile(root)): RootGrants | undefined {
  if (approved && rejected && approved.equals(rejected)) return undefined;
  try { return grantsAt(profile, path, approved, rejected, { secret: kind === 'credentials' }); } catch { return undefined; }
}
