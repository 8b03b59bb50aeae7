/**
 * What a profile's root guards (docs/PROFILES.md, "A profile's root"): the profile's files of
 * one level (`user`: under the home directory; `project`: under a project's), each with its
 * format. The root is the deepest directory that holds them all (`~/.claude`, `~/.codex`,
 * a project's directory), so that two runtimes of one user are two roots, and warden approves
 * no directory above the runtime's own; each path is recorded relative to it. Left out, each
 * with its reason: a file that is a credential as a whole (its bytes would be kept as an
 * approved file's are), and one the runtime rewrites by itself in every key (its own writes
 * would leave nothing to guard). A file whose named keys the runtime rewrites (Codex's
 * tokens in `auth.json`) is guarded: those writes are told apart key by key
 * (docs/PROFILES.md, "The runtime's own writes"). Pure.
 */
import picomatch from 'picomatch';
import { relativePattern, type ProfileRootRecord } from '../config/profile-root.js';
import type { ProfileData } from './schema.js';

export type RootLevel = ProfileRootRecord['level'];

export interface ProfileRootPlan {
  record: ProfileRootRecord | null;
  /** The root, relative to the home or project directory ('' for that directory itself). */
  dir: string;
  /** The profile's files of this level that are not guarded, with why. */
  left: { path: string; why: string }[];
}

const PREFIX: Record<RootLevel, string> = { user: '~/', project: '<project>/' };

export function profileRootPlan(profile: ProfileData, level: RootLevel): ProfileRootPlan {
  const files: ProfileRootRecord['files'] = [];
  const left: ProfileRootPlan['left'] = [];
  /** Files whose credentials the runtime refreshes by itself: guarded only inside the directory the others make (never widening the root). */
  const refreshed: { path: string; rel: string; format: string }[] = [];
  for (const f of profile.files) {
    if (f.level !== level) continue;
    const ownKeys = profile.runtime_writes.filter((w) => w.file === f.path && w.mode === 'own').flatMap((w) => w.keys);
    const credKeys = profile.credentials.filter((c) => c.file === f.path).flatMap((c) => c.keys);
    if (credKeys.some((k) => k === '**' || k === '')) { left.push({ path: f.path, why: 'a credential file as a whole: its bytes are not kept as an approved file\'s are' }); continue; }
    if (ownKeys.includes('**')) { left.push({ path: f.path, why: 'the runtime rewrites it all the time by itself, in any key: there is nothing its own writes would leave to guard' }); continue; }
    const rel = f.path.startsWith(PREFIX[level]) ? f.path.slice(PREFIX[level].length) : '';
    if (!relativePattern(rel)) { left.push({ path: f.path, why: 'not a path below the directory' }); continue; }
    if (ownKeys.some((o) => credKeys.some((c) => overlaps(o, c)))) refreshed.push({ path: f.path, rel, format: f.format });
    else files.push({ path: rel, format: f.format });
  }
  const others = commonDir(files.map((f) => baseOf(f.path)));
  const alone = files.length === 0;
  for (const r of refreshed) {
    if (alone || others === '' || baseOf(r.rel) === others || baseOf(r.rel).startsWith(`${others}/`)) files.push({ path: r.rel, format: r.format });
    else left.push({ path: r.path, why: `outside the runtime's directory (${PREFIX[level]}${others}): guarding it would make the root a directory above the runtime's own` });
  }
  const dir = commonDir(files.map((f) => baseOf(f.path)));
  const under = (p: string) => (dir === '' ? p : p.slice(dir.length + 1));
  return { record: files.length ? { profile: profile.name, level, files: files.map((f) => ({ path: under(f.path), format: f.format })) } : null, dir, left };
}

/** Two key patterns that may name the same key: the same first part, or a wildcard there. */
function overlaps(a: string, b: string): boolean {
  const x = a.split('.')[0]!, y = b.split('.')[0]!;
  return x === y || x.startsWith('*') || y.startsWith('*');
}

/** The directory a path or glob lies in before any wildcard: `.claude` for `.claude/{a,b}/**`. */
function baseOf(p: string): string {
  const scan = picomatch.scan(p);
  const b = scan.isGlob ? scan.base : p.split('/').slice(0, -1).join('/');
  return b;
}

/** The deepest directory at or above every one of `dirs` ('' when they share none). */
export function commonDir(dirs: readonly string[]): string {
  if (dirs.length === 0) return '';
  let parts = dirs[0]!.split('/').filter((x) => x !== '');
  for (const d of dirs.slice(1)) {
    const q = d.split('/').filter((x) => x !== '');
    let i = 0;
    while (i < parts.length && i < q.length && parts[i] === q[i]) i++;
    parts = parts.slice(0, i);
  }
  return parts.join('/');
}
