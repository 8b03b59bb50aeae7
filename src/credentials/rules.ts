/**
 * Credential rules of SPEC §7, as pure functions over file texts. Nothing here may put a
 * value into a returned string: only group and key names and fingerprints come out.
 */
import { createHash } from 'node:crypto';
import { parseToml, type TomlTable } from '../toml/index.js';
import type { Located } from '../common/errors.js';
import type { WardenConfig } from '../config/warden-config.js';
import type { CredentialKeyChange } from './types.js';

/** First 12 hex digits of sha256 — enough to tell values apart, useless to recover them. */
export const fingerprint = (value: string): string => createHash('sha256').update(value).digest('hex').slice(0, 12);

export type CredentialTables = Record<string, Record<string, string>>;

export type CredentialParse = { ok: true; tables: CredentialTables } | { ok: false; errors: Located[] };

/** Groups are TOML tables of string values; anything else is refused (values never echoed). */
export function parseCredentials(text: string, file: string): CredentialParse {
  const p = parseToml(text, file);
  if (!p.ok) return { ok: false, errors: [p.error] };
  const errors: Located[] = [];
  const tables: CredentialTables = {};
  for (const [group, value] of Object.entries(p.value as TomlTable)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Date) {
      errors.push({ file, key: group, message: 'top-level keys must be groups (TOML tables) of string values' });
      continue;
    }
    const t: Record<string, string> = {};
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
    const present = Object.keys(tables[table] ?? {});
    const conf = config.credentials.groups[table];
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
  const token = t?.token;
  const app = t?.application_id;
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
  /** Units where some keys changed and others did not. */
  halfGroups: { group: string; changed: string[]; unchanged: string[] }[];
  /** Units whose check fails in the new state. */
  failedChecks: { group: string; check: string }[];
  /** Parse errors of the new text (locations and messages only). */
  parseErrors: Located[];
  halfApplied: boolean;
}

export function diffCredentials(oldText: string | null, newText: string | null, config: WardenConfig, file: string): CredentialDiff {
  const oldP = oldText === null ? { ok: true as const, tables: {} } : parseCredentials(oldText, file);
  const newP = newText === null ? { ok: true as const, tables: {} } : parseCredentials(newText, file);
  const before = oldP.ok ? oldP.tables : {};
  const after = newP.ok ? newP.tables : {};
  const changes: CredentialKeyChange[] = [];
  const groups = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const g of [...groups].sort()) {
    const keys = new Set([...Object.keys(before[g] ?? {}), ...Object.keys(after[g] ?? {})]);
    for (const k of [...keys].sort()) {
      const b = before[g]?.[k];
      const a = after[g]?.[k];
      if (b !== a) changes.push({ group: g, key: k, before: b === undefined ? null : fingerprint(b), after: a === undefined ? null : fingerprint(a) });
    }
  }
  const halfGroups: CredentialDiff['halfGroups'] = [];
  const failedChecks: CredentialDiff['failedChecks'] = [];
  if (newP.ok) {
    for (const u of groupUnits({ ...before, ...after }, config)) {
      const changed = u.keys.filter((k) => changes.some((c) => c.group === u.table && c.key === k));
      if (changed.length > 0 && changed.length < u.keys.length) {
        halfGroups.push({ group: u.name, changed, unchanged: u.keys.filter((k) => !changed.includes(k)) });
      }
      if (u.check === 'discord-token' && after[u.table] && !discordTokenHolds(after[u.table])) failedChecks.push({ group: u.name, check: u.check });
    }
  }
  const parseErrors = newP.ok ? [] : newP.errors;
  return { changes, halfGroups, failedChecks, parseErrors, halfApplied: parseErrors.length > 0 || halfGroups.length > 0 || failedChecks.length > 0 };
}

/** Text for the history mirror: one "group.key = fingerprint" line per key. */
export function credentialFingerprintText(bytes: Uint8Array): string {
  const p = parseCredentials(Buffer.from(bytes).toString('utf8'), 'credentials');
  if (!p.ok) return `# does not parse (sha256 ${createHash('sha256').update(bytes).digest('hex').slice(0, 12)})\n`;
  const lines: string[] = ['# fingerprints only: first 12 hex digits of sha256(value)'];
  for (const g of Object.keys(p.tables).sort()) for (const k of Object.keys(p.tables[g] ?? {}).sort()) lines.push(`${g}.${k} = ${fingerprint(p.tables[g]?.[k] ?? '')}`);
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

/** Merge the files of a credential set (SPEC §7: a set may be kept in several files). */
export function mergeCredentialSet(files: readonly CredentialFileText[]): CredentialSet {
  const tables: CredentialTables = {};
  const where: Record<string, string> = {};
  const errors: Located[] = [];
  for (const f of files) {
    if (f.text === null) continue;
    const p = parseCredentials(f.text, f.path);
    if (!p.ok) { errors.push(...p.errors); continue; }
    for (const [g, t] of Object.entries(p.tables)) {
      const dst = (tables[g] ??= {});
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
export function diffCredentialSet(before: CredentialTables, after: CredentialTables, config: WardenConfig): Omit<CredentialDiff, 'parseErrors' | 'halfApplied'> {
  const changes: CredentialKeyChange[] = [];
  for (const g of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    for (const k of [...new Set([...Object.keys(before[g] ?? {}), ...Object.keys(after[g] ?? {})])].sort()) {
      const b = before[g]?.[k];
      const a = after[g]?.[k];
      if (b !== a) changes.push({ group: g, key: k, before: b === undefined ? null : fingerprint(b), after: a === undefined ? null : fingerprint(a) });
    }
  }
  const halfGroups: CredentialDiff['halfGroups'] = [];
  const failedChecks: CredentialDiff['failedChecks'] = [];
  for (const u of groupUnits({ ...before, ...after }, config)) {
    const changed = u.keys.filter((k) => changes.some((c) => c.group === u.table && c.key === k));
    if (changed.length > 0 && changed.length < u.keys.length) halfGroups.push({ group: u.name, changed, unchanged: u.keys.filter((k) => !changed.includes(k)) });
    if (u.check === 'discord-token' && changed.length > 0 && !discordTokenHolds(after[u.table])) failedChecks.push({ group: u.name, check: u.check });
  }
  return { changes, halfGroups, failedChecks };
}

/** The unit (keys that change together) a group.key belongs to. */
export function unitOf(tables: CredentialTables, config: WardenConfig, group: string, key: string): GroupUnit | undefined {
  const withKey: CredentialTables = { ...tables, [group]: { ...(tables[group] ?? {}), [key]: tables[group]?.[key] ?? '' } };
  return groupUnits(withKey, config).find((u) => u.table === group && u.keys.includes(key));
}
