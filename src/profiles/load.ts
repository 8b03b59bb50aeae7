/**
 * Loading profiles (docs/PROFILES.md, "Where profiles come from"): the ones shipped in the
 * package's profiles/ folder, then a user's own folder (by default
 * `$XDG_CONFIG_HOME/warden/profiles`, else `~/.config/warden/profiles`). A user's profile
 * adds a runtime; it never replaces a shipped one of the same name (refused, located).
 * Every error is located by file, line and column; a profile with an error is not loaded.
 */
import { readdirSync, readFileSync, lstatSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Located } from '../common/errors.js';
import { errnoCode } from '../common/errors.js';
import { parseToml } from '../toml/index.js';
import { validateToml } from '../toml/schema.js';
import { checkProfile } from './check.js';
import { profileSchema, type ProfileData } from './schema.js';

export interface Profile {
  data: ProfileData;
  /** shipped: in warden's package; user: in the user's profiles folder. */
  origin: 'shipped' | 'user';
  /** The profile file's path. */
  file: string;
}

export interface LoadResult { profiles: Profile[]; errors: Located[] }

/** The package's own profiles/ folder (dist/src/<dir>/ and dist/src/chunks/ are both three below the package). */
export const SHIPPED_DIR = fileURLToPath(new URL('../../../profiles/', import.meta.url));

/** The user's profiles folder for a home directory and environment. */
export function userProfilesDir(home: string, env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg && xdg.startsWith('/') ? xdg : join(home, '.config'), 'warden', 'profiles');
}

/** Parse and check one profile text. `stem` is its file name without ".toml". */
export function parseProfile(source: string, file: string, stem: string): { ok: true; data: ProfileData } | { ok: false; errors: Located[] } {
  const t = parseToml(source, file);
  if (!t.ok) return { ok: false, errors: [t.error] };
  const v = validateToml(profileSchema, t.value, source, file);
  if (!v.ok) return { ok: false, errors: v.errors };
  const errors = checkProfile(v.value, source, file, stem);
  return errors.length ? { ok: false, errors } : { ok: true, data: v.value };
}

/** Every `*.toml` of a folder, sorted; a missing user folder has none (a missing shipped one is an error). Symlinks and non-files are refused. */
function profileFiles(dir: string, errors: Located[], required: boolean): string[] {
  let names: string[];
  try { names = readdirSync(dir); } catch (err) {
    if ((errnoCode(err) === 'ENOENT' || errnoCode(err) === 'ENOTDIR') && !required) return [];
    if (required) { errors.push({ file: dir, message: `warden's own profiles are missing from its package: ${(err as Error).message}` }); return []; }
    errors.push({ file: dir, message: `cannot read the profiles folder: ${(err as Error).message}` });
    return [];
  }
  const out: string[] = [];
  for (const n of names.filter((x) => x.endsWith('.toml')).sort()) {
    const f = join(dir, n);
    const st = lstatSync(f, { throwIfNoEntry: false });
    if (!st?.isFile()) { errors.push({ file: f, message: 'a profile must be a regular file (not a link, a folder or a device)' }); continue; }
    if (st.size > 1024 * 1024) { errors.push({ file: f, message: 'a profile larger than 1 MiB is refused' }); continue; }
    out.push(f);
  }
  return out;
}

export function loadProfiles(opts: { shippedDir?: string; userDir?: string } = {}): LoadResult {
  const errors: Located[] = [];
  const profiles: Profile[] = [];
  const seen = new Map<string, Profile>();
  const from = (dir: string, origin: Profile['origin']) => {
    for (const f of profileFiles(dir, errors, origin === 'shipped')) {
      const stem = basename(f, '.toml');
      const r = parseProfile(readFileSync(f, 'utf8'), f, stem);
      if (!r.ok) { errors.push(...r.errors); continue; }
      const before = seen.get(r.data.name);
      if (before) {
        errors.push({ file: f, line: 1, column: 1, key: 'name', message: `a profile named "${r.data.name}" is already ${before.origin === 'shipped' ? 'shipped with warden' : 'loaded'} (${before.file}); a user's profile adds a runtime and never replaces one: choose another name` });
        continue;
      }
      const p: Profile = { data: r.data, origin, file: f };
      seen.set(r.data.name, p);
      profiles.push(p);
    }
  };
  from(opts.shippedDir ?? SHIPPED_DIR, 'shipped');
  if (opts.userDir) from(opts.userDir, 'user');
  return { profiles, errors };
}
