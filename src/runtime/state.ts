/**
 * The approved state a view hands out, built from bytes already verified against the
 * manifest. Pure: nothing here reads the disk, so what is built is exactly what was
 * verified (no second read that an attacker could race).
 */
import { createHash } from 'node:crypto';
import type { FileKind } from '../config/protected-set.js';
import { mergeCredentialSet } from '../credentials/rules.js';
import { dict } from '../common/dict.js';
import { buildPolicy, policyKindOf, type PolicyFileInput, type PolicySet } from '../policy/index.js';

export type Credentials = Readonly<Record<string, Readonly<Record<string, string>>>>;

export interface ApprovedState {
  /** false: the view failed closed (no usable manifest, or no complete approved state yet). */
  ok: boolean;
  /** Why it is closed, or null when ok. Never holds a credential value. */
  reason: string | null;
  /** The baseline generation of the manifest this state matches; null when closed. */
  generation: number | null;
  /** The PolicySet the policy library builds (warden/policy), from the verified bytes. Closed: grants nothing. */
  policy: PolicySet;
  /** Approved credential values by group, merged over every credential file. Closed: {}. */
  credentials: Credentials;
  /** sha256 of every file this state was built from, by root-relative path. Closed: {}. */
  files: Readonly<Record<string, string>>;
}

/** One file the view holds: bytes whose hash, size and mode equalled the manifest when read. */
export interface Verified { kind: FileKind; sha256: string; size: number; mode: number; bytes: Buffer }

export const sha256Hex = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/** Is this manifest entry something the view uses? Policy files and the credential set. */
export function usedByView(path: string, kind: FileKind): boolean {
  return kind === 'credentials' || policyKindOf(path) !== null;
}

/** Nothing granted: no conditions (every path denied, no block), no owner, no org, no guest, no credentials. */
export function closedState(reason: string): ApprovedState {
  return Object.freeze({ ok: false, reason, generation: null, policy: buildPolicy([]).policy, credentials: Object.freeze({}), files: Object.freeze({}) });
}

function decode(b: Buffer): string | null {
  try { return new TextDecoder('utf-8', { fatal: true }).decode(b); } catch { return null; }
}

/** The policy files among a generation's verified files, as buildPolicy's input (in path order). */
export function policyInputsOf(files: ReadonlyMap<string, Verified>): PolicyFileInput[] {
  const out: PolicyFileInput[] = [];
  for (const [path, v] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (v.kind === 'credentials') continue;
    const text = decode(v.bytes);
    out.push(text === null ? { path, text: null, unreadable: 'is not valid UTF-8' } : { path, text });
  }
  return out;
}

/**
 * Build the state of one generation from its verified files. `policy`, when given, is
 * buildPolicy(policyInputsOf(files)).policy computed elsewhere (the view's builder thread).
 */
export function buildState(generation: number, files: ReadonlyMap<string, Verified>, policy: PolicySet = buildPolicy(policyInputsOf(files)).policy): ApprovedState {
  const credFiles: { path: string; text: string | null }[] = [];
  const hashes: Record<string, string> = dict();
  for (const [path, v] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    hashes[path] = v.sha256;
    if (v.kind === 'credentials') credFiles.push({ path, text: decode(v.bytes) });
  }
  const merged = mergeCredentialSet(credFiles);
  // Null-prototype records: a group or key named __proto__ or constructor is an ordinary name (docs/CONTRACT.md §Credentials).
  const credentials: Record<string, Readonly<Record<string, string>>> = dict();
  for (const [g, t] of Object.entries(merged.tables)) credentials[g] = Object.freeze(dict(t));
  return Object.freeze({ ok: true, reason: null, generation, policy, credentials: Object.freeze(credentials), files: Object.freeze(hashes) });
}
