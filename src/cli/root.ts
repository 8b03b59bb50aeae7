/**
 * Which root a command works on, and what its PATH arguments mean.
 * As git finds its repository: --root DIR, else $WARDEN_ROOT, else the nearest directory
 * at or above the current one that holds config/warden.toml.
 */
import { realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep, basename } from 'node:path';
import { EXIT, WardenError } from '../common/errors.js';
// Not from changes/: every command discovers its root, and that must not load the change machinery.
import { normalizeRelPath } from '../common/rel-path.js';

export const WARDEN_TOML_REL = 'config/warden.toml';

function isFile(p: string): boolean {
  try { return statSync(p).isFile(); } catch { return false; }
}

export function hasWardenToml(dir: string): boolean {
  return isFile(join(dir, WARDEN_TOML_REL));
}

/** The nearest directory at or above `from` holding config/warden.toml, or null. */
export function discoverRoot(from: string): string | null {
  let d = resolve(from);
  for (;;) {
    if (hasWardenToml(d)) return d;
    const up = dirname(d);
    if (up === d) return null;
    d = up;
  }
}

export interface RootChoice { root: string; how: 'flag' | 'env' | 'found' | 'cwd' }

/** Resolve the root. `fallbackToCwd`: commands that need none (install-units) take the cwd. */
export function chooseRoot(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string, fallbackToCwd = false): RootChoice {
  const given = flag ?? (env.WARDEN_ROOT || undefined);
  if (given !== undefined) {
    const abs = resolve(cwd, given);
    let st;
    try { st = statSync(abs); } catch { throw new WardenError(`root "${given}" does not exist (${flag !== undefined ? '--root' : '$WARDEN_ROOT'})`); }
    if (!st.isDirectory()) throw new WardenError(`root "${given}" is not a directory`);
    return { root: realpathSync(abs), how: flag !== undefined ? 'flag' : 'env' };
  }
  const found = discoverRoot(cwd);
  if (found) return { root: realpathSync(found), how: 'found' };
  if (fallbackToCwd) return { root: realpathSync(cwd), how: 'cwd' };
  throw new WardenError(`not inside a warden root: no ${WARDEN_TOML_REL} in ${cwd} or any directory above it (give --root DIR or set $WARDEN_ROOT)`);
}

const inside = (dir: string, p: string): boolean => p === dir || p.startsWith(dir.endsWith(sep) ? dir : dir + sep);

/**
 * A PATH argument as a path relative to the root. Relative paths are relative to the
 * current directory when it is inside the root (as with git), else to the root itself
 * (`warden --root /srv/agent why orgs/x.toml` from anywhere); absolute paths must lie
 * inside the root.
 */
export function rootRelative(root: string, given: string, cwd: string = process.cwd()): string {
  if (given === '') throw new WardenError('an empty path is not a path in the root', EXIT.usage);
  let realCwd = cwd;
  try { realCwd = realpathSync(cwd); } catch { /* keep as given */ }
  const base = inside(root, realCwd) ? realCwd : root;
  let abs = resolve(base, given);
  if (!inside(root, abs)) {
    // The same place reached through a symlinked directory (e.g. /tmp → /private/tmp).
    try { abs = join(realpathSync(dirname(abs)), basename(abs)); } catch { /* parent missing: keep */ }
  }
  if (!inside(root, abs)) {
    throw new WardenError(`${given} is outside the root ${root}; warden protects files inside it only${isAbsolute(given) ? '' : ` (relative paths are taken from ${base})`}`, EXIT.usage);
  }
  const rel = relative(root, abs).split(sep).join('/');
  if (rel === '') throw new WardenError(`${given} is the root itself, not a file in it`, EXIT.usage);
  return normalizeRelPath(rel);
}
