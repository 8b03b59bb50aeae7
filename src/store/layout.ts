/** Where things live inside snapshots/ (SPEC §3). Every path is relative to the root. */
export const SNAPSHOTS = 'snapshots';
export const BASELINE_DIR = 'snapshots/baseline';
export const INDEX_NAME = 'index';
export const BLOBS_DIR = 'snapshots/blobs';
/** Credential blobs: never in git, never in a log. */
export const SECRETS_DIR = 'snapshots/secrets';
export const HISTORY_DIR = 'snapshots/history';
export const QUARANTINE_DIR = 'snapshots/quarantine';
export const PENDING_DIR = 'snapshots/pending';
export const JOURNAL_DIR = 'snapshots/journal';
export const ALERTS_FILE = 'snapshots/alerts.jsonl';
export const CONTROL_DIR = 'snapshots/control';
export const SOCKET_FILE = 'snapshots/control/warden.sock';
export const LOCK_FILE = 'snapshots/control/warden.lock';
export const DAEMON_INFO_FILE = 'snapshots/daemon.json';
/** Owner messages (one-time codes) for the notifier: read-only for it. */
export const OUTBOX_DIR = 'snapshots/outbox';

/**
 * Directories that exist from `warden init` on, and again at every guard start. The
 * notifier unit hides the private ones (InaccessiblePaths=), and systemd can only hide
 * what exists when the unit starts: a quarantine/ created at the first revert would be
 * visible to the network-facing process. The outbox is there so that it can be watched.
 */
export const STORE_DIRS = [SECRETS_DIR, QUARANTINE_DIR, PENDING_DIR, JOURNAL_DIR, CONTROL_DIR, OUTBOX_DIR] as const;
/** The ones the notifier unit hides (InaccessiblePaths=): never for the network-facing process. */
export const PRIVATE_STORE_DIRS = [SECRETS_DIR, QUARANTINE_DIR, PENDING_DIR, JOURNAL_DIR, CONTROL_DIR] as const;
