/**
 * Profiles are data (docs/PROFILES.md): the shipped ones load with no error, a user adds
 * one without code, and every mistake in a profile file is located by file, line and column.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  atOrBelow, expandPath, factsFor, fileEntryFor, keyWords, loadProfiles, matchKey, parseKeyPattern, parseProfile, reachesBelow, ruleWords, userProfilesDir,
} from '../../src/profiles/index.js';
import { BUILTIN, fromProfileValidator } from '../../src/validators/index.js';

const SHIPPED = ['claude-code', 'codex', 'gemini-cli', 'openclaw', 'opencode', 'warden-example'];

const MINIMAL = `name = "mine"
runtime = "My agent"

[[files]]
path = "~/.mine/policy.json"
level = "user"
format = "json"
rules = "policy"

[[rules.policy]]
key = "allow"
widens = "add"
`;

function userDir(files: Record<string, string>): { dir: string; done: () => void } {
  const top = mkdtempSync(join(tmpdir(), 'warden-profiles-'));
  const dir = join(top, 'profiles');
  mkdirSync(dir);
  for (const [n, t] of Object.entries(files)) writeFileSync(join(dir, n), t);
  return { dir, done: () => rmSync(top, { recursive: true, force: true }) };
}

describe('the shipped profiles', () => {
  const { profiles, errors } = loadProfiles();
  it('all load, with no error', () => {
    assert.deepEqual(errors, []);
    assert.deepEqual(profiles.map((p) => p.data.name), SHIPPED);
    assert.ok(profiles.every((p) => p.origin === 'shipped'));
  });

  it("each runtime's files and grants are there, as measured", () => {
    const by = (n: string) => profiles.find((p) => p.data.name === n)!.data;
    const paths = (n: string) => by(n).files.map((f) => f.path);
    for (const p of ['~/.claude/settings.json', '<project>/.claude/settings.json', '<project>/.claude/settings.local.json', '<project>/.mcp.json', '/etc/claude-code/managed-settings.json']) assert.ok(paths('claude-code').includes(p), p);
    for (const p of ['~/.codex/config.toml', '~/.codex/hooks.json', '~/.codex/rules/*.rules', '~/.codex/auth.json', '/etc/codex/requirements.toml']) assert.ok(paths('codex').includes(p), p);
    assert.ok(paths('gemini-cli').includes('~/.gemini/settings.json'));
    assert.ok(paths('opencode').includes('<project>/opencode.json'));
    assert.equal(by('openclaw').files.find((f) => f.path === '~/.openclaw/openclaw.json')?.format, 'json5');
    assert.equal(by('gemini-cli').files.find((f) => f.path === '~/.gemini/settings.json')?.format, 'jsonc');
    const sandbox = by('codex').rules.config!.find((r) => r.key === 'sandbox_mode')!;
    assert.deepEqual(sandbox.order, ['read-only', 'workspace-write', 'danger-full-access']);
    assert.equal(by('claude-code').rules.settings!.find((r) => r.key === 'permissions.deny')!.widens, 'remove');
  });

  it('Codex may refresh its tokens itself, never its API key; its validators are described for the harness', () => {
    const codex = profiles.find((p) => p.data.name === 'codex')!.data;
    const own = codex.runtime_writes.find((w) => w.file === '~/.codex/auth.json')!;
    assert.equal(own.mode, 'own');
    assert.ok(own.keys.includes('tokens.access_token'));
    assert.ok(!own.keys.some((k) => k.includes('OPENAI_API_KEY') || k.includes('base_url') || k.includes('account_id') || k.includes('auth_mode')));
    const names = codex.validator.map((v) => v.name);
    assert.deepEqual(names, ['features list', 'execpolicy check']);
    const fl = codex.validator[0]!;
    assert.deepEqual([fl.command, fl.args, fl.env.CODEX_HOME, fl.valid_exit_codes], ['codex', ['features', 'list'], '{scratch}', [0]]);
    const oc = profiles.find((p) => p.data.name === 'opencode')!.data.validator[0]!;
    assert.deepEqual([oc.args, oc.env.OPENCODE_CONFIG, oc.invalid_exit_codes], [['debug', 'config'], '{candidate}', [1]]);
    assert.equal(profiles.find((p) => p.data.name === 'openclaw')!.data.validator[0]!.node_major, 24);
  });

  it("every shipped validator maps onto the harness: each sees the candidate, and the built-in checks' places apply", () => {
    const mapped: string[] = [];
    for (const p of profiles) {
      for (const v of p.data.validator) {
        const spec = fromProfileValidator(p.data.name, v);
        mapped.push(`${p.data.name}: ${spec.name}`);
        const builtin = BUILTIN.find((b) => b.runtime === p.data.name && b.name === v.name);
        assert.ok(builtin, `${p.data.name} "${v.name}" is a built-in check of the harness`);
        assert.equal(spec.candidate, builtin.candidate);
      }
    }
    assert.deepEqual(mapped.sort(), ['claude-code: settings load', 'codex: execpolicy check', 'codex: features list', 'gemini-cli: settings load', 'openclaw: config validate', 'opencode: debug config']);
  });
});

describe("a user's validator", () => {
  it('that would never see the candidate is an error located at its table; one that names its candidate place loads', () => {
    const never = `${MINIMAL}
[[validator]]
name = "lint"
command = "mine"
args = ["lint"]
files = ["~/.mine/policy.json"]
valid_exit_codes = [0]
strength = "schema"
`;
    const r = parseProfile(never, '/p/mine.toml', 'mine');
    assert.equal(r.ok, false);
    const e = !r.ok ? r.errors.find((x) => x.key === 'validator.0.name') : undefined;
    assert.ok(e, JSON.stringify(r));
    assert.match(e.message, /never see the file it checks/);
    assert.ok(e.line !== undefined && e.line > 1);
    const placed = parseProfile(`${never}candidate = "{scratch}/.mine/policy.json"\n`, '/p/mine.toml', 'mine');
    assert.equal(placed.ok, true, JSON.stringify(placed));
    const outside = parseProfile(`${never}candidate = "/etc/passwd"\n`, '/p/mine.toml', 'mine');
    assert.equal(outside.ok, false);
  });
});

describe("a user's own profile", () => {
  it('loads without code, marked as the user\'s', () => {
    const u = userDir({ 'mine.toml': MINIMAL });
    try {
      const r = loadProfiles({ userDir: u.dir });
      assert.deepEqual(r.errors, []);
      const mine = r.profiles.find((p) => p.data.name === 'mine');
      assert.equal(mine?.origin, 'user');
    } finally { u.done(); }
  });

  it('never replaces a shipped profile: refused, located, and the shipped one stays', () => {
    const u = userDir({ 'codex.toml': MINIMAL.replace('name = "mine"', 'name = "codex"') });
    try {
      const r = loadProfiles({ userDir: u.dir });
      assert.equal(r.errors.length, 1);
      assert.match(r.errors[0]!.message, /already shipped with warden/);
      assert.equal(r.errors[0]!.file, join(u.dir, 'codex.toml'));
      assert.equal(r.profiles.find((p) => p.data.name === 'codex')?.origin, 'shipped');
    } finally { u.done(); }
  });

  it('a profile that is a symlink is refused (it could point anywhere)', () => {
    const u = userDir({});
    try {
      writeFileSync(join(u.dir, '..', 'real.toml'), MINIMAL);
      symlinkSync(join(u.dir, '..', 'real.toml'), join(u.dir, 'mine.toml'));
      const r = loadProfiles({ userDir: u.dir });
      assert.match(r.errors[0]!.message, /regular file/);
      assert.ok(!r.profiles.some((p) => p.data.name === 'mine'));
    } finally { u.done(); }
  });

  it("a missing user folder is no error; warden's own folder missing is one", () => {
    assert.deepEqual(loadProfiles({ userDir: '/nonexistent/warden/profiles' }).errors, []);
    const r = loadProfiles({ shippedDir: '/nonexistent/warden/shipped' });
    assert.deepEqual(r.profiles, []);
    assert.match(r.errors[0]!.message, /own profiles are missing from its package/);
  });

  it('lives in $XDG_CONFIG_HOME/warden/profiles, else ~/.config/warden/profiles', () => {
    assert.equal(userProfilesDir('/home/u', {}), '/home/u/.config/warden/profiles');
    assert.equal(userProfilesDir('/home/u', { XDG_CONFIG_HOME: '/x/cfg' }), '/x/cfg/warden/profiles');
    assert.equal(userProfilesDir('/home/u', { XDG_CONFIG_HOME: 'relative' }), '/home/u/.config/warden/profiles');
  });
});

describe('mistakes in a profile are located', () => {
  const errs = (text: string, stem = 'mine') => { const r = parseProfile(text, 'mine.toml', stem); assert.ok(!r.ok); return r.ok ? [] : r.errors; };

  it('an unknown key (a misspelt one protects nothing) names its line and column', () => {
    const e = errs(MINIMAL.replace('widens = "add"', 'widens = "add"\nwiden = "remove"'));
    assert.equal(e.length, 1);
    assert.deepEqual([e[0]!.line, e[0]!.column, e[0]!.key], [13, 1, 'rules.policy.0.widen']);
    assert.match(e[0]!.message, /unknown key "widen"/);
  });

  it('a bad format or direction is refused at its key', () => {
    assert.equal(errs(MINIMAL.replace('format = "json"', 'format = "yaml"'))[0]!.line, 7);
    assert.equal(errs(MINIMAL.replace('widens = "add"', 'widens = "more"'))[0]!.line, 12);
  });

  it("a path must start with its level's placeholder; a rule set must exist; the name is the file's", () => {
    assert.match(errs(MINIMAL.replace('path = "~/.mine/policy.json"', 'path = "/etc/mine.json"'))[0]!.message, /user-level path starts with "~\/"/);
    assert.match(errs(MINIMAL.replace('path = "~/.mine/policy.json"', 'path = "~/../etc/x.json"'))[0]!.message, /"\.\."/);
    const missing = errs(MINIMAL.replace('rules = "policy"', 'rules = "nope"'))[0]!;
    assert.match(missing.message, /no rule set \[rules\.nope\]/);
    assert.equal(missing.line, 8);
    assert.match(errs(MINIMAL, 'other')[0]!.message, /must be the file's name/);
  });

  it('an enum rule needs its order, and its default must be in it', () => {
    assert.match(errs(MINIMAL.replace('widens = "add"', 'widens = "enum"'))[0]!.message, /needs its order/);
    assert.match(errs(MINIMAL.replace('widens = "add"', 'widens = "enum"\norder = ["a", "b"]\ndefault = "c"'))[0]!.message, /one of the order/);
  });

  it('credentials and validators refer to files of the profile', () => {
    const e = errs(`${MINIMAL}\n[[credentials]]\ngroup = "k"\nfile = "~/.other.json"\nkeys = ["key"]\n`);
    assert.match(e[0]!.message, /not one of this profile's \[\[files\]\] paths/);
    assert.equal(e[0]!.line, 16);
  });

  it('a TOML syntax error is located', () => {
    const e = errs('name = "mine"\nruntime = \n');
    assert.equal(e[0]!.line, 2);
  });
});

describe('paths and keys', () => {
  const { profiles } = loadProfiles();
  const claude = profiles.find((p) => p.data.name === 'claude-code')!.data;
  const places = { home: '/home/u', project: '/srv/app' };

  it('placeholders expand; a project path without a project is left out', () => {
    assert.equal(expandPath('~/.claude/settings.json', places), '/home/u/.claude/settings.json');
    assert.equal(expandPath('<project>/.mcp.json', places), '/srv/app/.mcp.json');
    assert.equal(expandPath('<project>/.mcp.json', { home: '/home/u' }), undefined);
    assert.equal(expandPath('/etc/claude-code/managed-settings.json', {}), '/etc/claude-code/managed-settings.json');
  });

  it('a concrete file finds its entry: an exact path, else a glob (dot files too)', () => {
    assert.equal(fileEntryFor(claude, '/srv/app/.claude/settings.local.json', places)?.path, '<project>/.claude/settings.local.json');
    assert.equal(fileEntryFor(claude, '/home/u/.claude/agents/deep/x.md', places)?.format, 'markdown-frontmatter');
    assert.equal(fileEntryFor(claude, '/home/u/.claude/other.json', places), undefined);
    const facts = factsFor(claude, fileEntryFor(claude, '/srv/app/.claude/settings.local.json', places)!);
    assert.ok(facts.rules.some((r) => r.rule.key === 'permissions.allow'));
    assert.equal(facts.runtimeWrites[0]?.write.mode, 'on-behalf');
  });

  it('key patterns: dotted, quoted, * and **', () => {
    const p = (s: string) => parseKeyPattern(s)!;
    assert.ok(matchKey(p('permissions.allow'), ['permissions', 'allow']));
    assert.ok(!matchKey(p('permissions.allow'), ['permissions']));
    assert.ok(matchKey(p('mcpServers.*.env'), ['mcpServers', 'a.b', 'env']));
    assert.ok(matchKey(p('"a.b".c'), ['a.b', 'c']));
    assert.ok(matchKey(p('**'), []));
    assert.ok(matchKey(p('a.**'), ['a', 'b', 'c']));
    assert.ok(reachesBelow(p('projects.*.mcpServers'), ['projects']));
    assert.ok(!reachesBelow(p('projects.*.mcpServers'), ['other']));
    assert.ok(atOrBelow(p('env'), ['env', 'X']));
    assert.equal(parseKeyPattern('a..b'), undefined);
    assert.equal(keyWords(['mcpServers', 'a.b', 'command']), 'mcpServers."a.b".command');
    assert.equal(keyWords(['hooks', 'PreToolUse', 0]), 'hooks.PreToolUse[0]');
  });

  it('rules in words', () => {
    assert.equal(ruleWords({ key: 'sandbox_mode', widens: 'enum', order: ['read-only', 'workspace-write', 'danger-full-access'] }), 'read-only < workspace-write < danger-full-access');
    assert.match(ruleWords({ key: 'permissions.deny', widens: 'remove', set: true }), /^removing an entry widens/);
  });
});
