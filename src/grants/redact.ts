/**
 * What history keeps of a file whose credentials the runtime rewrites by itself (Codex's
 * `auth.json`, docs/PROFILES.md, "The runtime's own writes"): the document with every value
 * at a credential key replaced by its fingerprint, so no token enters a git object; the
 * store's blob (0600, in the 0700 store) keeps the bytes a restore needs. Pure.
 */
import { createHash } from 'node:crypto';
import { parseAs, type Format } from '../formats/index.js';
import { atOrBelow, type KeyPath } from '../profiles/keys.js';
import type { FileFacts } from '../profiles/paths.js';
import { rulesAt, type RootProfile } from '../profiles/root-rules.js';
import { isObject } from './canonical.js';
import { fingerprintOf } from './compare.js';
import { refreshesCredentials } from './runtime-writes.js';

/** Does history keep this file fingerprinted? The runtime rewrites credentials in it by itself (an `own` key at or below a credential key). */
export function fingerprintedInHistory(facts: Pick<FileFacts, 'credentials' | 'runtimeWrites'>): boolean {
  return refreshesCredentials(facts);
}

/** The file as history keeps it: credential values as `fingerprint:…`, the rest as it is; a text that does not parse, its sha256 only. */
export function fingerprintedText(format: Format, facts: Pick<FileFacts, 'credentials'>, bytes: Buffer): string {
  const sha = createHash('sha256').update(bytes).digest('hex').slice(0, 12);
  const r = parseAs(format, bytes.toString('utf8'), 'file');
  if (!r.ok) return `# does not parse (sha256 ${sha}); credential values are never kept here\n`;
  const secret = (p: KeyPath) => facts.credentials.some((c) => c.keys.some((k) => atOrBelow(k, p)));
  const walk = (v: unknown, p: KeyPath): unknown => {
    if (p.length > 0 && secret(p)) return `fingerprint:${fingerprintOf(v)}`;
    if (Array.isArray(v)) return v.map((e, i) => walk(e, [...p, i]));
    if (isObject(v)) return Object.fromEntries(Object.keys(v).map((k) => [k, walk(v[k], [...p, k])]));
    return v;
  };
  try {
    return `${JSON.stringify(walk(r.value, []), null, 2)}\n`;
  } catch {
    return `# too deeply nested (sha256 ${sha}); credential values are never kept here\n`;
  }
}

/** The history mirror of `relPath` in a root with profile `rp`, when history keeps it fingerprinted; else undefined (kept as it is). */
export function historyMirror(rp: RootProfile | null, relPath: string, bytes: Buffer | null): Buffer | undefined {
  if (!rp || bytes === null) return undefined;
  const facts = rulesAt(rp, relPath);
  if (!facts || !fingerprintedInHistory(facts)) return undefined;
  return Buffer.from(fingerprintedText(facts.entry.format, facts, bytes));
}
