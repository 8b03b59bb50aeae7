/** A path relative to the root, as the CLI and sanctioned changes accept it. Pure, and light to import. */
import { WardenError } from './errors.js';

export function normalizeRelPath(path: string): string {
  const p = path.replace(/^\.\//, '').replace(/\/+/g, '/');
  if (p === '' || p.startsWith('/') || p.split('/').some((s) => s === '..' || s === '.' || s === '')) {
    throw new WardenError(`"${path}" must be a path relative to the root, like orgs/team.toml`);
  }
  return p;
}
