/**
 * `warden profiles` (docs/PROFILES.md): the real CLI lists the shipped profiles and a
 * user's own, shows one in full with its paths on this machine, and names a broken profile
 * of the user's by file, line and column.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from '../helpers/root.js';

function withHome(fn: (home: string) => void): void {
  const home = mkdtempSync(join(tmpdir(), 'warden-home-'));
  try { fn(home); } finally { rmSync(home, { recursive: true, force: true }); }
}

const run = (args: string[], env: NodeJS.ProcessEnv = {}) => {
  const clean = { ...process.env };
  delete clean.XDG_CONFIG_HOME;
  delete clean.WARDEN_ROOT;
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: '/', timeout: 30_000, env: { ...clean, NO_COLOR: '1', ...env } });
};

describe('warden profiles', () => {
  it('lists every shipped profile with what it protects, outside any root', () => {
    withHome((home) => {
      const r = run(['profiles', '--home', home]);
      assert.equal(r.status, 0, r.stderr);
      for (const n of ['claude-code', 'codex', 'gemini-cli', 'opencode', 'openclaw', 'warden-example']) assert.match(r.stdout, new RegExp(`^${n} `, 'm'));
      assert.match(r.stdout, /validator: features list \(schema\), execpolicy check \(syntax\)/);
      assert.ok(r.stdout.includes(join(home, '.config/warden/profiles')));
    });
  });

  it('shows one profile in full, its paths under --home and --project', () => {
    withHome((home) => {
      mkdirSync(join(home, '.claude'));
      writeFileSync(join(home, '.claude', 'settings.json'), '{}');
      const r = run(['profiles', 'claude-code', '--home', home, '--project', '/srv/app']);
      assert.equal(r.status, 0, r.stderr);
      assert.ok(r.stdout.includes(`~/.claude/settings.json  [json]  → ${home}/.claude/settings.json\n`), r.stdout);
      assert.ok(r.stdout.includes('→ /srv/app/.mcp.json (absent)'));
      assert.match(r.stdout, /permissions\.allow +adding an entry widens/);
      assert.match(r.stdout, /permissions\.defaultMode +plan < dontAsk < default < acceptEdits < auto < bypassPermissions/);
      assert.match(r.stdout, /for you +<project>\/\.claude\/settings\.local\.json: permissions\.allow/);
    });
  });

  it('--json carries the profile, the validators for the harness, and the paths here', () => {
    withHome((home) => {
      const r = run(['profiles', 'codex', '--home', home, '--json']);
      assert.equal(r.status, 0, r.stderr);
      const j = JSON.parse(r.stdout) as { profiles: { name: string; profile: { validator: { name: string }[] }; paths: { path: string; here: string | null }[] }[] };
      assert.equal(j.profiles[0]!.name, 'codex');
      assert.deepEqual(j.profiles[0]!.profile.validator.map((v) => v.name), ['features list', 'execpolicy check']);
      assert.deepEqual(j.profiles[0]!.paths.find((p) => p.path === '~/.codex/config.toml')?.here, join(home, '.codex/config.toml'));
      assert.equal(j.profiles[0]!.paths.find((p) => p.path === '<project>/.codex/config.toml')?.here, null);
    });
  });

  it("a user's profile is listed as theirs; a broken one is named by file, line and column (exit 2)", () => {
    withHome((home) => {
      const dir = join(home, '.config', 'warden', 'profiles');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'mine.toml'), 'name = "mine"\nruntime = "Mine"\n[[files]]\npath = "~/.mine.json"\nlevel = "user"\nformat = "json"\n');
      const good = run(['profiles', '--home', home]);
      assert.equal(good.status, 0, good.stderr);
      assert.match(good.stdout, /^mine +Mine \(yours\)$/m);
      writeFileSync(join(dir, 'bad.toml'), 'name = "bad"\nruntime = "Bad"\n[[files]]\npath = "~/.bad.json"\nlevel = "user"\nformat = "yaml"\n');
      const bad = run(['profiles', '--home', home]);
      assert.equal(bad.status, 2);
      assert.ok(bad.stderr.includes(`${join(dir, 'bad.toml')}:6:1: [files.0.format]`), bad.stderr);
      assert.match(bad.stdout, /^mine /m);
    });
  });

  it('an unknown profile is a usage error naming the known ones', () => {
    const r = run(['profiles', 'nope', '--json']);
    assert.equal(r.status, 2);
    assert.match((JSON.parse(r.stdout) as { error: string }).error, /no profile named "nope" \(known: claude-code, codex/);
  });
});
