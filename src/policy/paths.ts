/**
 * Path helpers shared by conditions.toml keys, org/guest folders and explain targets.
 * Pure string logic: these are the runtime's virtual paths, never files on this machine.
 */

export type PathSection = 'memories' | 'workspace';

/** Decimal snowflake, kept as a string (ids exceed 2^53). No leading zero, so "0123" and "123" cannot both exist. */
export const SNOWFLAKE_RE = /^[1-9][0-9]{0,19}$/;

export function isSnowflake(s: string): boolean {
  return SNOWFLAKE_RE.test(s);
}

/**
 * A key or path below a section root is canonical when it starts with "/" and has no
 * empty, "." or ".." segment (a trailing "/" is allowed and means "directory / prefix").
 * Non-canonical spellings are refused so that "/a/../secrets/x" can never dodge a rule.
 */
export function isCanonicalRelative(rel: string): boolean {
  if (!rel.startsWith('/')) return false;
  if (rel === '/') return true;
  if (CONTROL.test(rel)) return false;
  const inner = rel.endsWith('/') ? rel.slice(1, -1) : rel.slice(1);
  // An empty, "." or ".." segment, by one native match (a split and a callback per segment
  // cost ~50 ms per apply of the seed's 468 rules and 600 folders, cold).
  return !BAD_SEGMENT.test(inner);
}

const CONTROL = /[\u0000-\u001f\u007f]/;
/** In the part between the leading "/" and an optional trailing "/": an empty, "." or ".." segment. */
const BAD_SEGMENT = /^$|^\/|\/$|\/\/|(?:^|\/)\.\.?(?:\/|$)/;

/** The definition isCanonicalRelative is held to (test/policy/scale.test.ts): segment by segment. */
export function isCanonicalRelativeBySegments(rel: string): boolean {
  if (!rel.startsWith('/')) return false;
  if (rel === '/') return true;
  if (CONTROL.test(rel)) return false;
  const inner = rel.endsWith('/') ? rel.slice(1, -1) : rel.slice(1);
  return inner.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..');
}

/**
 * Split an absolute runtime path ("/memories/private/a.md") into its section and the part
 * relative to the section root ("/private/a.md"). "/memories" and "/memories/" both map to
 * "/". Returns null for anything outside /memories/ and /workspace/ or non-canonical.
 */
export function splitTarget(path: string): { section: PathSection; rel: string } | null {
  const m = /^\/(memories|workspace)(\/.*)?$/.exec(path);
  if (!m) return null;
  const rel = m[2] ?? '/';
  if (!isCanonicalRelative(rel)) return null;
  return { section: m[1] as PathSection, rel };
}

/**
 * Does a key match a relative path? A key ending in "/" matches as a prefix on whole
 * segments ("/private/" matches "/private", "/private/" and "/private/a", never
 * "/privateer"); any other key matches exactly, ignoring a trailing "/" on the path so
 * that "/notes.md/" cannot slip past an exact rule for "/notes.md".
 */
export function keyMatches(key: string, rel: string): boolean {
  if (key.endsWith('/')) {
    if (key === '/') return true;
    return rel === key.slice(0, -1) || rel.startsWith(key);
  }
  const path = rel.length > 1 && rel.endsWith('/') ? rel.slice(0, -1) : rel;
  return path === key;
}

/** Specificity of a key for choosing which rule to report: longer keys are more specific. */
export function keySpecificity(key: string): number {
  return key.length;
}
