/**
 * The guard's zod-free settings (src/config/quick-config.ts) never disagree with the zod
 * schema (src/config/warden-config.ts): whatever the quick check accepts, zod accepts with
 * the same result, defaults included; whatever zod refuses, the quick check refuses (and
 * zod words the error). Checked on the shipped configs and on thousands of mutations.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'smol-toml';
import { quickConfig, settingsFromBytes } from '../../src/config/quick-config.js';
import { parseWardenConfig } from '../../src/config/warden-config.js';
import { WardenError } from '../../src/common/errors.js';
import { REPO, TEST_WARDEN_TOML } from '../helpers/root.js';

const FIXTURE_TOML = readFileSync(join(REPO, 'test', 'fixtures', 'example-root', 'config', 'warden.toml'), 'utf8');
const FULL = `${TEST_WARDEN_TOML}
[[protect]]
path = "data/*.txt"
kind = "text"

[notify]
min_interval_seconds = 0
liveness_hours = 24

[notify.discord]
token_file = "/etc/warden/token"
api = "http://127.0.0.1:8080/api"

[notify.desktop]
enabled = false

[witness]
enforce = true
writer_cgroups = ["/system.slice/warden-guard.service"]
`;

/** The two must agree on this parsed value; returns whether it was valid. */
function agree(value: Record<string, unknown>, what: string): boolean {
  let source: string;
  try { source = stringify(value); } catch { return false; /* not representable as TOML: not an input */ }
  const z = parseWardenConfig(source);
  const q = quickConfig(parse(source));
  if (q !== null) {
    assert.ok(z.ok, `${what}: quick accepted what zod refuses: ${source}`);
    assert.deepStrictEqual(q, z.config, `${what}: different settings for ${source}`);
  }
  if (!z.ok) assert.equal(q, null, `${what}: quick accepted an invalid config: ${source}`);
  return z.ok;
}

it('the shipped and test configs take the quick path, with zod\'s exact result', () => {
  for (const [name, src] of [['fixture', FIXTURE_TOML], ['test', TEST_WARDEN_TOML], ['full', FULL], ['empty', '']] as const) {
    const value = parse(src);
    const q = quickConfig(value);
    assert.ok(q, `${name} takes the quick path`);
    const z = parseWardenConfig(src);
    assert.ok(z.ok);
    assert.deepStrictEqual(q, z.config, name);
  }
});

it('thousands of mutations: the quick check never accepts what zod refuses, never differs from it', () => {
  let seed = 17;
  const rnd = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
  const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)] as T;
  const values: unknown[] = ['', 'tty', 'owner-code', 'none', 'text', 'discord-token', 'x', '/abs/path', '../up', 'a/../b', 'config/credentials.toml', 'config/c.json',
    '123456789012345678', '123456789012345678901', '12ab', 'https://discord.example/api', ' https://discord.example/api', 'https://discord.exa\nmple/api', 'http:discord', 'not a url', 0, 1, -1, 1.5, 30, 86400, 2 ** 53, NaN, Infinity, -Infinity, true, false,
    [], ['config/credentials.toml'], ['a', ''], [1], [{ path: 'x/*.txt' }], [{ path: '/x' }], [{ path: 'x', kind: 'json' }], {}, { enabled: true }, { enabled: 'yes' }, { keys: ['k'] }, { keys: [] },
    { discord_id: '1' }, { token_file: '/t' }, { token_file: 't' }, { token_file: '/t', api: 'https://x.example/' }, { token_file: '/t', api: 'http://127.0.0.1:9/api' },
    { token_file: '/t', api: ' https://x.example/' }, { token_file: '/t', api: 'https://x.exa\tmple/' }, { token_file: '/t', api: 'https://x.example/\n' },
    { token_file: '/t', api: 'http:x' }, { token_file: '/t', api: 'mailto:a@b' }, { token_file: '/t', api: '//x.example' }, { token_file: '/t', api: 'https://[::1' }, { token_file: '/t', api: 7 }, { x: 1 }, new Date(0), ['/system.slice/x.service'], ['relative'], ['/']];
  const keysAt: Record<string, readonly string[]> = {
    '': ['approval', 'approval_ttl_seconds', 'rescan_seconds', 'max_bytes', 'store_max_bytes', 'owner', 'protect', 'credentials', 'notify', 'witness', 'extra'],
    witness: ['enabled', 'enforce', 'writer_cgroups', 'other'],
    owner: ['discord_id', 'name'],
    credentials: ['files', 'groups', 'other'],
    'credentials.groups': ['discord', 'other'],
    'credentials.groups.discord': ['keys', 'check', 'more'],
    notify: ['min_interval_seconds', 'liveness_hours', 'discord', 'desktop', 'journal', 'email'],
    'notify.discord': ['token_file', 'api', 'channel'],
    'notify.desktop': ['enabled', 'sound'],
    'notify.journal': ['enabled'],
  };
  let valid = 0;
  for (let i = 0; i < 3000; i++) {
    const base = parse(pick([FIXTURE_TOML, TEST_WARDEN_TOML, FULL])) as Record<string, unknown>;
    for (let m = 0, n = 1 + rnd(3); m < n; m++) {
      const at = pick(Object.keys(keysAt));
      let node: Record<string, unknown> = base;
      for (const seg of at === '' ? [] : at.split('.')) {
        if (typeof node[seg] !== 'object' || node[seg] === null || Array.isArray(node[seg])) node[seg] = {};
        node = node[seg] as Record<string, unknown>;
      }
      const key = pick(keysAt[at]!);
      if (rnd(5) === 0) delete node[key]; else node[key] = structuredClone(pick(values));
    }
    if (agree(base, `mutation ${i}`)) valid++;
  }
  assert.ok(valid > 100, `enough of the mutations are valid to test the accepting side (${valid})`);
});

it('settingsFromBytes gives the same WardenError as configFromBytes for an invalid file', async () => {
  const bad = Buffer.from('approval = "sometimes"\n');
  await assert.rejects(settingsFromBytes(bad), (e: unknown) => e instanceof WardenError && /warden\.toml is invalid/.test(e.message));
  const torn = Buffer.from('approval = \n');
  await assert.rejects(settingsFromBytes(torn), (e: unknown) => e instanceof WardenError && e.details.length > 0);
  assert.deepStrictEqual(await settingsFromBytes(null), parseWardenConfig('').ok ? (parseWardenConfig('') as { config: unknown }).config : null);
});

it('a Discord api URL: the quick path keeps it only as zod would, else leaves it to zod', () => {
  const apis = ['http://127.0.0.1:9/api', 'https://discord.example/api/v10', ' https://discord.example/api', 'https://discord.example/api ',
    'https://discord.exa\tmple/api', 'https://discord.example/\napi', 'http:discord', 'mailto:a@b', '//discord.example', 'https://[::1', 'not a url', ''];
  const quick: string[] = [];
  for (const api of apis) {
    const value = parse(FULL) as { notify: { discord: Record<string, unknown> } };
    value.notify.discord.api = api;
    agree(value, `api ${JSON.stringify(api)}`);
    if (quickConfig(parse(stringify(value)))) quick.push(api);
  }
  // What URL.canParse takes, untrimmed and with no tab or newline, takes the quick path (the
  // bench roots and a deployment behind a proxy do not load zod); the rest is zod's to word.
  assert.deepStrictEqual(quick, ['http://127.0.0.1:9/api', 'https://discord.example/api/v10', 'http:discord', 'mailto:a@b']);
});
