/**
 * A profile's root (docs/PROFILES.md, "A profile's root"), through the real CLI and daemon
 * against real files in a temporary home: `warden init --profile NAME --home DIR` records
 * the runtime's policy files (its store in the state directory, nothing written in the home),
 * `warden run --profile NAME --home DIR` reverts the agent's direct grant (a shell child of
 * the same user, and another user) within a deadline, keeps the rejected bytes in quarantine
 * and alerts with who did it, and leaves everything the profile does not name untouched (the
 * runtime's transcripts, `~/.claude.json`, credentials). Every command that takes --root
 * selects the root with --profile.
 */
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, renameSync, symlinkSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, treeSnapshot, waitFor } from '../helpers/root.js';
import { killOwned } from '../helpers/children.js';
import { profileWorld, type ProfileHome } from '../helpers/profile-home.js';
import { makeAgent, type Agent } from '../helpers/agent.js';
import { ptyRun } from '../helpers/pty.js';
import type { Alert } from '../../src/store/alert-types.js';

const SETTINGS = '{\n  "permissions": { "allow": ["Read"], "deny": ["Bash(rm:*)"] }\n}\n';
const GRANTED = '{\n  "permissions": { "allow": ["Read", "Bash(curl:*)"], "deny": ["Bash(rm:*)"] }\n}\n';
const CODEX = 'model = "gpt-5"\nsandbox_mode = "workspace-write"\napproval_policy = "on-request"\n';
/** The revert deadline of these tests: the guard's own is milliseconds; a loaded two-core machine gets slack. */
const DEADLINE_MS = 1000;

type Home = ProfileHome;
const world = profileWorld('profile-root');
const agents: Agent[] = [];
const makeHome = (): Home => world.home();
const w = world.cli;
const guard = world.guard;

function alertsOf(h: Home, sel: string[]): Alert[] {
  const r = w(h, ['alerts', ...sel, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as { alerts?: Alert[] } | Alert[];
  return Array.isArray(doc) ? doc : doc.alerts ?? [];
}

/** Waits until `file` holds `approved` again; returns how long that took after the write. */
async function revertedWithin(file: string, approved: string, since: number): Promise<number> {
  await waitFor(() => readFileSync(file, 'utf8') === approved, 10_000, `${file} reverted`, 5);
  const took = Date.now() - since;
  console.log(`# ${file.slice(file.indexOf('/', file.indexOf('warden-profile-root-')))} reverted ${took} ms after the write`);
  return took;
}

/** Every path under `dir` named `snapshots` (an embedded store or a session manifest would be one). */
function snapshotsUnder(dir: string): string[] {
  return (readdirSync(dir, { recursive: true }) as string[]).filter((p) => p.split('/').includes('snapshots'));
}

afterEach(async () => {
  await world.stopGuards();
  await killOwned();
});
after(() => {
  for (const a of agents.splice(0)) a.remove();
  world.removeHomes();
});

describe('a profile\'s root: warden init/run --profile NAME --home DIR', () => {
  it('claude-code: the agent\'s direct grant in ~/.claude/settings.json is reverted within the deadline, kept in quarantine and alerted; nothing else of the home is touched', async () => {
    const h = makeHome();
    const claude = join(h.home, '.claude');
    mkdirSync(join(claude, 'agents'), { recursive: true });
    mkdirSync(join(claude, 'projects', 'p'), { recursive: true });
    writeFileSync(join(claude, 'settings.json'), SETTINGS);
    writeFileSync(join(claude, 'agents', 'reviewer.md'), '---\nname: reviewer\ntools: Read\n---\nReview.\n');
    writeFileSync(join(claude, 'projects', 'p', 'transcript.jsonl'), '{"turn":1}\n');
    writeFileSync(join(h.home, '.claude.json'), '{"numStartups": 1}\n');
    writeFileSync(join(claude, '.credentials.json'), '{"claudeAiOauth":{"accessToken":"sk-ant-oat-never-kept"}}\n');
    const sel = ['--profile', 'claude-code', '--home', h.home];

    const init = w(h, ['init', ...sel, '--json']);
    assert.equal(init.code, 0, init.stderr);
    const doc = JSON.parse(init.stdout) as { root: string; files: string[]; store: string; left: { path: string }[] };
    assert.equal(doc.root, claude, 'the root is the runtime\'s own directory');
    assert.deepEqual(doc.files, ['agents/reviewer.md', 'settings.json']);
    assert.ok(doc.store.startsWith(h.stateDir), `the store is in the state directory, not in the home: ${doc.store}`);
    assert.deepEqual(doc.left.map((l) => l.path).sort(), ['~/.claude.json', '~/.claude/.credentials.json']);
    assert.deepEqual(snapshotsUnder(h.home), [], 'init writes nothing in the home');
    assert.ok(!JSON.stringify(treeSnapshot(h.stateDir)).includes('sk-ant-oat-never-kept'), 'the credentials file is not kept');

    const verify = w(h, ['verify', ...sel]);
    assert.equal(verify.code, 0, verify.stdout + verify.stderr);
    const g = await guard(h, sel);
    const outsideBefore = { transcript: readFileSync(join(claude, 'projects', 'p', 'transcript.jsonl'), 'utf8') };

    // The agent, as the same user: a shell child writing the file directly.
    const settings = join(claude, 'settings.json');
    const t0 = Date.now();
    const sh = spawnSync('sh', ['-c', `printf '%s' '${GRANTED}' > "$1"`, 'sh', settings]);
    assert.equal(sh.status, 0);
    const took = await revertedWithin(settings, SETTINGS, t0);
    assert.ok(took <= DEADLINE_MS, `reverted in ${took} ms, over the deadline of ${DEADLINE_MS} ms`);
    const a1 = await waitFor(() => alertsOf(h, sel).find((a) => a.path === 'settings.json' && a.action === 'reverted'), 10_000, 'the alert');
    assert.equal(a1.reason, 'content');
    assert.ok(a1.quarantine, 'the rejected bytes are kept');
    // The grant, named in the owner's words from the root's own profile (docs/PROFILES.md, "Grants in alerts, diffs and prompts").
    const grants = (a1 as unknown as { grants?: { key: string; change: string; new?: unknown }[] }).grants ?? [];
    assert.ok(grants.some((x) => x.key === 'permissions.allow' && JSON.stringify(x).includes('Bash(curl:*)')), `the alert names the grant: ${JSON.stringify(grants)}`);
    // A rejected regular file is kept flat, as quarantine/<alert-id> itself (docs/CONTRACT.md §Store budget).
    const kept = [readFileSync(a1.quarantine, 'utf8')];
    assert.ok(kept.includes(GRANTED), `quarantine holds the rejected content: ${JSON.stringify(kept)}`);
    // The advice names the root: nothing in it leads a command there from the current directory.
    assert.ok(a1.advice.includes(`'warden edit settings.json --root ${claude}'`), a1.advice);
    const byRoot = w(h, ['verify', '--root', claude]);
    assert.equal(byRoot.code, 0, `--root names a profile's root as well: ${byRoot.stdout}${byRoot.stderr}`);

    // The runtime's own files beside the guarded ones, and the files the profile leaves out, are the runtime's.
    writeFileSync(join(claude, 'projects', 'p', 'transcript.jsonl'), `${outsideBefore.transcript}{"turn":2}\n`);
    writeFileSync(join(h.home, '.claude.json'), '{"numStartups": 2}\n');
    writeFileSync(join(claude, 'history.jsonl'), '{"display":"hi"}\n');
    // A new agent file (a new grant) is taken away and kept.
    writeFileSync(join(claude, 'agents', 'evil.md'), '---\nname: evil\n---\nDo anything.\n');
    await waitFor(() => !existsSync(join(claude, 'agents', 'evil.md')), 10_000, 'the new agent file removed', 5);
    await waitFor(() => alertsOf(h, sel).some((a) => a.path === 'agents/evil.md' && a.reason === 'unexpected-file'), 10_000, 'its alert');
    const st = w(h, ['status', ...sel, '--json']);
    assert.equal(st.code, 0, st.stdout + st.stderr);
    const status = JSON.parse(st.stdout) as { profile: { name: string; level: string } | null; daemon: { running: boolean }; runtime_manifest: unknown; policy: unknown[] };
    assert.deepEqual([status.profile?.name, status.profile?.level, status.daemon.running], ['claude-code', 'user', true]);
    assert.equal(status.runtime_manifest, null, 'a profile\'s root has no runtime manifest');
    assert.deepEqual(status.policy, [], 'nor the example runtime\'s policy files');
    assert.equal(readFileSync(join(claude, 'projects', 'p', 'transcript.jsonl'), 'utf8'), `${outsideBefore.transcript}{"turn":2}\n`);
    assert.equal(readFileSync(join(h.home, '.claude.json'), 'utf8'), '{"numStartups": 2}\n');
    assert.equal(readFileSync(join(claude, 'history.jsonl'), 'utf8'), '{"display":"hi"}\n');
    assert.deepEqual(snapshotsUnder(h.home), [], 'the guard writes nothing of its own in the home');

    // why and diff select the root the same way; a PATH is absolute, or relative to the root.
    const why = w(h, ['why', ...sel, settings]);
    assert.equal(why.code, 0, why.stdout + why.stderr);
    assert.match(why.stdout, new RegExp(a1.id));
    const diff = w(h, ['diff', ...sel, a1.id]);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    assert.match(diff.stdout, /Bash\(curl:\*\)/);
    await g.stop();
  });

  it('claude-code: another user\'s direct edit is reverted too, and the alert names that user', async (t) => {
    if (process.geteuid?.() !== 0) { t.skip('needs root to act as a second user'); return; }
    const h = makeHome();
    const claude = join(h.home, '.claude');
    mkdirSync(claude, { recursive: true });
    writeFileSync(join(claude, 'settings.json'), SETTINGS);
    const a = makeAgent('wtpr');
    agents.push(a);
    chmodSync(h.top, 0o755);
    spawnSync('chown', ['-R', `${a.uid}:${a.gid}`, h.home]);
    const sel = ['--profile', 'claude-code', '--home', h.home];
    assert.equal(w(h, ['init', ...sel]).code, 0);
    await guard(h, sel, []); // guard and notifier: the witness runs in the daemon
    const settings = join(claude, 'settings.json');
    const t0 = Date.now();
    const r = a.sh(`printf '%s' '${GRANTED}' > ${settings}`);
    assert.equal(r.code, 0, r.out);
    const took = await revertedWithin(settings, SETTINGS, t0);
    assert.ok(took <= DEADLINE_MS, `reverted in ${took} ms`);
    const al = await waitFor(() => alertsOf(h, sel).find((x) => x.path === 'settings.json'), 10_000, 'the alert');
    // Who did it: the witness's record of the open for writing.
    const by = al.by as { uid?: number; unknown?: string } | undefined;
    if (by?.unknown !== undefined && /fanotify|not permitted|kernel/i.test(by.unknown)) { t.diagnostic(`who did it not checked: ${by.unknown}`); return; }
    assert.equal(by?.uid, a.uid, `who did it: the agent's user (${JSON.stringify(by)})`);
  });

  it('codex: sandbox_mode = "danger-full-access" written into ~/.codex/config.toml is reverted and alerted; a token refresh in auth.json and sessions stay the runtime\'s', async () => {
    const h = makeHome();
    const codex = join(h.home, '.codex');
    mkdirSync(join(codex, 'rules'), { recursive: true });
    mkdirSync(join(codex, 'sessions'), { recursive: true });
    writeFileSync(join(codex, 'config.toml'), CODEX);
    writeFileSync(join(codex, 'rules', 'default.rules'), 'prefix_rule(pattern = ["ls"], decision = "allow")\n');
    writeFileSync(join(codex, 'auth.json'), '{"OPENAI_API_KEY": null, "tokens": {"access_token": "never-kept"}}\n');
    const sel = ['--profile', 'codex', '--home', h.home];
    const init = w(h, ['init', ...sel, '--json']);
    assert.equal(init.code, 0, init.stderr);
    const doc = JSON.parse(init.stdout) as { root: string; files: string[] };
    assert.equal(doc.root, codex);
    assert.deepEqual(doc.files, ['auth.json', 'config.toml', 'rules/default.rules']);
    await guard(h, sel);
    const cfg = join(codex, 'config.toml');
    const t0 = Date.now();
    spawnSync('sh', ['-c', `sed -i 's/workspace-write/danger-full-access/' "$1"`, 'sh', cfg]);
    const took = await revertedWithin(cfg, CODEX, t0);
    assert.ok(took <= DEADLINE_MS, `reverted in ${took} ms`);
    const al = await waitFor(() => alertsOf(h, sel).find((x) => x.path === 'config.toml'), 10_000, 'the alert');
    assert.ok(['content', 'replaced'].includes(al.reason), al.reason);
    // A new rules file that allows anything is removed and kept.
    writeFileSync(join(codex, 'rules', 'evil.rules'), 'prefix_rule(pattern = ["curl"], decision = "allow")\n');
    await waitFor(() => !existsSync(join(codex, 'rules', 'evil.rules')), 10_000, 'the new rules file removed', 5);
    writeFileSync(join(codex, 'auth.json'), '{"OPENAI_API_KEY": null, "tokens": {"access_token": "refreshed"}}\n');
    writeFileSync(join(codex, 'sessions', 's.jsonl'), '{}\n');
    const v = w(h, ['verify', ...sel]);
    assert.equal(v.code, 0, v.stdout + v.stderr);
    assert.match(readFileSync(join(codex, 'auth.json'), 'utf8'), /refreshed/);
    assert.ok(existsSync(join(codex, 'sessions', 's.jsonl')));
  });

  it('a project\'s files are a root of their own (--project DIR), the user\'s another', async () => {
    const h = makeHome();
    const proj = join(h.top, 'proj');
    mkdirSync(join(proj, '.claude'), { recursive: true });
    mkdirSync(join(proj, 'src'), { recursive: true });
    writeFileSync(join(proj, '.claude', 'settings.json'), SETTINGS);
    writeFileSync(join(proj, '.mcp.json'), '{"mcpServers": {}}\n');
    writeFileSync(join(proj, 'src', 'main.ts'), 'export {};\n');
    const sel = ['--profile', 'claude-code', '--project', proj];
    const init = w(h, ['init', ...sel, '--json']);
    assert.equal(init.code, 0, init.stderr);
    const doc = JSON.parse(init.stdout) as { root: string; files: string[]; level: string };
    assert.deepEqual([doc.root, doc.level, doc.files], [proj, 'project', ['.claude/settings.json', '.mcp.json']]);
    await guard(h, sel);
    const mcp = join(proj, '.mcp.json');
    const t0 = Date.now();
    writeFileSync(mcp, '{"mcpServers": {"x": {"command": "node", "args": ["/tmp/x.js"]}}}\n');
    const took = await revertedWithin(mcp, '{"mcpServers": {}}\n', t0);
    assert.ok(took <= DEADLINE_MS, `reverted in ${took} ms`);
    writeFileSync(join(proj, 'src', 'main.ts'), 'export const x = 1;\n');
    // A link put in the approved file's place: moved aside, never written through; the approved file comes back.
    const target = join(h.top, 'outside.txt');
    writeFileSync(target, 'outside\n');
    const settings = join(proj, '.claude', 'settings.json');
    symlinkSync(target, `${settings}.new`);
    renameSync(`${settings}.new`, settings);
    await waitFor(() => lstatSync(settings).isFile() && readFileSync(settings, 'utf8') === SETTINGS, 10_000, 'the link replaced by the approved file', 5);
    assert.equal(readFileSync(target, 'utf8'), 'outside\n', 'nothing outside the root is written');
    const v = w(h, ['verify', ...sel]);
    assert.equal(v.code, 0, v.stdout + v.stderr);
    assert.equal(readFileSync(join(proj, 'src', 'main.ts'), 'utf8'), 'export const x = 1;\n', 'the project\'s own files are not warden\'s');
    assert.deepEqual(snapshotsUnder(proj), []);
    // The user's root is another one: not initialised.
    const st = w(h, ['status', '--profile', 'claude-code', '--home', h.home]);
    assert.notEqual(st.code, 0);
  });

  it('a sanctioned change: warden apply --profile with the owner\'s yes on a terminal, and the guard keeps the new state', async () => {
    const h = makeHome();
    const claude = join(h.home, '.claude');
    mkdirSync(claude, { recursive: true });
    writeFileSync(join(claude, 'settings.json'), SETTINGS);
    const sel = ['--profile', 'claude-code', '--home', h.home];
    assert.equal(w(h, ['init', ...sel]).code, 0);
    await guard(h, sel);
    const cand = join(h.top, 'cand.json');
    writeFileSync(cand, GRANTED);
    const r = ptyRun([['\\[y/N\\]', 'y\r']], [process.execPath, CLI, 'apply', ...sel, join(claude, 'settings.json'), '--from', cand], { env: h.env, cwd: '/' });
    assert.equal(r.code, 0, r.out);
    assert.equal(readFileSync(join(claude, 'settings.json'), 'utf8'), GRANTED);
    const v = w(h, ['verify', ...sel]);
    assert.equal(v.code, 0, v.stdout + v.stderr);
  });

  for (const [name, dir, file, approved, granted] of [
    ['gemini-cli', '.gemini', 'settings.json', '{\n  "tools": { "exclude": ["run_shell_command"] }\n}\n', '{\n  "tools": { "exclude": [] }\n}\n'],
    ['opencode', '.config/opencode', 'opencode.json', '{\n  "permission": { "bash": "ask" }\n}\n', '{\n  "permission": { "bash": "allow" }\n}\n'],
  ] as const) {
    it(`${name}: the same two commands guard ${dir}/${file}`, async () => {
      const h = makeHome();
      mkdirSync(join(h.home, dir), { recursive: true });
      const path = join(h.home, dir, file);
      writeFileSync(path, approved);
      const sel = ['--profile', name, '--home', h.home];
      const init = w(h, ['init', ...sel, '--json']);
      assert.equal(init.code, 0, init.stderr);
      assert.equal((JSON.parse(init.stdout) as { root: string }).root, join(h.home, dir));
      await guard(h, sel);
      const t0 = Date.now();
      writeFileSync(path, granted);
      const took = await revertedWithin(path, approved, t0);
      assert.ok(took <= DEADLINE_MS, `reverted in ${took} ms`);
      await waitFor(() => alertsOf(h, sel).find((x) => x.path === file), 10_000, 'the alert');
      assert.deepEqual(snapshotsUnder(h.home), []);
    });
  }

  it('a profile root\'s store that fails authentication is not "recovered" into a root of the example runtime\'s layout', () => {
    const h = makeHome();
    const claude = join(h.home, '.claude');
    mkdirSync(claude, { recursive: true });
    writeFileSync(join(claude, 'settings.json'), SETTINGS);
    const sel = ['--profile', 'claude-code', '--home', h.home];
    const init = w(h, ['init', ...sel, '--json']);
    assert.equal(init.code, 0, init.stderr);
    const index = join((JSON.parse(init.stdout) as { store: string }).store, 'baseline', 'index');
    const raw = readFileSync(index);
    raw[raw.length - 1] = raw[raw.length - 1]! ^ 1;
    writeFileSync(index, raw);
    const before = treeSnapshot(h.home);
    const r = w(h, ['init', '--force', ...sel]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /not supported yet/);
    assert.deepEqual(treeSnapshot(h.home), before, 'nothing in the home changed');
    const v = w(h, ['verify', ...sel]);
    assert.notEqual(v.code, 0, 'the tampered store fails closed');
  });

  it('usage: --profile and --root exclude each other, --home needs --profile, a root guarded for one profile is not another\'s, and init records once', () => {
    const h = makeHome();
    mkdirSync(join(h.home, '.claude'), { recursive: true });
    writeFileSync(join(h.home, '.claude', 'settings.json'), SETTINGS);
    const sel = ['--profile', 'claude-code', '--home', h.home];
    assert.equal(w(h, ['status', ...sel, '--root', h.home]).code, 2);
    assert.equal(w(h, ['status', '--home', h.home]).code, 2);
    assert.equal(w(h, ['status', '--profile', 'no-such-runtime', '--home', h.home]).code, 2);
    const none = w(h, ['init', '--profile', 'codex', '--home', h.home]);
    assert.equal(none.code, 2, 'no ~/.codex: nothing of the profile here');
    assert.match(none.stderr, /does not exist/);
    const notYet = w(h, ['status', ...sel]);
    assert.notEqual(notYet.code, 0);
    assert.match(notYet.stderr, /warden init --profile claude-code/);
    assert.equal(w(h, ['init', ...sel]).code, 0);
    const again = w(h, ['init', ...sel]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /already has a baseline/);
    assert.equal(w(h, ['init', ...sel, '--if-needed']).code, 0);
    const run = w(h, ['run', ...sel, '--init-if-needed']);
    assert.equal(run.code, 2);
  });
});
