/**
 * `warden check --profile NAME` (docs/PROFILES.md, "warden check --profile"): the real CLI,
 * outside any root, parses a runtime's policy files with errors located by line and column,
 * says a candidate's grants in the owner's words against the file on disk, never prints a
 * credential value, and runs the runtime's own check where it is installed (skipped with one
 * line where it is not).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from '../helpers/root.js';
import { cachedPackages, runtimesCache } from '../../src/validators/index.js';

const SECRET = 'sk-ant-never-shown-7f3a9c';
const SECRET2 = 'sk-ant-also-never-shown-41be';

function withHome(fn: (home: string, top: string) => void): void {
  const top = mkdtempSync(join(tmpdir(), 'warden-check-'));
  const home = join(top, 'home');
  mkdirSync(join(home, '.claude'), { recursive: true });
  try { fn(home, top); } finally { rmSync(top, { recursive: true, force: true }); }
}

/** The CLI with no runtime to be found (an empty cache, a search path of the system's own), unless `env` says otherwise. */
function run(top: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  const empty = join(top, 'no-runtimes');
  mkdirSync(empty, { recursive: true });
  const clean = { ...process.env };
  delete clean.XDG_CONFIG_HOME;
  delete clean.WARDEN_ROOT;
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: '/', timeout: 60_000, env: { ...clean, NO_COLOR: '1', PATH: '/usr/bin:/bin', WARDEN_RUNTIMES_CACHE: empty, ...env } });
}

const APPROVED = `{
  "permissions": { "allow": ["Read"], "deny": ["Bash(rm:*)"] },
  "env": { "ANTHROPIC_API_KEY": "${SECRET}" }
}
`;

describe('warden check --profile', () => {
  it('says a candidate\'s grant in the owner\'s words, exits 0 (a grant is shown, not refused), and skips an absent runtime in one line', () => {
    withHome((home, top) => {
      const settings = join(home, '.claude', 'settings.json');
      writeFileSync(settings, APPROVED);
      const cand = join(top, 'new.json');
      writeFileSync(cand, APPROVED.replace('["Read"]', '["Read", "Bash(curl:*)"]'));
      const r = run(top, ['check', '--profile', 'claude-code', '--home', home, settings, '--from', cand]);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /^ {2}grant permissions\.allow \+ "Bash\(curl:\*\)"$/m);
      assert.match(r.stdout, /1 grant widened/);
      assert.match(r.stdout, /^ {2}claude-code settings load skipped: claude-code is not installed/m);
      assert.equal(r.stdout.split('\n').filter((l) => l.includes('skipped')).length, 1);
      assert.equal(readFileSync(settings, 'utf8'), APPROVED, 'nothing is installed');

      const j = run(top, ['check', '--profile', 'claude-code', '--home', home, settings, '--from', cand, '--json']);
      assert.equal(j.status, 0, j.stderr);
      const doc = JSON.parse(j.stdout);
      assert.equal(doc.ok, true);
      assert.deepEqual(doc.grants.map((g: { path: string; key: string; change: string; new: unknown }) => [g.path, g.key, g.change, g.new]), [[settings, 'permissions.allow', 'widened', 'Bash(curl:*)']]);
      assert.equal(doc.files[0].validators[0].status, 'unavailable');
      assert.equal(doc.files[0].widens, true);
    });
  });

  it('locates a syntax error by file, line and column, and exits 1', () => {
    withHome((home, top) => {
      const settings = join(home, '.claude', 'settings.json');
      writeFileSync(settings, APPROVED);
      const cand = join(top, 'bad.json');
      writeFileSync(cand, '{\n  "permissions": {\n    "allow": ["Read",]\n  }\n}\n');
      const r = run(top, ['check', '--profile', 'claude-code', '--home', home, settings, '--from', cand]);
      assert.equal(r.status, 1, r.stdout + r.stderr);
      assert.ok(r.stdout.includes(`error ${cand}:3:22: `), r.stdout);
      // the file on disk, checked as it is
      writeFileSync(settings, '{\n  "a": 1\n  "b": 2\n}\n');
      const d = run(top, ['check', '--profile', 'claude-code', '--home', home]);
      assert.equal(d.status, 1, d.stdout);
      assert.ok(d.stdout.includes(`error ${settings}:3:3: `), d.stdout);
    });
  });

  it('never prints a credential value, in text or JSON, whether it changes or is only held', () => {
    withHome((home, top) => {
      const settings = join(home, '.claude', 'settings.json');
      writeFileSync(settings, APPROVED);
      const cand = join(top, 'new.json');
      writeFileSync(cand, APPROVED.replace(SECRET, SECRET2));
      for (const args of [[settings, '--from', cand], [settings, '--from', cand, '--json'], [], ['--json']]) {
        const r = run(top, ['check', '--profile', 'claude-code', '--home', home, ...args]);
        assert.equal(r.status, 0, r.stdout + r.stderr);
        for (const s of [SECRET, SECRET2, 'never-shown']) assert.ok(!(r.stdout + r.stderr).includes(s), `${args.join(' ')}: ${r.stdout}`);
        assert.match(r.stdout, /ANTHROPIC_API_KEY/);
        assert.match(r.stdout, /[0-9a-f]{12}/);
      }
    });
  });

  it('without a candidate lists what each present file grants; usage errors exit 2', () => {
    withHome((home, top) => {
      writeFileSync(join(home, '.claude', 'settings.json'), APPROVED);
      const r = run(top, ['check', '--profile', 'claude-code', '--home', home]);
      assert.equal(r.status, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /grant permissions\.allow \+ "Read"/);
      assert.equal(run(top, ['check', '--profile', 'no-such', '--home', home]).status, 2);
      assert.equal(run(top, ['check', '--profile', 'claude-code', '--home', home, join(top, 'elsewhere.json')]).status, 2);
      assert.equal(run(top, ['check', '--profile', 'claude-code', '--home', home, '--from', join(top, 'x.json')]).status, 2);
      // without --profile, check still needs a root, and --home means nothing
      const noRoot = run(top, ['check']);
      assert.equal(noRoot.status, 2);
      assert.match(noRoot.stderr, /not inside a warden root/);
      assert.equal(run(top, ['check', '--home', home]).status, 2);
    });
  });
});

describe("warden check --profile with the runtime's own check", () => {
  const cache = runtimesCache(process.env.HOME || homedir());
  const codex = cachedPackages(cache, '@openai/codex');
  const skip = codex.length === 0 ? `Codex is not in ${cache} (npm run test:runtimes installs it)` : false;

  it('Codex features list accepts a valid config that widens (grant shown), and rejects a bad value as visudo shows it', { skip }, () => {
    withHome((home, top) => {
      mkdirSync(join(home, '.codex'));
      const config = join(home, '.codex', 'config.toml');
      writeFileSync(config, 'sandbox_mode = "workspace-write"\n');
      const wide = join(top, 'wide.toml');
      writeFileSync(wide, 'sandbox_mode = "danger-full-access"\n');
      const ok = run(top, ['check', '--profile', 'codex', '--home', home, config, '--from', wide], { WARDEN_RUNTIMES_CACHE: cache });
      assert.equal(ok.status, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /grant sandbox_mode: workspace-write → danger-full-access/);
      assert.ok(ok.stdout.includes(`>>> ${config}: accepted by codex features list (exit 0, `), ok.stdout);
      const bad = join(top, 'bad.toml');
      writeFileSync(bad, 'sandbox_mode = "sometimes"\n');
      const no = run(top, ['check', '--profile', 'codex', '--home', home, config, '--from', bad], { WARDEN_RUNTIMES_CACHE: cache });
      assert.equal(no.status, 1, no.stdout + no.stderr);
      assert.ok(no.stdout.includes(`>>> ${config}: rejected by codex features list (exit 1, `), no.stdout);
      assert.match(no.stdout, /^ {4}.*sometimes/m);
      assert.equal(readFileSync(config, 'utf8'), 'sandbox_mode = "workspace-write"\n');
    });
  });

  const claude = cachedPackages(cache, '@anthropic-ai/claude-code');
  const skipClaude = claude.length === 0 ? `Claude Code is not in ${cache} (npm run test:runtimes installs it)` : false;

  it("Claude Code's own settings load accepts Bash(curl:*) in permissions.allow (grant shown) and rejects an unknown default mode, naming the real file", { skip: skipClaude }, () => {
    withHome((home, top) => {
      const settings = join(home, '.claude', 'settings.json');
      writeFileSync(settings, '{ "permissions": { "allow": ["Read"] } }\n');
      const cand = join(top, 'new.json');
      writeFileSync(cand, '{ "permissions": { "allow": ["Read", "Bash(curl:*)"] } }\n');
      const ok = run(top, ['check', '--profile', 'claude-code', '--home', home, settings, '--from', cand], { WARDEN_RUNTIMES_CACHE: cache });
      assert.equal(ok.status, 0, ok.stdout + ok.stderr);
      assert.match(ok.stdout, /^ {2}grant permissions\.allow \+ "Bash\(curl:\*\)"$/m);
      assert.ok(ok.stdout.includes(`>>> ${settings}: accepted by claude-code settings load (exit 1, `), ok.stdout);
      writeFileSync(cand, '{ "permissions": { "defaultMode": "yolo" } }\n');
      const no = run(top, ['check', '--profile', 'claude-code', '--home', home, settings, '--from', cand, '--json'], { WARDEN_RUNTIMES_CACHE: cache });
      assert.equal(no.status, 1, no.stdout + no.stderr);
      const v = JSON.parse(no.stdout).files[0].validators[0];
      assert.equal(v.status, 'invalid');
      assert.ok(v.message.includes(`${settings} (permissions.defaultMode)`), v.message);
    });
  });
});
