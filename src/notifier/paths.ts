/**
 * Where the notifier reads and keeps things. No network imports here: the guard process
 * loads this module (via delivery-state.ts).
 *
 * It reads alerts.jsonl and outbox/messages.jsonl only through the store it holds
 * (store.ts: located by the root's identity, opened once, owned by this account), never
 * by a path inside the root: the agent may own the root and rename or exchange anything in it.
 */
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { locateStore, NOTIFY_STATE_NAME } from '../store/location.js';
import { NOTIFY_DIR } from '../store/layout.js';
import type { Store } from '../store/store.js';

/** Written by the guard (append-only); the notifier only reads them. Relative to the store. */
export { ALERTS_FILE as ALERTS_REL, MESSAGES_DIR as MESSAGES_DIR_REL, MESSAGES_FILE as MESSAGES_REL } from '../store/layout.js';
export const STATE_FILE = 'delivery-state.json';
/** Append-only changes since the snapshot (one JSON line per state write); compacted into STATE_FILE. */
export const STATE_LOG = 'delivery-state.log';
/**
 * Append-only: when each alert and owner message reached each channel (one JSON line per
 * message sent: channel, time, the item keys it carried). The delivery state forgets an
 * item once every channel has it (its watermark passes it); this keeps its own time.
 */
export const DELIVERED_LOG = 'delivered.jsonl';

/** First 16 hex digits of sha256(realpath(root)): one state directory per guarded root. */
export function rootTag(root: string): string {
  let real: string;
  try { real = realpathSync(root); } catch { real = resolve(root); }
  return createHash('sha256').update(real).digest('hex').slice(0, 16);
}

/**
 * The notifier's state directory (docs/CONTRACT.md §Deployment). Embedded: the store's notify/ (one process
 * owns the store anyway). Alone: systemd's $STATE_DIRECTORY (first entry if several), else
 * $XDG_STATE_HOME/warden/notify/<tag>, else ~/.local/state/warden/notify/<tag>.
 */
export function defaultNotifierStateDir(root: string | Store, embedded: boolean, env: NodeJS.ProcessEnv = process.env): string {
  const rootPath = typeof root === 'string' ? root : root.root;
  if (embedded) return join(typeof root === 'string' ? locateStore(root, env).dir : root.dir, NOTIFY_DIR);
  const sd = env.STATE_DIRECTORY?.split(':')[0];
  if (sd) return sd;
  const base = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith('/') ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  return join(base, 'warden', 'notify', rootTag(rootPath));
}

/** The notifier unit's state directory, for a command run as the warden account. */
export const systemNotifierStateDir = (env: NodeJS.ProcessEnv = process.env): string =>
  env.WARDEN_NOTIFY_STATE_DIR && env.WARDEN_NOTIFY_STATE_DIR.startsWith('/') ? env.WARDEN_NOTIFY_STATE_DIR : `/var/lib/${NOTIFY_STATE_NAME}`;
