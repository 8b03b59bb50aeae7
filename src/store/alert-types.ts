import type { CredentialKeyChange } from '../credentials/types.js';
export type { CredentialKeyChange };
/** The alert record of SPEC §6, one JSON object per line of snapshots/alerts.jsonl. */
export type AlertAction = 'reverted' | 'removed' | 'revert-failed' | 'flagged';

export type AlertReason =
  | 'content' | 'emptied' | 'deleted' | 'mode' | 'owner' | 'symlink' | 'not-regular'
  | 'too-large' | 'unexpected-file' | 'half-applied' | 'changed-while-stopped'
  | 'baseline-tampered' | 'revert-failed' | 'approval-expired'
  // SPEC §4 (issue 21): the root path named something other than the directory the guard holds.
  | 'root-replaced'
  // Not in SPEC §6's list: the watcher fell back to polling (inotify limit), see ARCHITECTURE.md.
  | 'watch-degraded'
  // Not in SPEC §6's list: a wrong owner-code was given three times and the change was cancelled.
  | 'approval-refused';

/** sha256 is null when the content was not read (too large, not a regular file). */
export interface FileFacts { sha256: string | null; size: number; mode: number }


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
  /** A folded alert (a storm): how many alerts of this reason it stands for, itself included. */
  count?: number;
  /** What the owner should do instead (SPEC §6: every message says how to do it right). */
  advice: string;
}
