/**
 * What a change to a file of a guarded root grants or takes away, as alerts, `warden diff`,
 * `warden why` and approval prompts say it (docs/PROFILES.md, "Grants in alerts, diffs and
 * prompts"). Pure: the root's profile, the path, both versions' bytes in; a bounded list out.
 *
 * Bounded: at most `max` changes (grants first), the rest counted; a value larger than
 * VALUE_MAX characters (as canonical JSON) is carried clipped, as text. A file warden keeps
 * credentials in is compared with every key a credential: only fingerprints come out.
 */
import { parseKeyPattern } from '../profiles/keys.js';
import { rulesAt, type RootProfile } from '../profiles/root-rules.js';
import type { FileFacts } from '../profiles/paths.js';
import { canonical } from './canonical.js';
import { compareTexts } from './index.js';
import type { ChangeKind, GrantChange } from './types.js';

/** One change as an alert or a reply carries it (docs/PROFILES.md): `key` raw, `words` escaped. */
export interface GrantRecord {
  path: string;
  key: string;
  change: ChangeKind;
  grant: boolean;
  credential?: string;
  old?: unknown;
  new?: unknown;
  /** `old` or `new` was larger than VALUE_MAX: carried as the start of its JSON text. */
  clipped?: true;
  words: string;
}

export interface RootGrants {
  /** At most `max` changes: grants first, then credentials, then other keys. */
  grants: GrantRecord[];
  /** "2 grants widened, 1 other change"; or why the file could not be compared key by key. */
  summary: string;
  /** How many changes were left out of `grants`. */
  left_off: number;
  /** A grant widened, or changed in a direction not known. */
  widens: boolean;
}

export const GRANTS_MAX = 50;
export const VALUE_MAX = 1000;
/**
 * A larger file is not compared key by key: the comparison costs about 10 µs per change
 * (an org file of 20,000 new members, 440 kB: 160–360 ms), paid by the guard on each alert.
 */
export const COMPARE_MAX_BYTES = 256 * 1024;

export interface GrantOptions {
  /** warden keeps credentials in this file (config/warden.toml `[credentials]`): every key is one. */
  secret?: boolean;
  max?: number;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
function text(b: Buffer | null): string | null {
  if (b === null) return '';
  try { return utf8.decode(b); } catch { return null; }
}

function bounded(v: unknown): { v: unknown; clipped: boolean } {
  if (v === undefined) return { v, clipped: false };
  const t = canonical(v);
  return t.length <= VALUE_MAX ? { v, clipped: false } : { v: `${t.slice(0, VALUE_MAX)}…`, clipped: true };
}

export function recordOf(c: GrantChange): GrantRecord {
  const r: GrantRecord = { path: c.path, key: c.key, change: c.change, grant: c.grant, words: c.words };
  if (c.credential !== undefined) r.credential = c.credential;
  const o = bounded(c.old);
  const n = bounded(c.new);
  if (o.v !== undefined) r.old = o.v;
  if (n.v !== undefined) r.new = n.v;
  if (o.clipped || n.clipped) r.clipped = true;
  return r;
}

const rank = (c: GrantChange): number => (c.grant ? 0 : c.credential !== undefined ? 1 : 2);

function withSecret(f: FileFacts): FileFacts {
  const all = parseKeyPattern('**');
  if (!all) return f;
  return { ...f, credentials: [{ group: f.credentials[0]?.group ?? 'credentials', keys: [all] }, ...f.credentials] };
}

/**
 * The grants of a change of `relPath` (root-relative) from `before` (null: no approved
 * version, a new file) to `after`; undefined when the root's profile has no grant or
 * credential keys for that path, or there is no new content to compare.
 */
export function grantsAt(rp: RootProfile | null, relPath: string, before: Buffer | null, after: Buffer | null, opts: GrantOptions = {}): RootGrants | undefined {
  if (!rp || after === null) return undefined;
  const found = rulesAt(rp, relPath);
  if (!found) return undefined;
  const facts = opts.secret ? withSecret(found) : found;
  if (facts.rules.length === 0 && facts.credentials.length === 0) return undefined;
  const none = (summary: string): RootGrants => ({ grants: [], summary, left_off: 0, widens: false });
  if (after.length > COMPARE_MAX_BYTES || (before?.length ?? 0) > COMPARE_MAX_BYTES) return none(`not compared key by key: over ${COMPARE_MAX_BYTES} bytes`);
  const a = text(before);
  const b = text(after);
  if (a === null || b === null) return none(`not compared key by key: the ${a === null ? 'approved' : 'new'} version is not UTF-8 text`);
  // A value nested thousands deep (10 kB of brackets) overflows the parsers' and the
  // comparison's recursion: said as not compared, never dropped by a caller as "no grants".
  try {
    const r = compareTexts(relPath, facts.entry.format, a, b, facts);
    // Where only: a parser's message may quote the text, and the text may be a secret.
    if (!r.ok) return none(`not compared key by key: the ${r.side === 'approved' ? 'approved' : 'new'} version does not parse (line ${r.error.line ?? '?'}, column ${r.error.column ?? '?'})`);
    const c = r.comparison;
    const max = Math.max(0, opts.max ?? GRANTS_MAX);
    const sorted = c.changes.map((x, i) => ({ x, i })).sort((p, q) => rank(p.x) - rank(q.x) || p.i - q.i).map((p) => p.x);
    return { grants: sorted.slice(0, max).map(recordOf), summary: c.summary, left_off: Math.max(0, sorted.length - max), widens: c.widens };
  } catch (err) {
    return none(`not compared key by key: ${err instanceof RangeError ? 'a value is nested too deeply' : 'the comparison failed'}`);
  }
}
