/**
 * Which paths of the root are protected, and as what kind (docs/CONTRACT.md §Root and §Baseline). Pure: it only
 * looks at warden.toml's settings and relative paths.
 */
import picomatch from 'picomatch';
import { dirOf } from '../common/rel-path.js';
import { hasRawBytes } from '../common/names.js';
import type { WardenConfig } from './warden-config.js';
import { expandBraces, type ProfileRootRecord } from './profile-root.js';

export type FileKind = 'warden' | 'conditions' | 'guests' | 'credentials' | 'org' | 'block' | 'text';

/**
 * `deep`: a glob that can match below its base's own entries (a globstar, or a wildcard before
 * the last segment such as `deep/STAR/x.txt`): its base is listed recursively, not one level.
 */
interface Pattern { pattern: string; kind: FileKind; match: (rel: string) => boolean; glob: boolean; base: string; deep: boolean }

export interface ProtectedSet {
  /** The kind of a protected path, or null when the path is not protected. */
  kindOf(rel: string): FileKind | null;
  /**
   * Directories that hold protected paths, parents before children (watched, and restored
   * when missing); '' is the root itself, whose mode and owner are approved like the rest.
   */
  dirs: string[];
  /** Exact (non-glob) protected paths. */
  exactPaths: string[];
  /** Directories whose entries must be listed to find files matching a glob. */
  globDirs: string[];
  /**
   * Every directory a pass lists (globDirs, and every protected directory but the root):
   * beside the glob matches, a name that is not UTF-8 is found there (kindOf).
   */
  listedDirs: string[];
  /** True when `rel` is a directory that is, or contains, a protected directory. */
  isProtectedDir(rel: string): boolean;
  /** True when `rel` is a `**` glob's base or anywhere below one (a directory there may hold protected files). */
  inDeepGlob(rel: string): boolean;
  patterns: readonly Pattern[];
}

export const STORE_DIR = 'snapshots';

function ancestors(dir: string): string[] {
  const out: string[] = [];
  let d = dir;
  while (d !== '') { out.unshift(d); d = dirOf(d); }
  return out;
}

/**
 * A glob compiled on first use: a pass that finds every listed name in the baseline (a
 * clean `verify`) never needs the matcher, and compiling is most of picomatch's cost.
 * dot: false keeps our own temp files (".name.warden-….tmp") out of every glob.
 */
function lazyGlob(pattern: string): (rel: string) => boolean {
  let match: ((rel: string) => boolean) | null = null;
  return (rel) => (match ??= picomatch(pattern, { dot: false }))(rel);
}

/**
 * The settings a root runs on: its approved warden.toml, or for a profile's root
 * (config/profile-root.ts) the built-in defaults with the profile's files recorded at init.
 */
export type RootSettings = WardenConfig & { profileRoot?: ProfileRootRecord };

/**
 * A profile's root protects the profile's files only (docs/PROFILES.md, "A profile's root"):
 * none of the example runtime's fixed paths, no warden.toml, no credential TOML files.
 */
function profileSpecs(r: ProfileRootRecord): { pattern: string; kind: FileKind }[] {
  return r.files.flatMap((f) => expandBraces(f.path).map((pattern) => ({ pattern, kind: 'text' as const })));
}

/** Only the paths matter here: a full WardenConfig, or the same settings read without zod (quick-config.ts). */
export function protectedSet(config: (Pick<WardenConfig, 'protect' | 'credentials'> | { protect: { path: string }[]; credentials: { files: string[] } }) & { profileRoot?: ProfileRootRecord }): ProtectedSet {
  const profile = config.profileRoot !== undefined;
  const specs: { pattern: string; kind: FileKind }[] = config.profileRoot ? profileSpecs(config.profileRoot) : [
    { pattern: 'config/warden.toml', kind: 'warden' },
    { pattern: 'config/conditions.toml', kind: 'conditions' },
    { pattern: 'config/guests.toml', kind: 'guests' },
    ...config.credentials.files.map((f) => ({ pattern: f, kind: 'credentials' as const })),
    { pattern: 'orgs/*.toml', kind: 'org' },
    { pattern: 'blocks/conditional/*.md', kind: 'block' },
    ...config.protect.map((p) => ({ pattern: p.path, kind: 'text' as const })),
  ];
  const patterns: Pattern[] = [];
  for (const s of specs) {
    // warden's own store is never a protected path: it is guarded by its HMAC instead.
    if (s.pattern === STORE_DIR || s.pattern.startsWith(`${STORE_DIR}/`)) continue;
    const scan = picomatch.scan(s.pattern);
    const glob = scan.isGlob;
    const base = glob ? scan.base : dirOf(s.pattern);
    const m = glob ? lazyGlob(s.pattern) : (rel: string) => rel === s.pattern;
    const deep = glob && (s.pattern.includes('**') || scan.glob.includes('/'));
    patterns.push({ pattern: s.pattern, kind: s.kind, match: m, glob, base, deep });
  }
  const dirSet = new Set<string>(['']);
  for (const p of patterns) for (const a of ancestors(p.base)) dirSet.add(a);
  const dirs = [...dirSet].sort((a, b) => a.split('/').length - b.split('/').length || (a < b ? -1 : a > b ? 1 : 0)); // not localeCompare: ICU's collation data is 2 MB of a guard's RSS
  const cache = new Map<string, FileKind | null>();
  const deepBases = patterns.filter((p) => p.deep).map((p) => p.base);
  /**
   * Names are bytes (docs/CONTRACT.md §Detection): a name that is not UTF-8 (common/names.ts), in a protected
   * directory other than the root or anywhere below a `**` glob's base, is an unexpected
   * file whatever the globs say of its decoded form (readers decode such a name each their
   * own way, if at all). Its kind: what a glob gives it, else 'text'.
   */
  const rawUnexpected = (rel: string): boolean => {
    if (!hasRawBytes(rel)) return false;
    const d = dirOf(rel);
    // A profile's root shares its directories with the runtime's own files (transcripts,
    // caches): only below a `**` glob's base is such a name the profile's.
    return (!profile && d !== '' && dirSet.has(d)) || deepBases.some((b) => b === '' || d === b || d.startsWith(`${b}/`));
  };
  const globDirs = [...new Set(patterns.filter((p) => p.glob).map((p) => p.base))];
  return {
    patterns,
    dirs,
    exactPaths: patterns.filter((p) => !p.glob).map((p) => p.pattern),
    globDirs,
    listedDirs: [...new Set([...globDirs, ...dirs.filter((d) => d !== '')])],
    kindOf(rel) {
      let k = cache.get(rel);
      if (k !== undefined) return k;
      k = null;
      if (rel !== STORE_DIR && !rel.startsWith(`${STORE_DIR}/`)) {
        for (const p of patterns) if (p.match(rel)) { k = p.kind; break; }
        if (k === null && rawUnexpected(rel)) k = 'text';
      }
      // Only protected paths are remembered: a flood of names that match nothing (200,000 in
      // orgs/, listed by every rescan) would otherwise fill and clear this map over and over,
      // each name outliving a young-generation collection (+30 MB of the guard's RSS).
      if (k === null) return k;
      if (cache.size > 50_000) cache.clear();
      cache.set(rel, k);
      return k;
    },
    isProtectedDir(rel) {
      return dirSet.has(rel);
    },
    inDeepGlob(rel) {
      return deepBases.some((b) => b === '' || rel === b || rel.startsWith(`${b}/`));
    },
  };
}
