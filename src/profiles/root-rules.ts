/**
 * Which profile rules apply to a path of a guarded root (docs/PROFILES.md, "Grants in
 * alerts, diffs and prompts"). A root has a profile: the example root's layout is the
 * `warden-example` profile, with `<root>` standing for the root; a root made for another
 * runtime passes its own profile and places. Pure.
 *
 * A place (the root, the home directory, a project) may hold characters a glob reads as
 * syntax (`/srv/a[1]/`): each is matched as a literal prefix, then the rest of the path
 * against the rest of the profile's path, so only the profile's own globs are globs.
 */
import { posix } from 'node:path';
import { factsFor, fileEntryFor, type FileFacts, type Places } from './paths.js';
import type { ProfileData, ProfileFile } from './schema.js';

/** A root's profile: the profile, and what its placeholders stand for here (`root` is the guarded root itself). */
export interface RootProfile {
  profile: ProfileData;
  places: Places & { root: string };
}

/** The example root's profile: every path is `<root>/…`. */
export const CLASSIC_PROFILE = 'warden-example';

const TOKENS: Record<keyof Places, string> = { root: '/warden-place-root', home: '/warden-place-home', project: '/warden-place-project' };

/**
 * The places as tokens no glob reads specially, and the path written from each place that
 * holds it (the nearest first: a root inside the home directory is matched as `<root>/…`
 * and as `~/…`), then as it is (a system path).
 */
function literalForms(places: Places, abs: string): { places: Places; forms: string[] } {
  const tokens: Places = {};
  const within: { len: number; form: string }[] = [];
  for (const k of Object.keys(TOKENS) as (keyof Places)[]) {
    const v = places[k];
    if (v === undefined) continue;
    tokens[k] = TOKENS[k];
    const base = v.length > 1 ? v.replace(/\/+$/, '') : v;
    if (abs === base || abs.startsWith(base === '/' ? '/' : `${base}/`)) within.push({ len: base.length, form: posix.join(TOKENS[k], abs.slice(base.length)) });
  }
  return { places: tokens, forms: [...within.sort((a, b) => b.len - a.len).map((w) => w.form), abs] };
}

/**
 * The facts the root's profile has for one of its files (`relPath`, relative to the root,
 * as alerts name it), or undefined when the profile says nothing about that path. A file
 * of the profile without grant rules still has facts (its credential keys, if any).
 */
export function rulesAt(rp: RootProfile, relPath: string): FileFacts | undefined {
  const entry = entryAt(rp, relPath);
  return entry ? factsFor(rp.profile, entry) : undefined;
}

/** The profile's entry for one of the root's files (`relPath`, relative to the root), or undefined. */
export function entryAt(rp: RootProfile, relPath: string): ProfileFile | undefined {
  if (relPath === '' || relPath === '.' || relPath.startsWith('/') || relPath.split('/').includes('..')) return undefined;
  const abs = posix.join(rp.places.root, relPath);
  const m = literalForms(rp.places, abs);
  for (const form of m.forms) {
    const entry = fileEntryFor(rp.profile, form, m.places);
    if (entry) return entry;
  }
  return undefined;
}

/**
 * The profile of a root made for a runtime (a user's `~/.claude`, a project's directory):
 * `dir` is the root relative to the home or project directory it stands in ('.claude'; ''
 * for that directory itself), so `~/` (or `<project>/`) is the root with `dir` taken off its
 * end. Undefined when the root does not end with `dir`.
 */
export function levelRootProfile(profile: ProfileData, level: 'user' | 'project', root: string, dir: string): RootProfile | undefined {
  const r = root.length > 1 ? root.replace(/\/+$/, '') : root;
  const d = dir.replace(/^\/+|\/+$/g, '');
  if (d !== '' && r !== `/${d}` && !r.endsWith(`/${d}`)) return undefined;
  const base = d === '' ? r : r.slice(0, r.length - d.length - 1) || '/';
  return { profile, places: level === 'user' ? { root: r, home: base } : { root: r, project: base } };
}
