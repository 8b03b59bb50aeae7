import { z } from 'zod';
import { createHash } from 'node:crypto';
import { openRoot, readSmallAt, safeClose, walkDir } from '../fsx/beneath.js';
import { WardenError, errnoCode, type Located } from '../common/errors.js';
import { parseToml } from '../toml/index.js';
import { validateToml } from '../toml/schema.js';

export const WARDEN_TOML = 'config/warden.toml';

const snowflake = z.string().regex(/^[0-9]{1,20}$/, 'must be a Discord id: a string of decimal digits');
const relPath = z.string().min(1).refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), 'must be a path relative to the root, without ".."');

export const wardenConfigSchema = z.strictObject({
  approval: z.enum(['tty', 'owner-code', 'none']).default('tty'),
  approval_ttl_seconds: z.number().int().positive().default(86400),
  rescan_seconds: z.number().positive().default(30),
  max_bytes: z.number().int().positive().default(1024 * 1024),
  owner: z.strictObject({ discord_id: snowflake }).optional(),
  protect: z.array(z.strictObject({ path: relPath, kind: z.literal('text').default('text') })).default([]),
  credentials: z.strictObject({
    files: z.array(relPath).min(1).default(['config/credentials.toml']),
    groups: z.record(z.string(), z.strictObject({
      keys: z.array(z.string().min(1)).min(1),
      check: z.enum(['discord-token']).optional(),
    })).default({}),
  }).default({ files: ['config/credentials.toml'], groups: {} }),
  notify: z.strictObject({
    min_interval_seconds: z.number().nonnegative().default(10),
    liveness_hours: z.number().positive().optional(),
    discord: z.strictObject({
      token_file: z.string().min(1).refine((p) => p.startsWith('/'), 'must be an absolute path outside the root'),
      api: z.string().url().optional(),
    }).optional(),
    desktop: z.strictObject({ enabled: z.boolean().default(true) }).optional(),
    journal: z.strictObject({ enabled: z.boolean().default(true) }).optional(),
  }).default({ min_interval_seconds: 10 }),
});

export type WardenConfig = z.infer<typeof wardenConfigSchema>;

/** Parse and validate warden.toml text. Pure: returns located errors instead of throwing. */
export function parseWardenConfig(source: string, file = WARDEN_TOML): { ok: true; config: WardenConfig } | { ok: false; errors: Located[] } {
  const parsed = parseToml(source, file);
  if (!parsed.ok) return { ok: false, errors: [parsed.error] };
  const v = validateToml(wardenConfigSchema, parsed.value, source, file);
  if (!v.ok) return v;
  const errors: Located[] = [];
  for (const f of v.value.credentials.files) {
    if (!f.endsWith('.toml')) errors.push({ file, key: 'credentials.files', message: `credential file "${f}" must be a .toml file` });
  }
  return errors.length ? { ok: false, errors } : { ok: true, config: v.value };
}

/** Settings from warden.toml bytes; none means all defaults. Throws WardenError (exit 2). */
export function configFromBytes(bytes: Buffer | null): WardenConfig {
  if (bytes === null) return wardenConfigSchema.parse({});
  const r = parseWardenConfig(bytes.toString('utf8'));
  if (!r.ok) throw new WardenError(`${WARDEN_TOML} is invalid`, 2, r.errors);
  return r.config;
}

/**
 * warden.toml as it is on disk now. Only `warden init` uses this (there is no approved copy
 * yet): everything else runs on the approved copy, so that an edit made while warden was
 * stopped can never choose warden's own settings (approval mode, protected set…).
 * Read beneath the root without following links or opening a FIFO.
 */
export function loadWardenConfigFromDisk(root: string): WardenConfig {
  const fd = openRoot(root);
  try {
    const w = walkDir(fd, 'config');
    if (!w.ok) { safeClose(w.parentFd); return configFromBytes(null); }
    try {
      return configFromBytes(readSmallAt(w.fd, 'warden.toml', 4 * 1024 * 1024));
    } catch (err) {
      if (err instanceof WardenError) throw err;
      throw new WardenError(`${WARDEN_TOML}: cannot read: ${errnoCode(err) ?? String(err)}`);
    } finally { safeClose(w.fd); }
  } finally { safeClose(fd); }
}

/**
 * The approved warden.toml: the baseline's copy when there is a baseline (its blob checked
 * against the index's hash), else the file on disk (before `warden init`).
 */
export function loadWardenConfig(root: string): WardenConfig {
  const fd = openRoot(root);
  let approved: Buffer | null | undefined;
  try {
    approved = approvedBytes(fd, WARDEN_TOML);
  } finally { safeClose(fd); }
  return approved === undefined ? loadWardenConfigFromDisk(root) : configFromBytes(approved);
}

/**
 * Read one approved file from the store without the HMAC key (the notifier has no access to
 * it): undefined when there is no baseline, null when the baseline has no such file.
 * The blob must match the index's hash.
 */
export function approvedBytes(rootFd: number, path: string): Buffer | null | undefined {
  const w = walkDir(rootFd, 'snapshots/baseline');
  if (!w.ok) { safeClose(w.parentFd); return undefined; }
  let raw: Buffer | null;
  try { raw = readSmallAt(w.fd, 'index'); } catch { raw = null; } finally { safeClose(w.fd); }
  if (!raw) return undefined;
  const nl = raw.indexOf(0x0a);
  let entry: { sha256?: string; kind?: string } | undefined;
  try { entry = (JSON.parse(raw.subarray(nl + 1).toString('utf8')) as { files: Record<string, { sha256: string; kind: string }> }).files[path]; }
  catch { throw new WardenError('snapshots/baseline/index is malformed; run warden verify'); }
  if (!entry?.sha256) return null;
  const dir = entry.kind === 'credentials' ? 'snapshots/secrets' : 'snapshots/blobs';
  const b = walkDir(rootFd, dir);
  if (!b.ok) { safeClose(b.parentFd); throw new WardenError(`the approved copy of ${path} is missing from the store`); }
  try {
    const bytes = readSmallAt(b.fd, entry.sha256);
    if (!bytes || createHash('sha256').update(bytes).digest('hex') !== entry.sha256) throw new WardenError(`the approved copy of ${path} in the store is missing or altered`);
    return bytes;
  } finally { safeClose(b.fd); }
}
