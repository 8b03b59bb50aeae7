/**
 * Sanctioned changes of a profile's root are checked before anything is asked or written
 * (docs/PROFILES.md, "Sanctioned changes on a profile's root"): warden parses the proposed
 * file in its recorded format (errors located by line and column), and where the runtime is
 * installed runs the runtime's own check on a scratch copy, refusing an invalid candidate
 * with the runtime's words, as visudo does. `apply`, `edit` and `approve`, with and without
 * the daemon. The runtime here is a stand-in `codex` on the search path that answers as the
 * real one does (the real runtimes: test/runtimes/, `npm run test:runtimes`).
 */
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI } from '../helpers/root.js';
import { killOwned } from '../helpers/children.js';
import { profileWorld, type ProfileHome } from '../helpers/profile-home.js';
import { ptyRun } from '../helpers/pty.js';
import { probeIsolation } from '../../src/validators/index.js';

const APPROVED = 'model = "gpt-5"\nsandbox_mode = "workspace-write"\n';
const GRANTED = 'model = "gpt-5"\nsandbox_mode = "danger-full-access"\n';
const UNKNOWN_MODE = 'model = "gpt-5"\nsandbox_mode = "danger-everything"\n';
/** What the real Codex 0.171 prints for an unknown sandbox mode (test/runtimes/cases.ts). */
const CODEX_WORDS = 'Error loading config.toml: unknown variant `danger-everything`, expected one of `read-only`, `workspace-write`, `danger-full-access`';

/**
 * A stand-in for `codex features list`: reads the candidate where Codex reads it
 * ($CODEX_HOME/config.toml) and answers as Codex does; `mode` beside it set to "reject"
 * makes it refuse everything (the runtime upgraded between request and approval).
 */
const FAKE_CODEX = `#!/bin/sh
dir=$(dirname "$0")
f="$CODEX_HOME/config.toml"
if [ "$(cat "$dir/mode" 2>/dev/null)" = reject ] || grep -q danger-everything "$f"; then
  echo '${CODEX_WORDS}' >&2
  exit 1
fi
echo 'apps   stable   true'
exit 0
`;

interface Home extends ProfileHome { codex: string; config: string; bin: string }
const world = profileWorld('profile-validate');
const iso = probeIsolation();

function makeHome(): Home {
  // A stand-in `codex` first on the search path, and no runtimes cache: the check these tests see is the stand-in's.
  const base = world.home({}, ['VISUAL', 'EDITOR']);
  const bin = join(base.top, 'bin');
  base.env.PATH = `${bin}:${process.env.PATH ?? '/usr/bin:/bin'}`;
  base.env.WARDEN_RUNTIMES_CACHE = join(base.top, 'no-cache');
  const codex = join(base.home, '.codex');
  mkdirSync(codex, { recursive: true });
  writeFileSync(join(codex, 'config.toml'), APPROVED);
  mkdirSync(bin);
  writeFileSync(join(bin, 'codex'), FAKE_CODEX);
  chmodSync(join(bin, 'codex'), 0o755);
  const h: Home = { ...base, codex, config: join(codex, 'config.toml'), bin };
  const init = w(h, ['init', ...sel(h)]);
  assert.equal(init.code, 0, init.stderr);
  return h;
}

const sel = (h: Home): string[] => ['--profile', 'codex', '--home', h.home];

function w(h: Home, args: string[], o: { input?: string; env?: NodeJS.ProcessEnv } = {}) {
  const r = spawnSync(process.execPath, [CLI, ...args], { env: { ...h.env, ...o.env }, cwd: '/', input: o.input ?? '', encoding: 'utf8', timeout: 60_000 });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

function candidate(h: Home, text: string): string {
  const f = join(h.top, `cand-${Math.random().toString(36).slice(2)}.toml`);
  writeFileSync(f, text);
  return f;
}

const pendingIds = (h: Home): string[] => {
  const r = w(h, ['approve', ...sel(h), '--json']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  return (JSON.parse(r.stdout) as { id: string }[]).map((p) => p.id);
};

const guard = async (h: Home): Promise<void> => { await world.guard(h, sel(h)); };

afterEach(async () => {
  await world.stopGuards();
  await killOwned();
});
after(() => world.removeHomes());

const noRuntimeCheck = iso.isolation === 'none' ? `the runtime's check cannot be isolated here: ${iso.reason}` : false;

describe('sanctioned changes of a profile\'s root: warden\'s check, then the runtime\'s own', () => {
  it('a proposed file that does not parse in its format is refused, located by line and column; nothing is written or requested', () => {
    const h = makeHome();
    const r = w(h, ['apply', ...sel(h), h.config, '--from', candidate(h, 'sandbox_mode = \n')]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /config\.toml:1:\d+: /, r.stderr);
    assert.equal(readFileSync(h.config, 'utf8'), APPROVED);
    assert.deepEqual(pendingIds(h), [], 'no request is left to approve');
    const json = '{ "permissions": { "allow": [ }\n';
    const c = join(h.home, '.claude');
    mkdirSync(c);
    writeFileSync(join(c, 'settings.json'), '{}\n');
    const s = ['--profile', 'claude-code', '--home', h.home];
    assert.equal(w(h, ['init', ...s]).code, 0);
    const r2 = w(h, ['apply', ...s, join(c, 'settings.json'), '--from', candidate(h, json), '--json']);
    assert.equal(r2.code, 1, r2.stdout + r2.stderr);
    const doc = JSON.parse(r2.stdout) as { details: { file: string; line?: number; column?: number }[] };
    assert.deepEqual(doc.details.map((d) => [d.file, d.line, typeof d.column]), [['settings.json', 1, 'number']]);
    assert.equal(readFileSync(join(c, 'settings.json'), 'utf8'), '{}\n');
  });

  it('apply: a candidate the runtime would not load is refused with the runtime\'s own words, naming the real file; a valid one with a grant is shown and says the runtime accepted it', { skip: noRuntimeCheck }, () => {
    const h = makeHome();
    const r = w(h, ['apply', ...sel(h), h.config, '--from', candidate(h, UNKNOWN_MODE)]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /refused: the runtime would not load the proposed content; nothing was changed/);
    assert.match(r.stderr, /config\.toml: rejected by codex features list \(exit 1, \d+ ms\)/);
    assert.ok(r.stderr.includes(CODEX_WORDS), r.stderr);
    assert.equal(readFileSync(h.config, 'utf8'), APPROVED, 'nothing written');
    assert.deepEqual(pendingIds(h), [], 'nothing requested');

    const ok = w(h, ['apply', ...sel(h), h.config, '--from', candidate(h, GRANTED)]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    assert.match(ok.stderr, /config\.toml: accepted by codex features list \(\d+ ms\)/);
    assert.match(ok.stdout, /sandbox_mode: workspace-write → danger-full-access/);
    assert.equal(pendingIds(h).length, 1);
    assert.equal(readFileSync(h.config, 'utf8'), APPROVED, 'pending: not written yet');
    // --json carries the checks.
    const js = w(h, ['apply', ...sel(h), h.config, '--from', candidate(h, GRANTED), '--json']);
    assert.equal(js.code, 0, js.stdout + js.stderr);
    const doc = JSON.parse(js.stdout) as { runtime_checks?: { path: string; runtime: string; validator: string; status: string }[] };
    assert.deepEqual(doc.runtime_checks?.map((c) => [c.path, c.runtime, c.validator, c.status]), [['config.toml', 'codex', 'features list', 'valid']]);
  });

  it('approve: the runtime\'s check runs again, and a refusal then withdraws the request; nothing is written', { skip: noRuntimeCheck }, () => {
    const h = makeHome();
    const ok = w(h, ['apply', ...sel(h), h.config, '--from', candidate(h, GRANTED)]);
    assert.equal(ok.code, 0, ok.stdout + ok.stderr);
    const [id] = pendingIds(h);
    assert.ok(id);
    writeFileSync(join(h.bin, 'mode'), 'reject\n');
    const r = ptyRun([['\\[y/N\\]', 'y\r']], [process.execPath, CLI, 'approve', ...sel(h), id], { env: h.env, cwd: '/' });
    assert.equal(r.code, 1, r.out);
    assert.match(r.out, /rejected by codex features list/);
    assert.match(r.out, new RegExp(`request ${id} is withdrawn`));
    assert.equal(readFileSync(h.config, 'utf8'), APPROVED);
    assert.deepEqual(pendingIds(h), []);
  });

  it('through the daemon: the guard runs the runtime\'s check on a proposal, refuses an invalid one, and applies an approved valid one', { skip: noRuntimeCheck }, async () => {
    const h = makeHome();
    await guard(h);
    const r = w(h, ['apply', ...sel(h), h.config, '--from', candidate(h, UNKNOWN_MODE)]);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.ok(r.stderr.includes(CODEX_WORDS), r.stderr);
    assert.equal(readFileSync(h.config, 'utf8'), APPROVED);
    const a = ptyRun([['\\[y/N\\]', 'y\r']], [process.execPath, CLI, 'apply', ...sel(h), h.config, '--from', candidate(h, GRANTED)], { env: h.env, cwd: '/' });
    assert.equal(a.code, 0, a.out);
    assert.match(a.out, /accepted by codex features list/);
    assert.equal(readFileSync(h.config, 'utf8'), GRANTED);
  });

  it('edit: the runtime\'s refusal is shown as visudo shows a syntax error, and the owner may edit again or abandon', { skip: noRuntimeCheck }, () => {
    const h = makeHome();
    const editor = join(h.top, 'editor.sh');
    writeFileSync(editor, `#!/bin/sh\nprintf '%s' '${UNKNOWN_MODE}' > "$1"\n`);
    chmodSync(editor, 0o755);
    const r = w(h, ['edit', ...sel(h), h.config], { input: 'a\n', env: { EDITOR: editor } });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /warden edit: refused: the runtime would not load the proposed content/);
    assert.ok(r.stderr.includes(CODEX_WORDS), r.stderr);
    assert.match(r.stderr, /\(e\)dit again, or \(a\)bandon\?/);
    assert.match(r.stderr, /abandoned/);
    assert.equal(readFileSync(h.config, 'utf8'), APPROVED);
  });
});
