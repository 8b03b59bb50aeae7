/** A path relative to the root, as the CLI and sanctioned changes accept it. Pure, and light to import. */
import { WardenError } from './errors.js';

export function normalizeRelPath(path: string): string {
  const p = path.replace(/^\.\//, '').replace(/\/+/g, '/');
  if (p === '' || p.startsWith('/') || p.split('/').some((s) => s === '..' || s === '.' || s === '')) {
    throw new WardenError(`"${path}" must be a path relative to the root, like orgs/team.toml`);
  }
  return p;
}

/** The directory part of a slash path ('' for a name at the top). The one copy: fsx walks and the protected set use it. */
export const dirOf = (p: string): string => { const i = p.lastIndexOf('/'); return i < 0 ? '' : p.slice(0, i); };
/** The last component of a slash path. */
export const baseOf = (p: string): string => p.slice(p.lastIndexOf('/') + 1);
