/**
 * Where things live inside the store (docs/CONTRACT.md §Baseline). Every path is relative to the store's
 * directory (store.ts holds it open); where the store itself lives is location.ts's job.
 */
export const BASELINE_DIR = 'baseline';
export const INDEX_NAME = 'index';
export const BLOBS_DIR = 'blobs';
/** Credential blobs: never in git, never in a log. */
export const SECRETS_DIR = 'secrets';
export const HISTORY_DIR = 'history';
export const QUARANTINE_DIR = 'quarantine';
export const PENDING_DIR = 'pending';
export const JOURNAL_DIR = 'journal';
export const ALERTS_FILE = 'alerts.jsonl';
/** What the store budget pruned from quarantine, one record a content (store/prune.ts). */
export const PRUNED_FILE = 'pruned.jsonl';
export const CONTROL_DIR = 'control';
export const SOCKET_NAME = 'warden.sock';
export const LOCK_NAME = 'warden.lock';
/** Owner messages (one-time approval codes); the notifier only reads them. */
export const MESSAGES_DIR = 'outbox';
export const MESSAGES_NAME = 'messages.jsonl';
export const MESSAGES_FILE = 'outbox/messages.jsonl';
/** The notifier's delivery state when guard and notifier share a process. */
export const NOTIFY_DIR = 'notify';

/** Which root the store belongs to (path, inode): lets a moved root be re-homed. */
export const ROOT_RECORD = 'root.json';

/** The store's own directories: anything else at these names is damage (repaired, never followed). */
export const LAYOUT_DIRS = [BASELINE_DIR, BLOBS_DIR, SECRETS_DIR, HISTORY_DIR, QUARANTINE_DIR, PENDING_DIR, JOURNAL_DIR, CONTROL_DIR, MESSAGES_DIR, NOTIFY_DIR] as const;
/** The store's own append-only files. */
export const LAYOUT_FILES = [ALERTS_FILE] as const;

/**
 * Directories that exist from `warden init` on, and again at every guard start (LAYOUT_DIRS,
 * store.ensureLayout). The notifier unit hides these (InaccessiblePaths=), and systemd can
 * only hide what exists when the unit starts: a quarantine/ created at the first revert
 * would be visible to the network-facing process.
 */
export const PRIVATE_STORE_DIRS = [SECRETS_DIR, QUARANTINE_DIR, PENDING_DIR, JOURNAL_DIR, CONTROL_DIR, HISTORY_DIR] as const;
