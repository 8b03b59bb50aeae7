/**
 * A profile's paths on one machine (docs/PROFILES.md, "Paths"): `~` is the home directory,
 * `<project>` a project's directory, `<root>` the guarded root; a path without its
 * placeholder's value (no project given) is left out. Globs are picomatch's (`*`, `**`,
 * `{a,b}`), matching dot files too. Pure.
 */
import picomatch from 'picomatch';
import { posix } from 'node:path';
import { parseKeyPattern, type KeyPattern } from './keys.js';
import type { ProfileData, ProfileFile, Rule, RuntimeWrite } from './schema.js';

export interface Places { home?: string; project?: string; root?: string }

/** The absolute path (or glob) a profile path stands for here, or undefined when its placeholder has no value. */
export function expandPath(path: string, places: Places): string | undefined {
  const sub = (base: string | undefined, rest: string) => (base === undefined ? undefined : posix.join(base, rest));
  if (path.startsWith('~/')) return sub(places.home, path.slice(2));
  if (path.startsWith('<project>/')) return sub(places.project, path.slice('<project>/'.length));
  if (path.startsWith('<root>/')) return sub(places.root, path.slice('<root>/'.length));
  return path;
}

export const isGlob = (path: string): boolean => picomatch.scan(path).isGlob;

/** The [[files]] entry a concrete absolute path belongs to: an exact path first, else the first glob that matches. */
export function fileEntryFor(profile: ProfileData, absPath: string, places: Places): ProfileFile | undefined {
  const expanded = profile.files.map((f) => ({ f, p: expandPath(f.path, places) }));
  const exact = expanded.find(({ p }) => p !== undefined && !isGlob(p) && p === absPath);
  if (exact) return exact.f;
  return expanded.find(({ p }) => p !== undefined && isGlob(p) && picomatch(p, { dot: true })(absPath))?.f;
}

/** Everything a profile says about one of its files, with key patterns parsed. */
export interface FileFacts {
  entry: ProfileFile;
  rules: { rule: Rule; key: KeyPattern }[];
  credentials: { group: string; keys: KeyPattern[] }[];
  runtimeWrites: { write: RuntimeWrite; keys: KeyPattern[]; except: KeyPattern[] }[];
}

const keysOf = (list: readonly string[]): KeyPattern[] => list.map((k) => parseKeyPattern(k)).filter((k): k is KeyPattern => k !== undefined);

export function factsFor(profile: ProfileData, entry: ProfileFile): FileFacts {
  const rules = entry.rules !== undefined && Object.hasOwn(profile.rules, entry.rules) ? profile.rules[entry.rules] ?? [] : [];
  return {
    entry,
    rules: rules.flatMap((rule) => { const key = parseKeyPattern(rule.key); return key ? [{ rule, key }] : []; }),
    credentials: profile.credentials.filter((c) => c.file === entry.path).map((c) => ({ group: c.group, keys: keysOf(c.keys) })),
    runtimeWrites: profile.runtime_writes.filter((w) => w.file === entry.path).map((w) => ({ write: w, keys: keysOf(w.keys), except: keysOf(w.except ?? []) })),
  };
}
