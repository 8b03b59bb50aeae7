import { z } from 'zod';
import type { Located } from '../common/errors.js';
import { isBlankToml, parseTomlShared, locateKey } from '../toml/index.js';
import { validateToml } from '../toml/schema.js';
import { ensureLocated, errAt, lazyProperty } from './locate.js';
import { SNOWFLAKE_RE, splitTarget } from './paths.js';
import { recentResults } from './recent.js';
import type { FileStatus, Guests, Org } from './types.js';

export const GUESTS_TOML = 'config/guests.toml';
export const ORGS_DIR = 'orgs';
/** An org's name is its file stem; keep it a plain name. */
export const ORG_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const id = z.string({ error: 'must be a Discord id in quotes (a string of decimal digits)' })
  .regex(SNOWFLAKE_RE, 'must be a Discord id: decimal digits, no leading zero, at most 20 digits');
const folder = z.string({ error: 'must be a string path' })
  .refine((p) => splitTarget(p) !== null, 'must be a canonical path under /workspace/ or /memories/ (no empty, "." or ".." segments)');
const command = z.string({ error: 'must be a string' })
  .refine((c) => c.trim() !== '' && c === c.trim(), 'must be a non-empty command prefix without leading or trailing spaces');

// Every key is required: an org file is read by people, so it says everything explicitly,
// and a missing key can never be mistaken for "unlimited". Empty arrays are fine (they grant nothing).
const orgSchema = z.strictObject({
  members: z.array(id, { error: 'must be an array of Discord ids (strings)' }),
  channels: z.array(id, { error: 'must be an array of Discord ids (strings)' }),
  folders: z.array(folder, { error: 'must be an array of paths' }),
  commands: z.array(command, { error: 'must be an array of command prefixes' }),
  hourly_cap: z.number({ error: 'must be a positive integer' }).int('must be a positive integer').positive('must be a positive integer'),
});

export const guestsSchema = z.strictObject({
  channels: z.array(id, { error: 'must be an array of Discord ids (strings)' }),
  folders: z.array(folder, { error: 'must be an array of paths' }),
});

const isTable = (v: unknown): v is Record<string, unknown> => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === null || proto === Object.prototype;
};

/**
 * guests.toml as guestsSchema plainly accepts it: exactly channels and folders, every
 * entry valid. Anything else goes to the schema, which decides and words the error (zod
 * stays the one definition; this skips it for the common case: 600 folders through zod
 * cost ~10 ms cold).
 */
export function plainGuests(v: Record<string, unknown>): v is { channels: string[]; folders: string[] } {
  const keys = Object.keys(v);
  if (keys.length !== 2 || !Object.hasOwn(v, 'channels') || !Object.hasOwn(v, 'folders')) return false;
  const { channels, folders } = v;
  return Array.isArray(channels) && channels.every((c) => typeof c === 'string' && SNOWFLAKE_RE.test(c))
    && Array.isArray(folders) && folders.every((f) => typeof f === 'string' && splitTarget(f) !== null);
}

/** "orgs/bookclub.toml" → "bookclub". */
export function orgNameOf(relPath: string): string {
  const base = relPath.slice(relPath.lastIndexOf('/') + 1);
  return base.endsWith('.toml') ? base.slice(0, -5) : base;
}

function keyLines<K extends string>(text: string, keys: readonly K[]): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const k of keys) {
    const at = locateKey(text, [k]);
    if (at) out[k] = at.line;
  }
  return out;
}

function duplicates(file: string, text: string, key: string, values: string[]): Located[] {
  const seen = new Set<string>();
  const out: Located[] = [];
  for (const v of values) {
    if (seen.has(v)) out.push(errAt(file, text, [key], `"${v}" is listed twice`, v));
    seen.add(v);
  }
  return out;
}

function blankOrParse(text: string | null, file: string, what: string):
  { ok: true; value: Record<string, unknown> } | { ok: false; status: FileStatus; errors: Located[] } {
  if (text === null) return { ok: false, status: 'missing', errors: [{ file, message: `missing: ${what} grants nothing` }] };
  if (isBlankToml(text)) return { ok: false, status: 'empty', errors: [{ file, line: 1, column: 1, message: `empty (only whitespace or comments): an empty manifest denies everything, so ${what} grants nothing` }] };
  const parsed = parseTomlShared(text, file); // read only
  if (!parsed.ok) return { ok: false, status: 'invalid', errors: [parsed.error] };
  return { ok: true, value: parsed.value };
}

export interface OrgResult { org: Org | null; status: FileStatus; errors: Located[]; warnings: Located[] }

/** Validate one org file. Pure and total. Invalid → `org: null`: the org grants nothing. */
export function parseOrg(text: string | null, file: string): OrgResult {
  return text === null ? parseOrgOnce(text, file) : recentOrgs(text, file);
}
const copyResult = <R extends { errors: Located[]; warnings: Located[] }>(r: R): R => ({ ...r, errors: [...r.errors], warnings: [...r.warnings] });
const recentOrgs = recentResults(parseOrgOnce, copyResult, 8);

function parseOrgOnce(text: string | null, file: string): OrgResult {
  const name = orgNameOf(file);
  const p = blankOrParse(text, file, `org "${name}"`);
  if (!p.ok) return { org: null, status: p.status, errors: p.errors, warnings: [] };
  const src = text as string;
  const errors: Located[] = [];
  if (!ORG_NAME_RE.test(name) || !file.endsWith('.toml')) {
    errors.push({ file, line: 1, column: 1, message: `an org file must be orgs/<name>.toml with a plain name (letters, digits, ".", "_", "-")` });
  }
  const v = validateToml(orgSchema, p.value, src, file);
  if (!v.ok) return { org: null, status: 'invalid', errors: ensureLocated([...errors, ...v.errors]), warnings: [] };
  if (errors.length) return { org: null, status: 'invalid', errors, warnings: [] };
  const warnings = [
    ...duplicates(file, src, 'members', v.value.members),
    ...duplicates(file, src, 'channels', v.value.channels),
    ...duplicates(file, src, 'folders', v.value.folders),
    ...duplicates(file, src, 'commands', v.value.commands),
  ];
  const org: Org = {
    name,
    members: v.value.members,
    channels: v.value.channels,
    folders: v.value.folders,
    commands: v.value.commands,
    hourlyCap: v.value.hourly_cap,
    source: { file, line: 1, column: 1 },
  } as Org;
  lazyProperty(org, 'keyLines', () => keyLines(src, ['members', 'channels', 'folders', 'commands', 'hourly_cap'] as const));
  return { org, status: 'ok', errors: [], warnings };
}

export interface GuestsResult { guests: Guests | null; status: FileStatus; errors: Located[]; warnings: Located[] }

/** Validate guests.toml. Pure and total. Missing/blank/invalid → `guests: null`: nobody is a guest. */
export function parseGuests(text: string | null, file = GUESTS_TOML): GuestsResult {
  return text === null ? parseGuestsOnce(text, file) : recentGuests(text, file);
}
const recentGuests = recentResults(parseGuestsOnce, copyResult);

function parseGuestsOnce(text: string | null, file: string): GuestsResult {
  const p = blankOrParse(text, file, 'the guest allowlist');
  if (!p.ok) return { guests: null, status: p.status, errors: p.errors, warnings: [] };
  const src = text as string;
  const v = isTable(p.value) && plainGuests(p.value) ? { ok: true as const, value: { channels: [...p.value.channels], folders: [...p.value.folders] } } : validateToml(guestsSchema, p.value, src, file);
  if (!v.ok) return { guests: null, status: 'invalid', errors: ensureLocated(v.errors), warnings: [] };
  const warnings = [...duplicates(file, src, 'channels', v.value.channels), ...duplicates(file, src, 'folders', v.value.folders)];
  const guests = { channels: v.value.channels, folders: v.value.folders, source: { file, line: 1, column: 1 } } as Guests;
  lazyProperty(guests, 'keyLines', () => keyLines(src, ['channels', 'folders'] as const));
  return {
    guests,
    status: 'ok',
    errors: [],
    warnings,
  };
}
