import { z } from 'zod';
import { WardenError, type Located } from '../common/errors.js';
import { locateKey, parseToml } from '../toml/index.js';
import { validateToml } from '../toml/schema.js';
import { dict } from '../common/dict.js';
import { DEFAULT_CREDENTIAL_FILES, DEFAULT_MAX_BYTES, DEFAULT_STORE_MAX_BYTES, WARDEN_TOML } from './quick-config.js';

export { WARDEN_TOML };

const snowflake = z.string().regex(/^[0-9]{1,20}$/, 'must be a Discord id: a string of decimal digits');
const relPath = z.string().min(1).refine((p) => !p.startsWith('/') && !p.split('/').includes('..'), 'must be a path relative to the root, without ".."');

function groupSchema() {
  return z.strictObject({
    keys: z.array(z.string().min(1)).min(1),
    check: z.enum(['discord-token']).optional(),
  });
}

export const wardenConfigSchema = z.strictObject({
  approval: z.enum(['tty', 'owner-code', 'none']).default('tty'),
  approval_ttl_seconds: z.number().int().positive().default(86400),
  rescan_seconds: z.number().positive().default(30),
  max_bytes: z.number().int().positive().default(DEFAULT_MAX_BYTES),
  // docs/CONTRACT.md §Store budget: past it the oldest quarantined content is pruned first.
  store_max_bytes: z.number().int().positive().default(DEFAULT_STORE_MAX_BYTES),
  owner: z.strictObject({ discord_id: snowflake }).optional(),
  protect: z.array(z.strictObject({ path: relPath, kind: z.literal('text').default('text') })).default([]),
  credentials: z.strictObject({
    files: z.array(relPath).min(1).default([...DEFAULT_CREDENTIAL_FILES]),
    groups: z.record(z.string(), groupSchema()).default({}),
  }).default({ files: [...DEFAULT_CREDENTIAL_FILES], groups: {} }),
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
  // docs/CONTRACT.md §Who did it: the witness (a fanotify listener). Absent = attribution where it can run, enforce off.
  witness: z.strictObject({
    enabled: z.boolean().default(true),
    enforce: z.boolean().default(false),
    /** cgroup paths of warden's own writers in other processes (the guard's unit), exempt from enforce. */
    writer_cgroups: z.array(z.string().min(2).refine((p) => p.startsWith('/'), 'must be a cgroup path starting with "/" (e.g. "/system.slice/warden-guard.service")')).default([]),
  }).optional(),
});

export type WardenConfig = z.infer<typeof wardenConfigSchema>;

/** Parse and validate warden.toml text. Pure: returns located errors instead of throwing. */
export function parseWardenConfig(source: string, file = WARDEN_TOML): { ok: true; config: WardenConfig } | { ok: false; errors: Located[] } {
  const parsed = parseToml(source, file);
  if (!parsed.ok) return { ok: false, errors: [parsed.error] };
  const v = validateToml(wardenConfigSchema, parsed.value, source, file);
  if (!v.ok) return v;
  const errors: Located[] = [];
  // Group names are data (docs/CONTRACT.md §Credentials): a null-prototype record, so a group named constructor or
  // toString is a group like any other (__proto__ is refused by validateToml).
  v.value.credentials.groups = dict(v.value.credentials.groups);
  for (const f of v.value.credentials.files) {
    if (!f.endsWith('.toml')) errors.push({ file, key: 'credentials.files', message: `credential file "${f}" must be a .toml file` });
  }
  // docs/CONTRACT.md §Changes: a one-time code needs a channel that can carry it; only Discord can.
  if (v.value.approval === 'owner-code' && !v.value.notify.discord) {
    errors.push({ file, key: 'approval', ...(locateKey(source, ['approval']) ?? {}), message: 'approval = "owner-code" needs a channel that can carry the code to the owner, and only Discord can: add [notify.discord] (token_file = …), or use approval = "tty"' });
  }
  return errors.length ? { ok: false, errors } : { ok: true, config: v.value };
}

/** Settings from warden.toml bytes; none means all defaults. Throws WardenError (exit 2). */
export function configFromBytes(bytes: Buffer | null): WardenConfig {
  if (bytes === null) { const c = wardenConfigSchema.parse({}); c.credentials.groups = dict(); return c; }
  const r = parseWardenConfig(bytes.toString('utf8'));
  if (!r.ok) throw new WardenError(`${WARDEN_TOML} is invalid`, 2, r.errors);
  return r.config;
}
