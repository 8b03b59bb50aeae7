/**
 * Is this root held by a deployed guard whose store the caller cannot use
 * (docs/DEPLOY.md, "Who runs which command")? The deployment's directories
 * (/var/lib/warden-guard, /run/warden-guard) are made by systemd for the guard's own
 * account; a caller that is not that account finds no store of its own for the root
 * and, without this, would be told "not initialised" and could make a second store
 * that nothing guards.
 *
 * A root counts as held when the guard's state directory exists and belongs to another
 * account, and any of these names the root: its store `stores/<root-id>` (visible to
 * root), its control directory `/run/warden-guard/<root-id>` or the runtime manifest
 * `/run/warden-guard/manifest.json` (both readable by everyone) or the guard's unit file
 * `/etc/systemd/system/warden-guard.service`.
 */
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { rootId, stateBase, STORES_DIR, systemRuntimeDir, systemStateDir } from './location.js';

export interface DeployedGuard {
  root: string;
  stateDir: string;
  runtimeDir: string;
  storeDir: string;
  uid: number;
  /** The guard account's name (from /etc/passwd), or "#uid" when it has none. */
  account: string;
  /** What named the root: its store, its socket directory, the runtime manifest or the guard's unit file. */
  seen: 'store' | 'socket' | 'manifest' | 'unit';
}

const isDir = (p: string): boolean => { try { return lstatSync(p).isDirectory(); } catch { return false; } };

/** The name of uid in passwd text, or null. Pure. */
export function accountName(passwd: string, uid: number): string | null {
  for (const line of passwd.split('\n')) {
    const f = line.split(':');
    if (f.length >= 3 && Number(f[2]) === uid && f[0]) return f[0];
  }
  return null;
}

function nameOf(uid: number): string {
  try { return accountName(readFileSync('/etc/passwd', 'utf8'), uid) ?? `#${uid}`; } catch { return `#${uid}`; }
}

function manifestNames(runtimeDir: string, root: string): boolean {
  try {
    const raw = readFileSync(join(runtimeDir, 'manifest.json'));
    if (raw.length > 4 * 1024 * 1024) return false;
    const v = JSON.parse(raw.toString('utf8')) as { root?: { path?: unknown } };
    return v?.root?.path === root;
  } catch { return false; }
}

/** The root a guard unit's text guards (`ExecStart=… run --guard --root ROOT`), or null. Pure. */
export function unitRoot(unitText: string): string | null {
  const m = /^ExecStart=.*\srun\s+--guard\s+--root\s+(\/\S*)\s*$/m.exec(unitText);
  return m ? m[1]! : null;
}

export const GUARD_UNIT_FILE = '/etc/systemd/system/warden-guard.service';

function unitNames(unitFile: string, root: string): boolean {
  try { return unitRoot(readFileSync(unitFile, 'utf8')) === root; } catch { return false; }
}

/**
 * The deployed guard that holds `root`, when the caller is not its account; else null.
 * The unit file (0644, kept across reboots) names the root even before the guard has
 * started since boot, when /run/warden-guard is still empty.
 */
export function deployedGuardFor(root: string, env: NodeJS.ProcessEnv = process.env, unitFile = GUARD_UNIT_FILE): DeployedGuard | null {
  if (stateBase(env).deployment) return null; // the guard's own account: its store is right there
  const stateDir = systemStateDir(env);
  let st;
  try { st = lstatSync(stateDir); } catch { return null; }
  if (!st.isDirectory() || st.uid === (process.geteuid?.() ?? -1)) return null;
  const id = rootId(root);
  const runtimeDir = systemRuntimeDir(env);
  const storeDir = join(stateDir, STORES_DIR, id);
  const seen = isDir(storeDir) ? 'store' : isDir(join(runtimeDir, id)) ? 'socket' : manifestNames(runtimeDir, root) ? 'manifest' : unitNames(unitFile, root) ? 'unit' : null;
  if (!seen) return null;
  return { root, stateDir, runtimeDir, storeDir, uid: st.uid, account: nameOf(st.uid), seen };
}

/** A word safe to paste into a shell as one argument. Pure. */
export function shellWord(s: string): string {
  return /^[A-Za-z0-9_./=:@%+,-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The command that works for a held root: the same arguments, run as the guard's account.
 * sudo drops $EDITOR and $VISUAL, so `edit` asks it to keep them: without, the caller's
 * editor is not the one started (and with no terminal, none can be). Pure.
 */
export function asGuardAccount(g: Pick<DeployedGuard, 'account' | 'root'>, args: readonly string[]): string {
  const who = g.account.startsWith('#') ? `'${g.account}'` : g.account;
  const keep = args[0] === 'edit' ? ' --preserve-env=EDITOR,VISUAL' : '';
  return `sudo -u ${who}${keep} warden ${[...args, '--root', g.root].map(shellWord).join(' ')}`;
}

/** What a caller who is not the guard's account is told about a held root. Pure. */
export function heldRootMessage(g: DeployedGuard, args: readonly string[], caller: string, command: string): string {
  const what = command === 'init'
    ? `${g.root} is already guarded by the deployed warden guard, which keeps its store in ${g.stateDir} (account ${g.account}); 'warden init' here would make a second store that nothing guards, so it makes none.`
    : `${g.root} is guarded by the deployed warden guard (account ${g.account}); its store is ${g.storeDir}, which ${caller}: this command would only find, or make, an empty store of its own.`;
  // init as the guard's account would only say that the baseline exists: show it instead.
  const next = command === 'init'
    ? `Its baseline is there: ${asGuardAccount(g, ['status'])} shows it`
    : `Run it as the guard's account: ${asGuardAccount(g, args)}`;
  return `${what} ${next} (docs/DEPLOY.md, "Making changes the right way"). The approved state the runtime may read is in ${join(g.runtimeDir, 'manifest.json')}.`;
}
