/**
 * Credential rules of docs/CONTRACT.md §Credentials, as pure functions over file texts. Nothing here may put a
 * value into a returned string: only group and key names and fingerprints come out.
 */
import { createHash } from 'node:crypto';
import { parseToml, type TomlTable } from '../toml/index.js';
import type { Located } from '../common/errors.js';
import type { WardenConfig } from '../config/warden-config.js';
import type { CredentialKeyChange } from './types.js';
import { dict, own } from '../common/dict.js';

/** First 12 hex digits of sha256 — enough to tell values apart, useless to recover them. */
export const fingerprint = (value: string): string => createHash('sha256').update(value).digest('hex').slice(0, 12);

export type CredentialTables = Record<string, Record<string, string>>;

export type CredentialParse = { ok: true; tables: CredentialTables } | { ok: false; errors: Located[] };

/** Groups are TOML tables of string values; anything else is refused (values never echoed). */
export function parseCredentials(text: string, file: string): CredentialParse {
  const p = parseToml(text, file);
  if (!p.ok) return { ok: false, errors: [p.error] };
  const errors: Located[] = [];
  const tables: CredentialTables = dict();
  for (const [group, value] of Object.entries(p.value as TomlTable)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Date) {
      errors.push({ file, key: group, message: 'top-level keys must be groups (TOML tables) of string values' });
      continue;
    }
    const t: Record<string, string> = dict();
    for (const [k, v] of Object.entries(value as TomlTable)) {
      if (typeof v !== 'string') errors.push({ file, key: `${group}.${k}`, message: 'credential values must be strings' });
      else t[k] = v;
    }
    tables[group] = t;
  }
  return errors.length ? { ok: false, errors } : { ok: true, tables };
}

export interface GroupUnit { name: string; table: string; keys: string[]; check?: 'discord-token' }

/**
 * The units that must change together. A configured group covers its listed keys of the
 * table of the same name; the table's other keys form a second unit. Unconfigured tables
 * are one unit each.
 */
export function groupUnits(tables: CredentialTables, config: WardenConfig): GroupUnit[] {
  const units: GroupUnit[] = [];
  const names = new Set([...Object.keys(tables), ...Object.keys(config.credentials.groups)]);
  for (const table of [...names].sort()) {
    const present = Object.keys(own(tables, table) ?? {});
    const conf = own(config.credentials.groups, table);
    if (conf) {
      units.push({ name: table, table, keys: conf.keys, ...(conf.check ? { check: conf.check } : {}) });
      const rest = present.filter((k) => !conf.keys.includes(k));
      if (rest.length) units.push({ name: `${table} (other keys)`, table, keys: rest });
    } else {
      units.push({ name: table, table, keys: present });
    }
  }
  return units;
}

/** The built-in check: the token's first dot-separated segment, base64-decoded, is application_id. */
export function discordTokenHolds(t: Record<string, string> | undefined): boolean {
  const token = own(t, 'token');
  const app = own(t, 'application_id');
  if (!token || !app) return false;
  const first = token.split('.')[0] ?? '';
  try {
    return Buffer.from(first.replace(/-/g, '+').replace(/_/g, '/'), 'base64').toString('utf8') === app;
  } catch {
    return false;
  }
}

export interface CredentialDiff {
  /** Every key whose value differs, by fingerprint. */
  changes: CredentialKeyChange[];
  /** Units without a check where some keys changed (or were confirmed) and others did not. */
  halfGroups: { group: string; changed: string[]; unchanged: string[] }[];
  /** Units that changed and whose check fails in the new state; `unchanged` = keys neither changed nor confirmed. */
  failedChecks: { group: string; check: string; unchanged: string[] }[];
  /** Parse errors of the new text (locations and messages only). */
  parseErrors: Located[];
  halfApplied: boolean;
}

function keyChanges(before: CredentialTables, after: CredentialTables): CredentialKeyChange[] {
  const changes: CredentialKeyChange[] = [];
  for (const g of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    const bg = own(before, g), ag = own(after, g);
    for (const k of [...new Set([...Object.keys(bg ?? {}), ...Object.keys(ag ?? {})])].sort()) {
      const b = own(bg, k);
      const a = own(ag, k);
      if (b !== a) changes.push({ group: g, key: k, before: b === undefined ? null : fingerprint(b), after: a === undefined ? null : fingerprint(a) });
    }
  }
  return changes;
}

/**
 * The consistency rule of docs/CONTRACT.md §Credentials, unit by unit. A unit with a check is consistent when its
 * check holds (a Discord token reset — new token, same application_id — is consistent).
 * A unit without one is consistent when every key changed or none did; a key in
 * `confirmed` ("group.key", re-entered unchanged during `cred rotate`/`cred set`) counts
 * as changed.
 */
function unitRules(before: CredentialTables, after: CredentialTables, config: WardenConfig, changes: readonly CredentialKeyChange[], confirmed: ReadonlySet<string>): Pick<CredentialDiff, 'halfGroups' | 'failedChecks'> {
  const halfGroups: CredentialDiff['halfGroups'] = [];
  const failedChecks: CredentialDiff['failedChecks'] = [];
  for (const u of groupUnits(dict([...Object.entries(before), ...Object.entries(after)]), config)) {
    const changed = u.keys.filter((k) => changes.some((c) => c.group === u.table && c.key === k));
    if (changed.length === 0) continue;
    const covered = u.keys.filter((k) => changed.includes(k) || confirmed.has(`${u.table}.${k}`));
    const unchanged = u.keys.filter((k) => !covered.includes(k));
    if (u.check) {
      if (u.check === 'discord-token' && !discordTokenHolds(own(after, u.table))) failedChecks.push({ group: u.name, check: u.check, unchanged });
    } else if (unchanged.length) {
      halfGroups.push({ group: u.name, changed: covered, unchanged });
    }
  }
  return { halfGroups, failedChecks };
}

export function diffCredentials(oldText: string | null, newText: string | null, config: WardenConfig, file: string, confirmed: ReadonlySet<string> = new Set()): CredentialDiff {
  const oldP = oldText === null ? { ok: true as const, tables: dict<Record<string, string>>() } : parseCredentials(oldText, file);
  const newP = newText === null ? { ok: true as const, tables: dict<Record<string, string>>() } : parseCredentials(newText, file);
  const before = oldP.ok ? oldP.tables : dict<Record<string, string>>();
  const after = newP.ok ? newP.tables : dict<Record<string, string>>();
  const changes = keyChanges(before, after);
  const rules = newP.ok ? unitRules(before, after, config, changes, confirmed) : { halfGroups: [], failedChecks: [] };
  const parseErrors = newP.ok ? [] : newP.errors;
  return { changes, ...rules, parseErrors, halfApplied: parseErrors.length > 0 || rules.halfGroups.length > 0 || rules.failedChecks.length > 0 };
}

/** Text for the history mirror: one "group.key = fingerprint" line per key. */
export function credentialFingerprintText(bytes: Uint8Array): string {
  const p = parseCredentials(Buffer.from(bytes).toString('utf8'), 'credentials');
  if (!p.ok) return `# does not parse (sha256 ${createHash('sha256').update(bytes).digest('hex').slice(0, 12)})\n`;
  const lines: string[] = ['# fingerprints only: first 12 hex digits of sha256(value)'];
  for (const g of Object.keys(p.tables).sort()) for (const k of Object.keys(own(p.tables, g) ?? {}).sort()) lines.push(`${g}.${k} = ${fingerprint(own(own(p.tables, g), k) ?? '')}`);
  return lines.join('\n') + '\n';
}

/** One credential file of the set, by path, with its text (null = absent). */
export interface CredentialFileText { path: string; text: string | null }

export interface CredentialSet {
  /** Tables merged over every file of the set. */
  tables: CredentialTables;
  /** Where each group.key lives. */
  where: Record<string, string>;
  errors: Located[];
}

/** Merge the files of a credential set (docs/CONTRACT.md §Credentials: a set may be kept in several files). */
export function mergeCredentialSet(files: readonly CredentialFileText[]): CredentialSet {
  const tables: CredentialTables = dict();
  const where: Record<string, string> = dict();
  const errors: Located[] = [];
  for (const f of files) {
    if (f.text === null) continue;
    const p = parseCredentials(f.text, f.path);
    if (!p.ok) { errors.push(...p.errors); continue; }
    for (const [g, t] of Object.entries(p.tables)) {
      const dst = own(tables, g) ?? (tables[g] = dict());
      for (const [k, v] of Object.entries(t)) {
        const id = `${g}.${k}`;
        if (Object.hasOwn(where, id)) { errors.push({ file: f.path, key: id, message: `${id} is also defined in ${where[id]}; a key lives in one file of the set` }); continue; }
        where[id] = f.path;
        dst[k] = v;
      }
    }
  }
  return { tables, where, errors };
}

/** Group rules over a whole credential set: which keys changed, half-applied units, failed checks. */
export function diffCredentialSet(before: CredentialTables, after: CredentialTables, config: WardenConfig, confirmed: ReadonlySet<string> = new Set()): Omit<CredentialDiff, 'parseErrors' | 'halfApplied'> {
  const changes = keyChanges(before, after);
  return { changes, ...unitRules(before, after, config, changes, confirmed) };
}

/** The unit (keys that change together) a group.key belongs to. */
export function unitOf(tables: CredentialTables, config: WardenConfig, group: string, key: string): GroupUnit | undefined {
  const withKey: CredentialTables = dict(tables);
  const t = dict(own(tables, group) ?? {});
  t[key] = own(t, key) ?? '';
  withKey[group] = t;
  return groupUnits(withKey, config).find((u) => u.table === group && u.keys.includes(key));
}
