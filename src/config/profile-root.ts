/**
 * A profile's root (docs/PROFILES.md, "A profile's root"): a directory that holds a runtime's
 * files (the home directory, or a project's) and none of warden's own. What warden guards
 * there is recorded once, at `warden init --profile`, in the authenticated baseline (never
 * read again from the profile file, which an agent of the same user could change): the
 * profile's name, the level, and each file's path relative to the root with its format.
 * Pure.
 */
import { quickConfig } from './quick-config.js';
import type { WardenConfig } from './warden-config.js';

export interface ProfileRootFile {
  /** Relative to the root, a picomatch glob or a plain path; never absolute, never `..`. */
  path: string;
  format: string;
}

export interface ProfileRootRecord {
  profile: string;
  level: 'user' | 'project';
  files: ProfileRootFile[];
  /**
   * warden's own settings for this root (docs/PROFILES.md, "A profile's root"): what
   * `init --settings` was given, as the warden.toml schema normalised it, without `protect`
   * and `[credentials]` (the recorded files decide those). Absent: the built-in defaults.
   */
  settings?: ProfileRootSettings;
}

/** The settings a profile's root may record: warden.toml's keys but the protected set. */
export type ProfileRootSettings = Omit<WardenConfig, 'protect' | 'credentials'>;

/** The settings a record holds, as the guard reads them (quickConfig: no zod), or null when they are not plainly valid. */
export function recordSettings(v: unknown): ProfileRootSettings | null {
  if (!isObj(v) || Object.hasOwn(v, 'protect') || Object.hasOwn(v, 'credentials')) return null;
  const c = quickConfig(v);
  if (!c) return null;
  const { protect: _p, credentials: _c, ...rest } = c;
  return rest;
}

const NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A relative path (or glob) warden can protect: no `.`/`..` part, not absolute, not warden's own temp names. */
export function relativePattern(p: unknown): p is string {
  if (typeof p !== 'string' || p === '' || p.startsWith('/') || p.includes('\0') || p.length > 1024) return false;
  return p.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

/** The record as the index holds it, or null when it is not one (the index is then malformed). */
export function parseProfileRootRecord(v: unknown): ProfileRootRecord | null {
  if (!isObj(v) || typeof v.profile !== 'string' || !NAME.test(v.profile) || (v.level !== 'user' && v.level !== 'project')) return null;
  if (!Array.isArray(v.files) || v.files.length === 0 || v.files.length > 256) return null;
  const files: ProfileRootFile[] = [];
  for (const f of v.files as unknown[]) {
    if (!isObj(f) || !relativePattern(f.path) || typeof f.format !== 'string' || f.format.length > 64) return null;
    files.push({ path: f.path, format: f.format });
  }
  if (v.settings === undefined) return { profile: v.profile, level: v.level, files };
  const settings = recordSettings(v.settings);
  return settings ? { profile: v.profile, level: v.level, files, settings } : null;
}

/**
 * A glob's top-level `{a,b,c}` groups spelt out (`.claude/{agents,commands}/**` → two globs):
 * each then has its own base directory, so a pass lists `.claude/agents` rather than all of
 * `.claude` (where a runtime keeps its transcripts). Nested groups are left to picomatch.
 */
export function expandBraces(p: string): string[] {
  const m = /\{([^{}]*)\}/.exec(p);
  if (!m || !m[1]!.includes(',')) return [p];
  const head = p.slice(0, m.index), tail = p.slice(m.index + m[0].length);
  return m[1]!.split(',').flatMap((alt) => expandBraces(`${head}${alt}${tail}`));
}
