/**
 * Credential key names as the owner types them (`warden cred set GROUP.KEY …`), and the
 * words of a refusal. Pure: names and fingerprints only, never a value.
 *
 * - A key that is not in its group is refused with "did you mean" (a typo such as
 *   `discord.tokn` must not silently propose a new key); `--new` adds one on purpose.
 * - Units without a check must be named whole before any value is asked for; a unit with
 *   a check is judged by its check once the values are known (docs/CONTRACT.md §Credentials).
 * - A refusal names the keys that must come along and never suggests the command that
 *   was just refused.
 */
import type { WardenConfig } from '../config/warden-config.js';
import { own } from '../common/dict.js';
import { groupUnits, unitOf, type CredentialDiff, type CredentialTables } from './rules.js';

export interface KeyName { group: string; key: string }

/** Levenshtein distance, small strings only. */
export function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0] as number;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j] as number;
      prev[j] = Math.min(up + 1, (prev[j - 1] as number) + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = up;
    }
  }
  return prev[b.length] as number;
}

/** The closest candidate within a typo's reach (≤ 2 edits, and less than half the name), or null. */
export function closest(name: string, candidates: readonly string[]): string | null {
  let best: string | null = null;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = editDistance(name.toLowerCase(), c.toLowerCase());
    if (d < bestD) { best = c; bestD = d; }
  }
  return best !== null && best !== name && bestD <= Math.min(2, Math.ceil(name.length / 2)) ? best : null;
}

/** Refusals for names that are not keys of the approved set (unless `allowNew`). */
export function unknownKeyErrors(tables: CredentialTables, config: WardenConfig, names: readonly KeyName[], allowNew: boolean): string[] {
  const errors: string[] = [];
  const groups = [...new Set([...Object.keys(tables), ...Object.keys(config.credentials.groups)])].sort();
  for (const { group, key } of names) {
    const id = `${group}.${key}`;
    const conf = own(config.credentials.groups, group);
    const keys = [...new Set([...(conf?.keys ?? []), ...Object.keys(own(tables, group) ?? {})])];
    if (keys.includes(key)) continue;
    if (!groups.includes(group)) {
      if (allowNew) continue;
      const g = closest(group, groups);
      errors.push(`there is no credential group "${group}" (groups: ${groups.join(', ') || 'none'})${g ? `; did you mean ${g}.${key}?` : `. To add a new group on purpose, run 'warden cred set --new ${id}'.`}`);
      continue;
    }
    if (allowNew) continue;
    const near = closest(key, keys);
    errors.push(`${id} is not a key of group ${group} (its keys: ${keys.map((k) => `${group}.${k}`).join(', ')})${near ? `; did you mean ${group}.${near}?` : `. To add a new key on purpose, run 'warden cred set --new ${id}'.`}`);
  }
  return errors;
}

/**
 * Keys that must be named along with these before any value is asked for: every key of a
 * unit without a check. A unit with a check is decided by the check once the values are in.
 */
export function missingCompanions(tables: CredentialTables, config: WardenConfig, names: readonly KeyName[]): { unit: string; group: string; missing: string[] }[] {
  const ids = new Set(names.map((n) => `${n.group}.${n.key}`));
  const out = new Map<string, { unit: string; group: string; missing: string[] }>();
  for (const n of names) {
    const u = unitOf(tables, config, n.group, n.key);
    if (!u || u.check || out.has(u.name)) continue;
    const missing = u.keys.filter((k) => !ids.has(`${n.group}.${k}`)).map((k) => `${n.group}.${k}`);
    if (missing.length) out.set(u.name, { unit: u.name, group: n.group, missing });
  }
  return [...out.values()];
}

/** Every key of a group's table, over all its units (what `cred rotate GROUP` asks for). */
export function groupKeys(tables: CredentialTables, config: WardenConfig, group: string): string[] {
  return groupUnits(tables, config).filter((u) => u.table === group).flatMap((u) => u.keys);
}

/** Ways out of a refusal, never the command that was just refused. */
export function suggestion(alternatives: readonly string[], refused: string | undefined): string {
  const norm = (c: string) => c.trim().replace(/\s+/g, ' ');
  const left = alternatives.filter((a) => !refused || norm(a) !== norm(refused));
  return left.length ? `; run ${left.map((a) => `'warden ${a}'`).join(' or ')}` : '';
}

const tableOf = (unit: string): string => unit.split(' ')[0] as string;

export function halfAppliedMessage(h: CredentialDiff['halfGroups'][number], refused?: string): string {
  const g = tableOf(h.group);
  const q = (ks: readonly string[]) => ks.map((k) => `${g}.${k}`).join(', ');
  return `half-applied: ${q(h.changed)} would change but ${q(h.unchanged)} would not; keys of group ${h.group} change together, so these must come along: ${q(h.unchanged)}`
    + suggestion([`cred rotate ${g}`, `cred set ${[...h.changed, ...h.unchanged].map((k) => `${g}.${k}`).join(' ')}`], refused)
    + (refused?.startsWith('cred ') ? '' : ' (cred rotate asks for every key and accepts a value re-entered unchanged)');
}

export function failedCheckMessage(c: CredentialDiff['failedChecks'][number], refused?: string): string {
  const g = tableOf(c.group);
  const base = `half-applied: check "${c.check}" fails for ${c.group}: the first dot-separated segment of ${g}.token must base64-decode to ${g}.application_id`;
  const along = c.unchanged.length
    ? `; check the new value, or change ${c.unchanged.map((k) => `${g}.${k}`).join(', ')} with it (these must come along: ${c.unchanged.map((k) => `${g}.${k}`).join(', ')})`
    : '; the values given do not agree with each other';
  return base + along + suggestion([`cred rotate ${g}`], refused);
}
