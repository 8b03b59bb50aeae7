/**
 * The settings a read-only pass needs (max_bytes, the [[protect]] paths, credentials.files),
 * read from the approved warden.toml without zod: loading zod costs more than `warden
 * verify` takes to read 10,000 files. The approved file was validated in full when it was
 * approved, and the index's HMAC proves this is that file. Anything not plainly valid for
 * these keys (or a top-level key the schema does not know) gives null, and the caller
 * validates with the full schema instead, which names the problem.
 * The defaults here are the schema's own (warden-config.ts imports them from this file).
 */
import { createRequire } from 'node:module';

// smol-toml's CommonJS build is one file: ~2 ms to load, against ~12 ms for its nine ES modules.
const { parse } = createRequire(import.meta.url)('smol-toml') as typeof import('smol-toml');

export const DEFAULT_MAX_BYTES = 1024 * 1024;
export const DEFAULT_CREDENTIAL_FILES = ['config/credentials.toml'];

/** warden.toml's top-level keys (wardenConfigSchema): any other makes the file invalid. */
const TOP_KEYS = new Set(['approval', 'approval_ttl_seconds', 'rescan_seconds', 'max_bytes', 'owner', 'protect', 'credentials', 'notify']);

export interface ReadSettings { max_bytes: number; protect: { path: string }[]; credentials: { files: string[] } }

const isTable = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
const relPathOk = (p: unknown): p is string => typeof p === 'string' && p.length > 0 && !p.startsWith('/') && !p.split('/').includes('..');

export function readSettings(bytes: Buffer | null): ReadSettings | null {
  if (bytes === null) return { max_bytes: DEFAULT_MAX_BYTES, protect: [], credentials: { files: [...DEFAULT_CREDENTIAL_FILES] } };
  let v: Record<string, unknown>;
  try { v = parse(bytes.toString('utf8')); } catch { return null; }
  for (const k of Object.keys(v)) if (!TOP_KEYS.has(k)) return null;
  const mb = v.max_bytes ?? DEFAULT_MAX_BYTES;
  if (typeof mb !== 'number' || !Number.isSafeInteger(mb) || mb <= 0) return null;
  const protect: { path: string }[] = [];
  const pr = v.protect ?? [];
  if (!Array.isArray(pr)) return null;
  for (const p of pr) {
    if (!isTable(p) || !relPathOk(p.path) || (p.kind !== undefined && p.kind !== 'text')) return null;
    if (Object.keys(p).some((k) => k !== 'path' && k !== 'kind')) return null;
    protect.push({ path: p.path });
  }
  const cr = v.credentials ?? {};
  if (!isTable(cr)) return null;
  const files = cr.files ?? DEFAULT_CREDENTIAL_FILES;
  if (!Array.isArray(files) || files.length === 0 || !files.every((f) => relPathOk(f) && f.endsWith('.toml'))) return null;
  return { max_bytes: mb, protect, credentials: { files: [...files] as string[] } };
}
