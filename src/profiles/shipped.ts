/**
 * One shipped profile, read for a guard without the schema library (docs/PROFILES.md,
 * "Grants in alerts, diffs and prompts"). The shipped profiles are part of warden's package,
 * as trusted as its code, and each is checked against the strict schema by the test suite
 * (test/profiles) and by `warden profiles`; here the TOML is parsed and its shape checked
 * just enough for the comparison (strings, lists, tables where they belong, the schema's
 * defaults), so a guard's start does not load zod (docs/ARCHITECTURE.md: what the guard process loads).
 * A file that is missing, not a regular file, or of another shape gives null: no grants said.
 */
import { lstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseToml } from '../toml/index.js';
import type { ProfileData } from './schema.js';

/** The package's own profiles/ folder (dist/src/<dir>/ and dist/src/chunks/ are both three below the package). */
const SHIPPED = fileURLToPath(new URL('../../../profiles/', import.meta.url));

const isTable = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const strList = (v: unknown): boolean => Array.isArray(v) && v.every(isStr);
const tables = (v: unknown): v is Record<string, unknown>[] => Array.isArray(v) && v.every(isTable);

/** The shape the comparison reads, with the schema's defaults; null when it is not that shape. */
export function profileShape(v: unknown): ProfileData | null {
  if (!isTable(v) || !isStr(v.name) || !isStr(v.runtime) || !tables(v.files) || v.files.length === 0) return null;
  if (!v.files.every((f) => isStr(f.path) && isStr(f.level) && isStr(f.format) && (f.rules === undefined || isStr(f.rules)))) return null;
  const rules = v.rules ?? {};
  if (!isTable(rules) || !Object.values(rules).every((list) => tables(list) && list.every((r) => isStr(r.key) && isStr(r.widens)))) return null;
  const credentials = v.credentials ?? [];
  if (!tables(credentials) || !credentials.every((c) => isStr(c.group) && isStr(c.file) && strList(c.keys))) return null;
  const writes = v.runtime_writes ?? [];
  if (!tables(writes) || !writes.every((w) => isStr(w.file) && isStr(w.mode) && strList(w.keys) && (w.except === undefined || strList(w.except)))) return null;
  return { ...v, rules, credentials, runtime_writes: writes, validator: [] } as unknown as ProfileData;
}

const cache = new Map<string, ProfileData | null>();

/** The shipped profile NAME, read once per process; null when it cannot be read or is not of the expected shape. */
export function shippedProfile(name: string, dir = SHIPPED): ProfileData | null {
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(name)) return null;
  const file = join(dir, `${name}.toml`);
  const hit = cache.get(file);
  if (hit !== undefined) return hit;
  let data: ProfileData | null = null;
  try {
    const st = lstatSync(file, { throwIfNoEntry: false });
    if (st?.isFile() && st.size <= 1024 * 1024) {
      const t = parseToml(readFileSync(file, 'utf8'), file);
      data = t.ok ? profileShape(t.value) : null;
      if (data && data.name !== name) data = null;
    }
  } catch { data = null; }
  cache.set(file, data);
  return data;
}
