/**
 * Where the notifier reads and keeps things. No network imports here: the guard process
 * loads this module (via outbox-messages.ts and delivery-state.ts).
 */
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Written by the guard (append-only); the notifier only reads it. */
export { ALERTS_FILE as ALERTS_REL } from '../store/layout.js';
/** Owner messages (one-time approval codes) appended by other code; read-only for the notifier. */
export { MESSAGES_DIR as MESSAGES_DIR_REL } from '../store/layout.js';
export { MESSAGES_FILE as MESSAGES_REL } from '../store/layout.js';
/** The notifier's state directory when guard and notifier share one process. */
export const EMBEDDED_STATE_REL = 'snapshots/notify';
export const STATE_FILE = 'delivery-state.json';

/** First 16 hex digits of sha256(realpath(root)): one state directory per guarded root. */
export function rootTag(root: string): string {
  let real: string;
  try { real = realpathSync(root); } catch { real = resolve(root); }
  return createHash('sha256').update(real).digest('hex').slice(0, 16);
}

/**
 * The notifier's state directory (SPEC §11). Embedded: inside snapshots/ (one process owns
 * the root anyway). Alone: systemd's $STATE_DIRECTORY (first entry if several), else
 * $XDG_STATE_HOME/warden/notify/<tag>, else ~/.local/state/warden/notify/<tag>.
 */
export function defaultNotifierStateDir(root: string, embedded: boolean, env: NodeJS.ProcessEnv = process.env): string {
  if (embedded) return join(root, EMBEDDED_STATE_REL);
  const sd = env.STATE_DIRECTORY?.split(':')[0];
  if (sd) return sd;
  const base = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith('/') ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  return join(base, 'warden', 'notify', rootTag(root));
}
