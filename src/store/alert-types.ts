import type { CredentialKeyChange } from '../credentials/types.js';
export type { CredentialKeyChange };
/** The alert record of docs/CONTRACT.md §Alerts, one JSON object per line of snapshots/alerts.jsonl. */
/** noted: nothing was reverted, by rule (a runtime's own write, accepted as approved: docs/PROFILES.md, "The runtime's own writes"). */
export type AlertAction = 'reverted' | 'removed' | 'revert-failed' | 'flagged' | 'noted';

export type AlertReason =
  | 'content' | 'emptied' | 'deleted' | 'mode' | 'owner' | 'symlink' | 'not-regular'
  | 'too-large' | 'unexpected-file' | 'half-applied' | 'changed-while-stopped'
  | 'baseline-tampered' | 'revert-failed' | 'approval-expired'
  // docs/CONTRACT.md §Detection: the root path named something other than the directory the guard holds.
  | 'root-replaced'
  // Not in the list of docs/CONTRACT.md §Alerts: a protected directory's path named a directory warden did not make
  // or verify; it was moved aside whole, untouched (docs/ARCHITECTURE.md, invariant 19).
  | 'dir-replaced'
  // Not in the list of docs/CONTRACT.md §Alerts: the watcher fell back to polling (inotify limit), see ARCHITECTURE.md.
  | 'watch-degraded'
  // Not in the list of docs/CONTRACT.md §Alerts: a wrong owner-code was given three times and the change was cancelled.
  | 'approval-refused'
  // Not in the list of docs/CONTRACT.md §Alerts: the witness (enforce = true) refused an open for writing (docs/CONTRACT.md §Who did it).
  | 'refused'
  // Not in the list of docs/CONTRACT.md §Alerts: a protected file's access ACL, or another extended attribute its owner can set, changed (docs/ARCHITECTURE.md).
  | 'acl' | 'xattr'
  // Not in the list of docs/CONTRACT.md §Alerts: the store reached its size budget and the oldest quarantined content is pruned (told once).
  | 'store-budget'
  // Not in the list of docs/CONTRACT.md §Alerts: the runtime changed keys its profile lets it change by itself; accepted as approved (docs/PROFILES.md, "The runtime's own writes").
  | 'runtime-write';

/** One change of an alert's `grants` (the shape of src/grants/for-root.ts GrantRecord: `key` raw, `words` escaped). */
export interface AlertGrant {
  path: string;
  key: string;
  change: 'widened' | 'narrowed' | 'changed' | 'added' | 'removed';
  grant: boolean;
  /** The credential group when `old` and `new` are fingerprints (never values). */
  credential?: string;
  old?: unknown;
  new?: unknown;
  clipped?: true;
  words: string;
}

/** One alert a folded alert stands for: its id, path and what it kept. */
export interface FoldedAlert { id: string; path: string; quarantine: string }

/** sha256 is null when the content was not read (too large, not a regular file). */
export interface FileFacts { sha256: string | null; size: number; mode: number }


/**
 * Who wrote (docs/CONTRACT.md §Who did it), as the witness saw it while the kernel held the writer in its
 * open: never an argument list, never file content.
 */
/** What the witness sees by name (a Writer's op besides the opens). */
export type NameOp = 'attrib' | 'delete' | 'rename-away' | 'rename-in' | 'create' | 'modify';

export interface Writer {
  pid: number;
  comm: string;
  /** The executable's path, or null when it could not be read. */
  exe: string | null;
  uid: number;
  user: string | null;
  /** The login behind the process (survives sudo and su); null for a service or a boot-time process. */
  loginuid: number | null;
  login_user: string | null;
  /** The audit session of that login (the "3" of session-3.scope). */
  session: number | null;
  /** The systemd unit or scope of its cgroup (agent-runtime.service, session-3.scope). */
  unit: string | null;
  /**
   * What it did: an open for writing, or an open the witness could not classify; or, seen
   * by name: a mode or owner change (attrib), a delete, a rename of the file away, a rename
   * of another file over it (rename-in), a create, a change of content with no open (modify:
   * truncate(2) by path, which no permission event holds).
   */
  op: 'open-write' | 'open-unknown' | NameOp;
  /** enforce = true refused it (EPERM). */
  refused: boolean;
  time: string;
  /** How many other processes opened the same file for writing in the window. */
  others?: number;
}

/** When the writer is not known, why. */
export interface WriterUnknown { unknown: string }

export interface Alert {
  id: string;
  time: string;
  path: string;
  action: AlertAction;
  reason: AlertReason;
  before: FileFacts | null;
  after: FileFacts | null;
  quarantine: string | null;
  /** Extra reasons that also held (e.g. mode and content both changed). */
  also?: AlertReason[];
  /** Human detail, never a credential value. */
  detail?: string;
  /** For credential files: which keys changed, by fingerprint only. */
  credential_changes?: CredentialKeyChange[];
  /**
   * What the rejected content granted or took away, key by key, for a file the root's
   * profile has grant or credential keys for (docs/PROFILES.md, "Grants in alerts, diffs
   * and prompts"); credential values as fingerprints. Bounded: `grants_left_off` counts the rest.
   */
  grants?: AlertGrant[];
  /** The comparison in one line ("1 grant widened"), or why the file was not compared key by key. */
  grants_summary?: string;
  grants_left_off?: number;
  /** A folded alert (a storm): how many alerts of this reason it stands for, itself included. */
  count?: number;
  /**
   * A folded alert: each alert it stands for that kept something in quarantine, by its own
   * id (the name of its quarantine folder), so every quarantine folder is named by an alert
   * line (docs/CONTRACT.md §Revert). `warden diff ID` and `warden accept ID` take these ids too.
   */
  folded?: FoldedAlert[];
  /** An alert reached through a folded one (findAlert): the id of the line that lists it. */
  folded_into?: string;
  /** Who made the direct edit (docs/CONTRACT.md §Who did it), or why that is not known. */
  by?: Writer | WriterUnknown;
  /** What the owner should do instead (docs/CONTRACT.md §Alerts: every message says how to do it right). */
  advice: string;
}
