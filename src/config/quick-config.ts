/**
 * warden.toml settings without zod, for the guard's start (zod costs ~13 MB of a
 * guard's RSS and every start). `quickConfig` accepts only a plainly well-formed value and
 * builds exactly what the zod schema (warden-config.ts) would, defaults included; anything
 * else (an unknown key, a wrong type, a URL to check) returns null, and the zod schema
 * decides and words the error. So zod stays the one definition of what is valid; this only
 * skips loading it for the common case. test/config/quick-config.test.ts holds the two to
 * the same answers.
 */
import { parseToml } from '../toml/index.js';
import { dict } from '../common/dict.js';
import type { WardenConfig } from './warden-config.js';

export const WARDEN_TOML = 'config/warden.toml';
/** The schema's defaults (warden-config.ts takes them from here, so the two cannot drift). */
export const DEFAULT_MAX_BYTES = 1024 * 1024;
/** The store's size budget (docs/CONTRACT.md §Store budget): 512 MiB fits a laptop and ~2 days of a storm's rate. */
export const DEFAULT_STORE_MAX_BYTES = 512 * 1024 * 1024;
export const DEFAULT_CREDENTIAL_FILES: readonly string[] = ['config/credentials.toml'];

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => Object.prototype.toString.call(v) === '[object Object]';
const onlyKeys = (o: Obj, keys: readonly string[]): boolean => Object.keys(o).every((k) => keys.includes(k));
const posInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
const finite = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const relPath = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && !v.startsWith('/') && !v.split('/').includes('..');
const strings = (v: unknown, ok: (s: unknown) => boolean): v is string[] => Array.isArray(v) && v.every(ok);

/** Absent → the default; present and valid → itself; else FAIL. */
const FAIL = Symbol('fail');
function opt<T>(o: Obj, key: string, ok: (v: unknown) => v is T, dflt: T): T | typeof FAIL {
  if (!Object.hasOwn(o, key) || o[key] === undefined) return dflt;
  return ok(o[key]) ? o[key] : FAIL;
}

function enabledFlag(v: unknown): { enabled: boolean } | null {
  if (!isObj(v) || !onlyKeys(v, ['enabled'])) return null;
  if (v.enabled === undefined) return { enabled: true };
  return typeof v.enabled === 'boolean' ? { enabled: v.enabled } : null;
}

/** The settings when `value` (parsed TOML) is plainly valid; null: let the zod schema decide. */
export function quickConfig(value: unknown): WardenConfig | null {
  if (!isObj(value) || !onlyKeys(value, ['approval', 'approval_ttl_seconds', 'rescan_seconds', 'max_bytes', 'store_max_bytes', 'owner', 'protect', 'credentials', 'notify', 'witness'])) return null;
  const approval = opt(value, 'approval', (v): v is WardenConfig['approval'] => v === 'tty' || v === 'owner-code' || v === 'none', 'tty');
  const ttl = opt(value, 'approval_ttl_seconds', posInt, 86400);
  const rescan = opt(value, 'rescan_seconds', (v): v is number => finite(v) && v > 0, 30);
  const maxBytes = opt(value, 'max_bytes', posInt, DEFAULT_MAX_BYTES);
  const storeMax = opt(value, 'store_max_bytes', posInt, DEFAULT_STORE_MAX_BYTES);
  if (approval === FAIL || ttl === FAIL || rescan === FAIL || maxBytes === FAIL || storeMax === FAIL) return null;

  let owner: WardenConfig['owner'];
  if (value.owner !== undefined) {
    const o = value.owner;
    if (!isObj(o) || !onlyKeys(o, ['discord_id']) || typeof o.discord_id !== 'string' || !/^[0-9]{1,20}$/.test(o.discord_id)) return null;
    owner = { discord_id: o.discord_id };
  }

  const protect: WardenConfig['protect'] = [];
  if (value.protect !== undefined) {
    if (!Array.isArray(value.protect)) return null;
    for (const p of value.protect as unknown[]) {
      if (!isObj(p) || !onlyKeys(p, ['path', 'kind']) || !relPath(p.path) || (p.kind !== undefined && p.kind !== 'text')) return null;
      protect.push({ path: p.path, kind: 'text' });
    }
  }

  let credentials: WardenConfig['credentials'] = { files: [...DEFAULT_CREDENTIAL_FILES], groups: dict() };
  if (value.credentials !== undefined) {
    const c = value.credentials;
    if (!isObj(c) || !onlyKeys(c, ['files', 'groups'])) return null;
    const files = opt(c, 'files', (v): v is string[] => strings(v, relPath) && v.length > 0, [...DEFAULT_CREDENTIAL_FILES]);
    if (files === FAIL) return null;
    // Group names are data (docs/CONTRACT.md §Credentials): no prototype, so __proto__ is a group like any other.
    const groups: WardenConfig['credentials']['groups'] = dict();
    if (c.groups !== undefined) {
      if (!isObj(c.groups)) return null;
      for (const [name, g] of Object.entries(c.groups)) {
        if (name === '__proto__') return null; // the schema refuses it, located (toml/schema.ts)
        if (!isObj(g) || !onlyKeys(g, ['keys', 'check'])) return null;
        if (!strings(g.keys, (k) => typeof k === 'string' && k.length > 0) || g.keys.length === 0) return null;
        if (g.check !== undefined && g.check !== 'discord-token') return null;
        groups[name] = g.check === undefined ? { keys: [...g.keys] } : { keys: [...g.keys], check: g.check };
      }
    }
    credentials = { files: [...files], groups };
  }
  // parseWardenConfig's own rules: a credential file is a .toml file.
  if (!credentials.files.every((f) => f.endsWith('.toml'))) return null;

  let notify: WardenConfig['notify'] = { min_interval_seconds: 10 };
  if (value.notify !== undefined) {
    const n = value.notify;
    if (!isObj(n) || !onlyKeys(n, ['min_interval_seconds', 'liveness_hours', 'discord', 'desktop', 'journal'])) return null;
    const min = opt(n, 'min_interval_seconds', (v): v is number => finite(v) && v >= 0, 10);
    if (min === FAIL) return null;
    notify = { min_interval_seconds: min };
    if (n.liveness_hours !== undefined) {
      if (!finite(n.liveness_hours) || n.liveness_hours <= 0) return null;
      notify.liveness_hours = n.liveness_hours;
    }
    if (n.discord !== undefined) {
      const d = n.discord;
      if (!isObj(d) || !onlyKeys(d, ['token_file', 'api']) || typeof d.token_file !== 'string' || !d.token_file.startsWith('/')) return null;
      // zod's z.string().url(): the trimmed string must parse as a URL (URL.canParse), and the
      // value kept is the trimmed one without ASCII tabs and newlines. Only a string that
      // needs neither rewrite is taken here; anything else is left to zod.
      if (d.api !== undefined && !(typeof d.api === 'string' && d.api === d.api.trim() && !/[\t\n\r]/.test(d.api) && URL.canParse(d.api))) return null;
      notify.discord = { token_file: d.token_file, ...(d.api !== undefined ? { api: d.api } : {}) };
    }
    for (const k of ['desktop', 'journal'] as const) {
      if (n[k] === undefined) continue;
      const f = enabledFlag(n[k]);
      if (!f) return null;
      notify[k] = f;
    }
  }
  let witness: WardenConfig['witness'];
  if (value.witness !== undefined) {
    const w = value.witness;
    if (!isObj(w) || !onlyKeys(w, ['enabled', 'enforce', 'writer_cgroups'])) return null;
    const enabled = opt(w, 'enabled', (v): v is boolean => typeof v === 'boolean', true);
    const enforce = opt(w, 'enforce', (v): v is boolean => typeof v === 'boolean', false);
    const cg = opt(w, 'writer_cgroups', (v): v is string[] => strings(v, (s) => typeof s === 'string' && s.length >= 2 && s.startsWith('/')), []);
    if (enabled === FAIL || enforce === FAIL || cg === FAIL) return null;
    witness = { enabled, enforce, writer_cgroups: [...cg] };
  }
  // docs/CONTRACT.md §Changes: owner-code needs Discord (parseWardenConfig words the error).
  if (approval === 'owner-code' && !notify.discord) return null;

  return {
    approval, approval_ttl_seconds: ttl, rescan_seconds: rescan, max_bytes: maxBytes, store_max_bytes: storeMax,
    ...(owner ? { owner } : {}), protect, credentials, notify, ...(witness ? { witness } : {}),
  };
}

/**
 * configFromBytes (warden-config.ts) for the guard: the same settings, or the same
 * WardenError, loading zod only when the quick check cannot vouch for the file.
 */
export async function settingsFromBytes(bytes: Buffer | null): Promise<WardenConfig> {
  if (bytes === null) return quickConfig({}) as WardenConfig;
  const parsed = parseToml(bytes.toString('utf8'), WARDEN_TOML);
  const quick = parsed.ok ? quickConfig(parsed.value) : null;
  if (quick) return quick;
  const { configFromBytes } = await import('./warden-config.js');
  return configFromBytes(bytes);
}
