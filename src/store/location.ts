/**
 * Where a root's store lives (docs/CONTRACT.md §Store and §Deployment), found from the root's identity alone: nothing
 * in the root can redirect it.
 *
 * - The guard's state directory (deployment): `<state>/stores/<root-id>/`, beside the HMAC
 *   key (`<state>/keys/<root-id>.key`), with the control socket in the guard's runtime
 *   directory (`<runtime>/<root-id>/warden.sock`). The state directory is systemd's
 *   $STATE_DIRECTORY for the guard unit, or — for a command run as the warden account —
 *   /var/lib/warden-guard when that directory belongs to the user running it.
 * - Embedded (a session, `npm start`): `ROOT/snapshots`, keys under $XDG_STATE_HOME/warden.
 *
 * Which one applies: in the deployment (a guard state directory was found) always the
 * state directory's store; the embedded store is never consulted, so planting
 * ROOT/snapshots cannot downgrade it. In a session, a store in the state directory for this
 * root wins; ROOT/snapshots is used only when there is none.
 *
 * The root's identity is its real path (sha256, 16 hex digits), so a root moved elsewhere
 * has no store until `warden rehome --from OLD` moves its key and store (see rehome.ts);
 * every lookup that misses says so instead of silently starting from nothing.
 */
import { createHash } from 'node:crypto';
import { lstatSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The embedded store's name inside the root. */
export const EMBEDDED_STORE = 'snapshots';
export const STORES_DIR = 'stores';
export const KEYS_DIR = 'keys';

/** The guard unit's directories (StateDirectory=warden-guard, RuntimeDirectory=warden-guard). */
export const GUARD_STATE_NAME = 'warden-guard';
export const NOTIFY_STATE_NAME = 'warden-notify';

export type StoreMode = 'embedded' | 'state';

export interface StateBase {
  /** Absolute directory holding keys/ (and stores/ in the deployment). */
  dir: string;
  /** True when this is the guard's state directory of the deployment. */
  deployment: boolean;
}

/** One key, seal and store per root, named by the root's real path. */
export function rootId(root: string): string {
  return createHash('sha256').update(root).digest('hex').slice(0, 16);
}

function ownDir(path: string): boolean {
  try {
    const st = lstatSync(path);
    return st.isDirectory() && st.uid === (process.geteuid?.() ?? -1);
  } catch { return false; }
}

/** systemd's list ("a:b"), skipping the notifier unit's own directory. */
function guardEntry(list: string | undefined): string | null {
  for (const d of (list ?? '').split(':')) {
    if (d.startsWith('/') && !d.endsWith(`/${NOTIFY_STATE_NAME}`)) return d;
  }
  return null;
}

/** /var/lib/warden-guard (WARDEN_GUARD_STATE_DIR replaces it for tests and packaging). */
export const systemStateDir = (env: NodeJS.ProcessEnv = process.env): string =>
  env.WARDEN_GUARD_STATE_DIR && env.WARDEN_GUARD_STATE_DIR.startsWith('/') ? env.WARDEN_GUARD_STATE_DIR : `/var/lib/${GUARD_STATE_NAME}`;
export const systemRuntimeDir = (env: NodeJS.ProcessEnv = process.env): string =>
  env.WARDEN_GUARD_RUNTIME_DIR && env.WARDEN_GUARD_RUNTIME_DIR.startsWith('/') ? env.WARDEN_GUARD_RUNTIME_DIR : `/run/${GUARD_STATE_NAME}`;

/**
 * The state directory: $STATE_DIRECTORY under the guard unit (or `systemd-run -p
 * StateDirectory=warden-guard`); else the system guard directory when it is ours (a
 * command run as the warden account); else $XDG_STATE_HOME/warden or ~/.local/state/warden.
 */
export function stateBase(env: NodeJS.ProcessEnv = process.env): StateBase {
  const sd = guardEntry(env.STATE_DIRECTORY);
  if (sd) return { dir: sd, deployment: true };
  const sys = systemStateDir(env);
  if (ownDir(sys)) return { dir: sys, deployment: true };
  const xdg = env.XDG_STATE_HOME;
  return { dir: join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.local', 'state'), 'warden'), deployment: false };
}

/** The runtime directory for the control socket, or null (then it lives in the store's control/). */
export function runtimeBase(env: NodeJS.ProcessEnv = process.env): string | null {
  const rd = guardEntry(env.RUNTIME_DIRECTORY);
  if (rd) return rd;
  const sys = systemRuntimeDir(env);
  return ownDir(sys) ? sys : null;
}

export interface StoreLocation {
  root: string;
  id: string;
  mode: StoreMode;
  /** Absolute path of the store directory. */
  dir: string;
  base: StateBase;
  /** Directory for the control socket outside the store (deployment), else null. */
  runtimeDir: string | null;
}

/**
 * Where this root's store is (docs/CONTRACT.md §Store). `exists` tells a caller that may create it which
 * one it would create: the deployment always creates in the state directory, a session
 * embedded.
 */
export function locateStore(root: string, env: NodeJS.ProcessEnv = process.env, opts: { state?: boolean } = {}): StoreLocation & { exists: boolean } {
  const base = stateBase(env);
  const id = rootId(root);
  const state = join(base.dir, STORES_DIR, id);
  const rt = runtimeBase(env);
  const stateExists = (() => { try { return lstatSync(state).isDirectory(); } catch { return false; } })();
  // opts.state: a profile's root, whose directory warden does not own (docs/PROFILES.md,
  // "A profile's root"), keeps its store in the state directory, never inside it.
  if (base.deployment || stateExists || opts.state) {
    return { root, id, mode: 'state', dir: state, base, runtimeDir: rt ? join(rt, id) : null, exists: stateExists };
  }
  const embedded = join(root, EMBEDDED_STORE);
  let exists = false;
  try { exists = lstatSync(embedded) !== null; } catch { exists = false; }
  return { root, id, mode: 'embedded', dir: embedded, base, runtimeDir: null, exists };
}

/** Where the store of `root` lives, for modules that publish things beside it (docs/CONTRACT.md §Runtime view). */
export function storeDirOf(root: string, env: NodeJS.ProcessEnv = process.env): string {
  return locateStore(root, env).dir;
}
