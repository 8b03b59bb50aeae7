/**
 * Grants in the owner's words (docs/PROFILES.md, "Grants"): a candidate compared with the
 * approved version key by key under the shipped profiles. A reformatting is said as such and
 * never hides a grant; credential values appear only as fingerprints.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import JSON5 from 'json5';
import { stringify } from 'smol-toml';
import { factsFor, fileEntryFor, loadProfiles } from '../../src/profiles/index.js';
import { classifyWrite, compareFile, compareTexts, compareValues, type Comparison } from '../../src/grants/index.js';

const { profiles } = loadProfiles();
const places = { home: '/home/u', project: '/srv/app', root: '/r' };

function facts(profile: string, file: string) {
  const p = profiles.find((x) => x.data.name === profile)!.data;
  const e = fileEntryFor(p, file, places);
  assert.ok(e, `${profile} has ${file}`);
  return { facts: factsFor(p, e), format: e.format };
}

function cmp(profile: string, file: string, approved: string, candidate: string): Comparison {
  const f = facts(profile, file);
  const r = compareTexts(file, f.format, approved, candidate, f.facts);
  assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.error));
  return r.ok ? r.comparison : undefined!;
}

const words = (c: Comparison) => c.changes.map((x) => x.words);

const CLAUDE = '/home/u/.claude/settings.json';
const CODEX = '/home/u/.codex/config.toml';

describe('each runtime\'s grants widened or narrowed, named in the owner\'s words', () => {
  it('Claude Code: an allow entry, an MCP server, a hook', () => {
    const c = cmp('claude-code', CLAUDE, '{"permissions": {"allow": ["Read"]}}',
      '{"permissions": {"allow": ["Read", "Bash(curl:*)"]}, "mcpServers": {"x": {"command": "node", "args": ["/tmp/x.js"]}}, "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "/tmp/h.sh"}]}]}}');
    assert.deepEqual(words(c).slice(0, 2), ['permissions.allow + "Bash(curl:*)"', 'mcpServers + "x" (runs: node /tmp/x.js)']);
    assert.match(words(c)[2]!, /^hooks\.PreToolUse \+ \{.*\} \(runs: \/tmp\/h\.sh\)$/);
    assert.ok(c.changes.every((x) => x.change === 'widened' && x.grant));
    assert.equal(c.summary, '3 grants widened');
    assert.equal(c.widens, true);
  });

  it('Codex: sandbox_mode read in its order, both ways', () => {
    const up = cmp('codex', CODEX, 'sandbox_mode = "workspace-write"\n', 'sandbox_mode = "danger-full-access"\n');
    assert.deepEqual(words(up), ['sandbox_mode: workspace-write → danger-full-access']);
    assert.equal(up.changes[0]!.change, 'widened');
    const down = cmp('codex', CODEX, 'sandbox_mode = "danger-full-access"\n', 'sandbox_mode = "read-only"\n');
    assert.equal(down.changes[0]!.change, 'narrowed');
    assert.equal(down.widens, false);
  });

  it('OpenClaw: dmPolicy allowlist → open, and "*" added to allowFrom, in JSON5', () => {
    const c = cmp('openclaw', '/home/u/.openclaw/openclaw.json', "{channels: {discord: {dmPolicy: 'allowlist', allowFrom: ['1']}}}", "// opened\n{channels: {discord: {dmPolicy: 'open', allowFrom: ['1', '*',],},},}");
    assert.deepEqual(words(c), ['channels.discord.dmPolicy: allowlist → open', 'channels.discord.allowFrom + "*"']);
    assert.deepEqual(c.changes.map((x) => x.change), ['widened', 'widened']);
  });

  it('a deny entry removed widens; one added narrows', () => {
    const c = cmp('claude-code', CLAUDE, '{"permissions": {"deny": ["Bash(rm:*)"]}}', '{"permissions": {"deny": ["WebFetch"]}}');
    assert.deepEqual(c.changes.map((x) => [x.change, x.words]), [['narrowed', 'permissions.deny + "WebFetch"'], ['widened', 'permissions.deny - "Bash(rm:*)"']]);
  });

  it('the result carries path, key, change, old and new for alerts --json', () => {
    const c = cmp('codex', CODEX, 'sandbox_mode = "read-only"\n', 'sandbox_mode = "workspace-write"\n');
    const { path, key, change, old, new: nu, grant } = c.changes[0]!;
    assert.deepEqual({ path, key, change, old, new: nu, grant }, { path: CODEX, key: 'sandbox_mode', change: 'widened', old: 'read-only', new: 'workspace-write', grant: true });
  });
});

describe('a reformatting is said as such and hides nothing', () => {
  it('reindented, keys reordered, comments added (JSONC): no change in meaning', () => {
    const c = cmp('gemini-cli', '/home/u/.gemini/settings.json', '{"tools": {"allowed": ["ls"], "exclude": ["rm"]}, "general": {"vimMode": true}}',
      '// mine\n{\n  "general": { "vimMode": true },\n  "tools": {\n    "exclude": ["rm"], // keep\n    "allowed": ["ls"],\n  },\n}\n');
    assert.deepEqual(c.changes, []);
    assert.equal(c.summary, 'no change in meaning (reformatted)');
    assert.equal(c.reformatted, true);
  });

  it('a grant inside a reformatting is still the one change reported', () => {
    const c = cmp('claude-code', CLAUDE, '{"model": "opus", "permissions": {"allow": ["Read"]}}', '{\n    "permissions": {\n        "allow": [\n            "Read",\n            "Bash(curl:*)"\n        ]\n    },\n    "model": "opus"\n}\n');
    assert.deepEqual(words(c), ['permissions.allow + "Bash(curl:*)"']);
    assert.equal(c.reformatted, false);
  });

  it('Codex rules: the same rule rewritten is no change; a new rule is a grant', () => {
    const f = '/home/u/.codex/rules/default.rules';
    assert.equal(cmp('codex', f, 'prefix_rule(pattern=["git","status"], decision="allow")\n', '# status\nprefix_rule(\n  pattern = ["git", "status"],\n  decision = "allow",\n)\n').summary, 'no change in meaning (reformatted)');
    const c = cmp('codex', f, '', 'prefix_rule(pattern=["curl"], decision="allow")\n');
    assert.deepEqual(words(c), ['(the file) + prefix_rule(pattern = ["curl"], decision = "allow")']);
    assert.ok(c.changes[0]!.grant);
  });

  it('where key order decides (OpenCode bash patterns: the last match wins), a reorder is a grant change', () => {
    const c = cmp('opencode', '/srv/app/opencode.json', '{"permission": {"bash": {"*": "ask", "git push": "deny"}}}', '{"permission": {"bash": {"git push": "deny", "*": "ask"}}}');
    assert.equal(c.changes.length, 1);
    assert.equal(c.changes[0]!.grant, true);
    assert.match(c.changes[0]!.words, /^permission\.bash: the order of its entries changed/);
    // …while the tools' own order carries no meaning.
    assert.deepEqual(cmp('opencode', '/srv/app/opencode.json', '{"permission": {"edit": "ask", "bash": "ask"}}', '{"permission": {"bash": "ask", "edit": "ask"}}').changes, []);
  });

  it('a grant deep inside a new table is found (a settings file that had no permissions)', () => {
    const c = cmp('claude-code', CLAUDE, '{}', '{"permissions": {"allow": ["Bash(*)"], "defaultMode": "bypassPermissions"}}');
    assert.deepEqual(words(c), ['permissions.allow + "Bash(*)"', 'permissions.defaultMode: (not set: default) → bypassPermissions']);
    assert.deepEqual(c.changes.map((x) => x.change), ['widened', 'widened']);
    assert.ok(c.changes.every((x) => x.grant));
  });

  it('a table where there was a plain value: the grant inside it is still named', () => {
    const c = cmp('claude-code', CLAUDE, '{"permissions": "none"}', '{"permissions": {"allow": ["Bash(*)"]}}');
    assert.ok(c.changes.some((x) => x.words === 'permissions.allow + "Bash(*)"' && x.change === 'widened'), JSON.stringify(words(c)));
    const back = cmp('claude-code', CLAUDE, '{"permissions": {"deny": ["Bash(rm:*)"]}}', '{"permissions": []}');
    assert.ok(back.changes.some((x) => x.words === 'permissions.deny - "Bash(rm:*)"' && x.change === 'widened'), JSON.stringify(words(back)));
  });

  it('an empty allow list where there was none changes nothing; an empty hook setting does', () => {
    assert.equal(cmp('claude-code', CLAUDE, '{}', '{"permissions": {"allow": []}}').summary, 'no change in meaning (reformatted)');
    const c = cmp('claude-code', CLAUDE, '{}', '{"apiKeyHelper": {}}');
    assert.deepEqual(c.changes.map((x) => [x.change, x.grant]), [['added', true]]);
  });

  it('where an absent list means "all of them" (an agent\'s tools), removing the list widens and adding one narrows', () => {
    const agent = '/srv/app/.claude/agents/a.md';
    const gone = cmp('claude-code', agent, '---\nname: a\ntools: Read, Grep\n---\nx\n', '---\nname: a\n---\nx\n');
    assert.deepEqual(gone.changes.map((x) => [x.change, x.grant, x.words]), [['widened', true, 'tools: ["Grep","Read"] → (not set: all)']]);
    const back = cmp('claude-code', agent, '---\nname: a\n---\nx\n', '---\nname: a\ntools: []\n---\nx\n');
    assert.deepEqual(back.changes.map((x) => [x.change, x.grant]), [['narrowed', true]]);
    const core = cmp('gemini-cli', '/home/u/.gemini/settings.json', '{"tools": {"core": ["ReadFileTool"]}}', '{"tools": {}}');
    assert.deepEqual(core.changes.map((x) => x.change), ['widened']);
  });

  it('a value this profile does not rank is still a grant change', () => {
    const c = cmp('codex', CODEX, 'sandbox_mode = "read-only"\n', 'sandbox_mode = "something-new"\n');
    assert.equal(c.changes[0]!.change, 'changed');
    assert.equal(c.changes[0]!.grant, true);
    assert.equal(c.widens, true);
  });
});

it('keys and values from the file are escaped in the words (a newline or a bidi override cannot forge a line)', () => {
  const c = cmp('claude-code', CLAUDE, '{}', '{"mcpServers": {"a\\n<6>warden: ok\\u202e": {"command": "x\\u001b]52"}}, "odd\\nkey": 1}');
  for (const w of words(c)) assert.doesNotMatch(w, /[\n\u202e\u001b]/, w);
  assert.ok(words(c).some((w) => w.includes('\\n<6>warden')));
});

describe('credentials appear only as fingerprints', () => {
  const SECRET = 'sk-ant-THIS-IS-SECRET-1234567890';
  const fp = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 12);

  it('a key in env, a new MCP server with a key inside, a rotated OpenClaw token', () => {
    const a = cmp('claude-code', CLAUDE, '{"env": {"ANTHROPIC_API_KEY": "old-secret-value"}}', `{"env": {"ANTHROPIC_API_KEY": "${SECRET}"}}`);
    assert.deepEqual(words(a), [`env.ANTHROPIC_API_KEY: credential ${fp('old-secret-value')} → ${fp(SECRET)} (fingerprints)`]);
    assert.equal(a.changes[0]!.credential, 'claude-env');
    const b = cmp('claude-code', '/srv/app/.mcp.json', '{}', `{"mcpServers": {"db": {"command": "npx", "args": ["db-mcp"], "env": {"DB_PASSWORD": "${SECRET}"}}}}`);
    assert.deepEqual(words(b), ['mcpServers + "db" (runs: npx db-mcp)']);
    const c = cmp('openclaw', '/home/u/.openclaw/openclaw.json', `{channels: {telegram: {botToken: "${SECRET}"}}}`, '{channels: {telegram: {botToken: "new-token-value"}}}');
    assert.equal(c.changes[0]!.credential, 'openclaw-config-secrets');
    for (const r of [a, b, c]) assert.ok(!JSON.stringify(r).includes(SECRET), JSON.stringify(r));
  });

  it("a secret under a grant key is still a grant (an MCP server's env can run code)", () => {
    const c = cmp('claude-code', '/srv/app/.mcp.json', '{"mcpServers": {"db": {"command": "npx", "env": {}}}}', '{"mcpServers": {"db": {"command": "npx", "env": {"NODE_OPTIONS": "--require /tmp/x.js"}}}}');
    assert.equal(c.changes.length, 1);
    assert.equal(c.changes[0]!.credential, 'mcp-env');
    assert.equal(c.changes[0]!.grant, true);
    assert.equal(c.widens, true);
    assert.ok(!JSON.stringify(c).includes('/tmp/x.js'));
  });

  it('a whole credential file (.env) as one fingerprint', () => {
    const c = cmp('openclaw', '/home/u/.openclaw/.env', 'KEY=a\n', `KEY=${SECRET}\n`);
    assert.equal(c.changes.length, 1);
    assert.match(c.changes[0]!.words, /^\(the whole file\): credential [0-9a-f]{12} → [0-9a-f]{12} \(fingerprints\)$/);
    assert.ok(!JSON.stringify(c).includes(SECRET));
  });
});

describe("the runtime's own writes", () => {
  const auth = (t: string, key: string | null = null, extra = '') => `{"OPENAI_API_KEY": ${key === null ? 'null' : JSON.stringify(key)}, "tokens": {"access_token": "${t}", "refresh_token": "r-${t}", "id_token": "i"}, "last_refresh": "${t}"${extra}}`;
  const AUTH = '/home/u/.codex/auth.json';

  it('Codex refreshing its tokens is its own write', () => {
    const f = facts('codex', AUTH);
    const c = cmp('codex', AUTH, auth('one'), auth('two'));
    assert.equal(c.changes.length, 3);
    assert.deepEqual(classifyWrite(c.changes, f.facts), { kind: 'own' });
  });

  it('…but an API key written in with it is not', () => {
    const f = facts('codex', AUTH);
    const c = cmp('codex', AUTH, auth('one'), auth('two', 'sk-other'));
    const v = classifyWrite(c.changes, f.facts);
    assert.equal(v.kind, 'foreign');
    assert.deepEqual(v.kind === 'foreign' ? v.outside.map((x) => x.key) : [], ['OPENAI_API_KEY']);
  });

  it('a base URL in config.toml is never the runtime\'s own; trusting a folder is a request', () => {
    const f = facts('codex', CODEX);
    const url = cmp('codex', CODEX, '[model_providers.x]\nbase_url = "https://a"\n', '[model_providers.x]\nbase_url = "https://evil"\n');
    assert.deepEqual(words(url), ['model_providers.x.base_url: https://a → https://evil']);
    assert.equal(classifyWrite(url.changes, f.facts).kind, 'foreign');
    const trust = cmp('codex', CODEX, '', '[projects."/srv/app"]\ntrust_level = "trusted"\n');
    assert.equal(classifyWrite(trust.changes, f.facts).kind, 'on-behalf');
  });

  it('Claude Code\'s "don\'t ask again" in settings.local.json is a request the owner approves', () => {
    const file = '/srv/app/.claude/settings.local.json';
    const f = facts('claude-code', file);
    const c = cmp('claude-code', file, '{"permissions": {"allow": []}}', '{"permissions": {"allow": ["Bash(npm test:*)"]}}');
    const v = classifyWrite(c.changes, f.facts);
    assert.equal(v.kind, 'on-behalf');
    assert.deepEqual(v.kind === 'on-behalf' ? v.changes.map((x) => x.words) : [], ['permissions.allow + "Bash(npm test:*)"']);
    const hook = cmp('claude-code', file, '{}', '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "x"}]}]}}');
    assert.equal(classifyWrite(hook.changes, f.facts).kind, 'foreign');
  });

  it('a rewrite with the same meaning is the runtime\'s own only in a file it rewrites itself', () => {
    const state = facts('claude-code', '/home/u/.claude.json');
    const re1 = cmp('claude-code', '/home/u/.claude.json', '{"a": 1}', '{\n  "a": 1\n}');
    assert.deepEqual(classifyWrite(re1.changes, state.facts), { kind: 'own' });
    const settings = facts('claude-code', CLAUDE);
    const re2 = cmp('claude-code', CLAUDE, '{"a": 1}', '{\n  "a": 1\n}');
    assert.deepEqual(classifyWrite(re2.changes, settings.facts), { kind: 'foreign', outside: [] });
  });

  it("Claude Code's state file: its counters are its own, an MCP server added there is not", () => {
    const file = '/home/u/.claude.json';
    const f = facts('claude-code', file);
    const mine = cmp('claude-code', file, '{"numStartups": 1, "projects": {}}', '{"numStartups": 2, "projects": {"/srv/app": {"allowedTools": [], "mcpServers": {}, "hasTrustDialogAccepted": false}}}');
    assert.deepEqual(classifyWrite(mine.changes, f.facts), { kind: 'own' });
    const evil = cmp('claude-code', file, '{"numStartups": 1}', '{"numStartups": 2, "mcpServers": {"x": {"command": "sh"}}}');
    assert.equal(classifyWrite(evil.changes, f.facts).kind, 'foreign');
  });
});

describe('compareFile: one call from a profile and a concrete file', () => {
  const codex = profiles.find((x) => x.data.name === 'codex')!.data;
  it('finds the entry, compares, and says whose write it can be', () => {
    const r = compareFile(codex, places, '/home/u/.codex/auth.json', '{"tokens": {"access_token": "a"}}', '{"tokens": {"access_token": "b"}}');
    assert.ok(r.ok);
    assert.deepEqual(r.ok ? [r.entry.path, r.comparison.summary, r.write.kind] : [], ['~/.codex/auth.json', '1 credential changed', 'own']);
  });
  it('a file outside the profile, and a candidate that does not parse (located), are said as such', () => {
    assert.deepEqual(compareFile(codex, places, '/home/u/.codex/other.json', '{}', '{}'), { ok: false, reason: 'not-in-profile' });
    const bad = compareFile(codex, places, '/home/u/.codex/config.toml', 'a = 1\n', 'a = \n');
    assert.ok(!bad.ok && bad.reason === 'unparsable' && bad.side === 'candidate' && bad.error.line === 1);
  });
});

describe('properties', () => {
  const settingsFacts = facts('claude-code', CLAUDE).facts;
  const key = fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== '__proto__');
  const json: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, fc.constant(null), fc.boolean(), fc.integer(), fc.string({ maxLength: 10 }), fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(key, tie('value'), { maxKeys: 4 })),
  })).value;
  /** A settings-like document: arbitrary keys plus the grant keys Claude Code has. */
  const settings = fc.record({
    extra: fc.dictionary(key, json, { maxKeys: 5 }),
    allow: fc.array(fc.string({ maxLength: 12 }), { maxLength: 5 }),
    deny: fc.array(fc.string({ maxLength: 12 }), { maxLength: 5 }),
    mode: fc.constantFrom('default', 'acceptEdits', 'plan', 'bypassPermissions'),
    mcp: fc.dictionary(key, fc.record({ command: fc.string({ maxLength: 8 }) }), { maxKeys: 3 }),
  }).map(({ extra, allow, deny, mode, mcp }) => ({ ...extra, permissions: { allow, deny, defaultMode: mode }, mcpServers: mcp }));

  /** The same value with every object's keys in another order, written with another indentation. */
  function reformat(v: unknown, seed: number): unknown {
    if (Array.isArray(v)) return v.map((e, i) => reformat(e, seed + i));
    if (v !== null && typeof v === 'object') {
      const keys = Object.keys(v);
      const order = keys.map((k, i) => ({ k, r: (seed * 31 + i * 17) % 7 })).sort((a, b) => a.r - b.r).map((x) => x.k);
      const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const k of order) out[k] = reformat((v as Record<string, unknown>)[k], seed + 1);
      return out;
    }
    return v;
  }

  it('a reformatting or a reorder of keys is never reported as any change, let alone a grant', () => {
    fc.assert(fc.property(settings, fc.nat(1000), fc.constantFrom(0, 1, 2, 4, '\t'), (doc, seed, indent) => {
      const before = JSON.stringify(doc);
      const after = JSON.stringify(reformat(doc, seed), null, indent);
      const r = compareTexts(CLAUDE, 'json', before, after, settingsFacts);
      assert.ok(r.ok);
      if (!r.ok) return;
      assert.deepEqual(r.comparison.changes, []);
      assert.equal(r.comparison.sameMeaning, true);
    }), { numRuns: 300 });
  });

  it('the same holds across formats: JSON5 (OpenClaw) and TOML (Codex) rewritten by their own writers', () => {
    const claw = facts('openclaw', '/home/u/.openclaw/openclaw.json').facts;
    const codex = facts('codex', CODEX).facts;
    const table = fc.dictionary(key.filter((k) => !/[\u0000-\u001f\u007f]/.test(k)), fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.array(fc.string({ maxLength: 6 }), { maxLength: 3 })), { maxKeys: 4 });
    fc.assert(fc.property(table, table, fc.nat(1000), (t1, t2, seed) => {
      const doc = { channels: { discord: { ...t1, allowFrom: ['1', '2'] } }, tools: t2 };
      const r = compareTexts('o.json5', 'json5', JSON.stringify(doc), JSON5.stringify(reformat(doc, seed), null, 2), claw);
      assert.ok(r.ok && r.comparison.changes.length === 0, JSON.stringify(r));
      const t = compareTexts('c.toml', 'toml', stringify({ ...t1, mcp_servers: { x: t2 } }), stringify(reformat({ mcp_servers: { x: t2 }, ...t1 }, seed) as Record<string, unknown>), codex);
      assert.ok(t.ok && t.comparison.changes.length === 0, JSON.stringify(t));
    }), { numRuns: 200 });
  });

  it('adding an allow entry is always reported as that grant, widened, whatever else is reformatted', () => {
    fc.assert(fc.property(settings, fc.string({ minLength: 1, maxLength: 16 }), fc.nat(1000), (doc, entry, seed) => {
      fc.pre(!doc.permissions.allow.includes(entry));
      const after = reformat(doc, seed) as typeof doc;
      after.permissions.allow = [...after.permissions.allow, entry];
      const r = compareTexts(CLAUDE, 'json', JSON.stringify(doc), JSON.stringify(after, null, 2), settingsFacts);
      assert.ok(r.ok);
      if (!r.ok) return;
      assert.deepEqual(r.comparison.changes.map((c) => [c.key, c.change, c.grant, c.new]), [['permissions.allow', 'widened', true, entry]]);
      assert.equal(r.comparison.widens, true);
    }), { numRuns: 300 });
  });

  it('any change of meaning is reported (never "no change"), and a change under a grant key is a grant', () => {
    fc.assert(fc.property(json, json, (a, b) => {
      const r = compareValues('x.json', a, b, settingsFacts);
      assert.equal(r.sameMeaning, JSON.stringify(sorted(a)) === JSON.stringify(sorted(b)));
    }), { numRuns: 300 });
    // An empty entry of hooks (or empty hooks) means what an absent one does.
    const hooksMeaning = (x: unknown) => {
      const empty = (e: unknown) => (Array.isArray(e) && e.length === 0) || (e !== null && typeof e === 'object' && !Array.isArray(e) && Object.keys(e).length === 0);
      const kept = x !== null && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).filter(([, e]) => !empty(e))) : x;
      return empty(kept) ? undefined : kept;
    };
    fc.assert(fc.property(json, json, (a, b) => {
      fc.pre(JSON.stringify(sorted(hooksMeaning(a))) !== JSON.stringify(sorted(hooksMeaning(b))));
      const r = compareValues('x.json', { hooks: a }, { hooks: b }, settingsFacts);
      assert.ok(r.changes.length > 0 && r.changes.every((c) => c.grant), JSON.stringify(r.changes));
    }), { numRuns: 300 });
  });

  it('whatever two documents hold, a difference at a grant key is reported as a grant at or below that key (type changes too)', () => {
    const grantKeys = [['permissions', 'allow'], ['permissions', 'deny'], ['permissions', 'defaultMode'], ['hooks'], ['mcpServers'], ['apiKeyHelper'], ['sandbox', 'enabled']];
    const at = (v: unknown, path: string[]): unknown => path.reduce<unknown>((o, k) => (o !== null && typeof o === 'object' && !Array.isArray(o) && Object.hasOwn(o, k) ? (o as Record<string, unknown>)[k] : undefined), v);
    const doc = fc.record({ permissions: fc.oneof(json, fc.record({ allow: json, deny: json, defaultMode: json })), hooks: json, mcpServers: json, apiKeyHelper: json, sandbox: fc.oneof(json, fc.record({ enabled: json })) }, { requiredKeys: [] });
    // An empty allow or deny list (or table of hooks, of servers) means what an absent one does.
    const lists = new Set(['permissions.allow', 'permissions.deny', 'hooks', 'mcpServers']);
    const empty = (x: unknown) => (Array.isArray(x) && x.length === 0) || (x !== null && typeof x === 'object' && !Array.isArray(x) && Object.keys(x).length === 0);
    const meaning = (v: unknown, k: string[]) => {
      let x = at(v, k);
      // hooks.* is a rule of its own: an empty entry under hooks means nothing either.
      if (k.join('.') === 'hooks' && x !== null && typeof x === 'object' && !Array.isArray(x)) x = Object.fromEntries(Object.entries(x).filter(([, e]) => !empty(e)));
      return lists.has(k.join('.')) && empty(x) ? undefined : x;
    };
    fc.assert(fc.property(doc, doc, (a, b) => {
      const r = compareValues(CLAUDE, a, b, settingsFacts);
      for (const k of grantKeys) {
        if (JSON.stringify(sorted(meaning(a, k))) === JSON.stringify(sorted(meaning(b, k)))) continue;
        assert.ok(r.changes.some((c) => c.grant && k.every((part, i) => c.keyPath[i] === part)), `${k.join('.')}: ${JSON.stringify(at(a, k))} → ${JSON.stringify(at(b, k))}: ${JSON.stringify(r.changes.map((c) => [c.key, c.grant]))}`);
      }
    }), { numRuns: 1000 });
  });

  it('a credential value never appears in the result', () => {
    fc.assert(fc.property(fc.string({ minLength: 16, maxLength: 40 }), fc.string({ minLength: 16, maxLength: 40 }), json, (s1, s2, noise) => {
      fc.pre(s1 !== s2);
      const before = { env: { ANTHROPIC_API_KEY: s1 }, other: noise };
      const after = { env: { ANTHROPIC_API_KEY: s2, FOO: 'x' }, other: noise };
      const text = JSON.stringify(compareValues(CLAUDE, before, after, settingsFacts));
      assert.ok(!text.includes(JSON.stringify(s1).slice(1, -1)) && !text.includes(JSON.stringify(s2).slice(1, -1)));
    }), { numRuns: 200 });
  });
});

/** A value with every object's keys sorted (meaning, without order). */
function sorted(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sorted);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted((v as Record<string, unknown>)[k])]));
  return v;
}
