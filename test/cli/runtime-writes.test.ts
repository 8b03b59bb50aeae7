/**
 * The runtime's own writes (docs/PROFILES.md, "The runtime's own writes"), through the real
 * CLI and daemon against real files in a temporary home: Codex refreshing the tokens in
 * `~/.codex/auth.json` is kept and noted (an info alert naming the keys, the tokens as
 * fingerprints only, the new version approved, history without the token text); a
 * `base_url` or an API key written into it is reverted and alerted like any direct edit;
 * Claude Code's "Yes, and don't ask again" adding to `permissions.allow` in
 * `~/.claude/settings.local.json` is reverted and becomes a pending request, shown with its
 * grant, that `warden approve ID` applies in one step.
 */
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, treeSnapshot, waitFor } from '../helpers/root.js';
import { killOwned } from '../helpers/children.js';
import { profileWorld, type ProfileHome } from '../helpers/profile-home.js';
import { ptyRun } from '../helpers/pty.js';
import type { Alert } from '../../src/store/alert-types.js';
import fc from 'fast-check';

/** The revert deadline of these tests: the guard's own is milliseconds; a loaded two-core machine gets slack. */
const DEADLINE_MS = 1000;

type Home = ProfileHome;
const world = profileWorld('runtime-writes');
const makeHome = (): Home => world.home();
const w = world.cli;
/** The guard, its stderr and stdout together in err() (what a failed wait shows). */
const guard = async (h: Home, sel: string[]) => { const g = await world.guard(h, sel); return { ...g, err: () => g.err() + g.out() }; };

function alertsOf(h: Home, sel: string[]): Alert[] {
  const r = w(h, ['alerts', ...sel, '--json']);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout) as { alerts?: Alert[] } | Alert[];
  return Array.isArray(doc) ? doc : doc.alerts ?? [];
}

/** What Codex writes: the whole file again (truncate and write), pretty-printed. */
const authJson = (t: string, extra: Record<string, unknown> = {}) => `${JSON.stringify({
  auth_mode: 'chatgpt', OPENAI_API_KEY: null,
  tokens: { id_token: `eyJ.id-${t}`, access_token: `eyJ.access-${t}`, refresh_token: `rt-${t}`, account_id: 'acct-1' },
  last_refresh: `2026-12-06T0${t.length % 10}:00:00Z`, ...extra,
}, null, 2)}\n`;
const writeAsShell = (file: string, text: string) => {
  const r = spawnSync('sh', ['-c', 'cat > "$1"', 'sh', file], { input: text });
  assert.equal(r.status, 0);
};
/** What Claude Code 2.1.332 writes: a temp file beside it (`.tmp.PID.HEX`, the mode kept), renamed over it. */
const writeAtomically = (file: string, text: string) => {
  const r = spawnSync('sh', ['-c', 'cat > "$1.tmp.$$.a1b2c3" && chmod --reference="$1" "$1.tmp.$$.a1b2c3" && mv "$1.tmp.$$.a1b2c3" "$1"', 'sh', file], { input: text });
  assert.equal(r.status, 0);
};

afterEach(async () => {
  await world.stopGuards();
  await killOwned();
});
after(() => world.removeHomes());

function codexHome(): { h: Home; sel: string[]; auth: string; store: string } {
  const h = makeHome();
  const codex = join(h.home, '.codex');
  mkdirSync(codex, { recursive: true });
  writeFileSync(join(codex, 'config.toml'), 'model = "gpt-5"\nsandbox_mode = "workspace-write"\n');
  writeFileSync(join(codex, 'auth.json'), authJson('login-secret'), { mode: 0o600 });
  const sel = ['--profile', 'codex', '--home', h.home];
  const init = w(h, ['init', ...sel, '--json']);
  assert.equal(init.code, 0, init.stderr);
  const doc = JSON.parse(init.stdout) as { files: string[]; left: { path: string }[]; store: string };
  assert.deepEqual(doc.files, ['auth.json', 'config.toml'], 'auth.json is guarded now');
  assert.deepEqual(doc.left, []);
  return { h, sel, auth: join(codex, 'auth.json'), store: doc.store };
}

describe("the runtime's own writes through the real CLI and daemon", () => {
  it('codex: a token refresh in auth.json is kept, approved and noted (tokens as fingerprints only, none in history)', async () => {
    const { h, sel, auth, store } = codexHome();
    const g = await guard(h, sel);
    const refreshed = authJson('refreshed-secret-2');
    const t0 = Date.now();
    writeAsShell(auth, refreshed);
    const note = await waitFor(() => alertsOf(h, sel).find((a) => a.path === 'auth.json'), 10_000, 'the note');
    console.log(`# the token refresh noted (alerts --json shows it) ${Date.now() - t0} ms after the write`);
    assert.equal(note.action, 'noted');
    assert.equal(note.reason, 'runtime-write');
    assert.equal(note.quarantine, null);
    assert.match(note.detail ?? '', /Codex changed .*tokens\.access_token.* by itself/);
    const keys = (note.grants ?? []).map((g) => g.key).sort();
    assert.deepEqual(keys, ['last_refresh', 'tokens.access_token', 'tokens.id_token', 'tokens.refresh_token']);
    assert.ok((note.grants ?? []).filter((g) => g.key.startsWith('tokens.')).every((g) => g.credential === 'codex-auth' && /^[0-9a-f]{12}$/.test(String(g.new))), JSON.stringify(note.grants));
    // Still the runtime's bytes a while later (never reverted), and the approved version now.
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(readFileSync(auth, 'utf8'), refreshed);
    const v = w(h, ['verify', ...sel]);
    assert.equal(v.code, 0, v.stdout + v.stderr);
    // Nothing printed or kept outside the 0600 blob names a token: alerts, journal, history.
    const all = JSON.stringify(alertsOf(h, sel)) + w(h, ['alerts', ...sel]).stdout;
    assert.ok(!all.includes('refreshed-secret') && !all.includes('login-secret'), 'alerts carry fingerprints only');
    await waitFor(() => { const r = spawnSync('git', ['-C', join(store, 'history'), 'log', '--oneline'], { encoding: 'utf8' }); return r.stdout.includes('runtime-write: auth.json'); }, 20_000, `the history commit (${g.err()})`);
    const hist = spawnSync('git', ['-C', join(store, 'history'), 'log', '-p', '--all'], { encoding: 'utf8' }).stdout;
    assert.ok(hist.includes('fingerprint:'), 'history keeps auth.json fingerprinted');
    assert.ok(!hist.includes('refreshed-secret') && !hist.includes('login-secret'), 'no token text in history');
    const blobs = treeSnapshot(join(store, 'blobs')) as unknown as Record<string, { mode?: number }>;
    assert.ok(Object.values(blobs).length > 0);
  });

  it('codex: a base_url or an API key written into auth.json is reverted and alerted like any direct edit', async () => {
    const { h, sel, auth } = codexHome();
    await guard(h, sel);
    for (const [i, extra] of [{ base_url: 'https://evil.example/v1' }, { OPENAI_API_KEY: 'sk-agent-key' }].entries()) {
      const t0 = Date.now();
      writeAsShell(auth, authJson(`refresh-${i}`, extra));
      await waitFor(() => readFileSync(auth, 'utf8') === authJson('login-secret'), 10_000, 'auth.json reverted', 5);
      const took = Date.now() - t0;
      console.log(`# auth.json with ${Object.keys(extra).join(', ')} reverted ${took} ms after the write`);
      assert.ok(took <= DEADLINE_MS, `reverted in ${took} ms, over the deadline of ${DEADLINE_MS} ms`);
    }
    const alerts = await waitFor(() => { const a = alertsOf(h, sel).filter((x) => x.path === 'auth.json'); return a.length >= 2 ? a : undefined; }, 10_000, 'both alerts');
    assert.ok(alerts.every((a) => a.action === 'reverted' && a.quarantine), JSON.stringify(alerts.map((a) => [a.action, a.reason])));
    assert.ok(alerts.some((a) => /not the runtime's own write: base_url is not a key the runtime may write/.test(a.detail ?? '')), JSON.stringify(alerts.map((a) => a.detail)));
    assert.ok(alerts.some((a) => /OPENAI_API_KEY is not a key the runtime may write/.test(a.detail ?? '')), JSON.stringify(alerts.map((a) => a.detail)));
    assert.ok(!JSON.stringify(alerts).includes('sk-agent-key'), 'the API key only as a fingerprint');
    // `warden diff` shows the rejected version as history keeps it: keys, credential values as fingerprints.
    for (const a of alerts) {
      const d = w(h, ['diff', ...sel, a.id]);
      assert.equal(d.code, 0, d.stderr);
      assert.ok(!/login-secret|refresh-[01]|sk-agent-key/.test(d.stdout), d.stdout);
      assert.match(d.stdout, /fingerprint/);
    }
    assert.match(w(h, ['diff', ...sel, alerts.find((a) => /base_url/.test(a.detail ?? ''))!.id]).stdout, /base_url/);
    assert.ok(!alertsOf(h, sel).some((a) => a.action === 'noted'));
  });

  it('property, through the daemon: a change touching a key outside the rule is reverted (with or without a token refresh beside it)', async () => {
    const { h, sel, auth } = codexHome();
    await guard(h, sel);
    const approved = authJson('login-secret');
    const plain = fc.oneof(fc.string({ maxLength: 12 }), fc.integer(), fc.boolean(), fc.constant(null));
    const cases = fc.sample(fc.record({
      where: fc.constantFrom('top', 'tokens'),
      key: fc.string({ minLength: 1, maxLength: 10 }).filter((k) => !['tokens', 'last_refresh', 'id_token', 'access_token', 'refresh_token', '__proto__'].includes(k)),
      value: fc.oneof(plain, fc.array(plain, { maxLength: 2 }), fc.dictionary(fc.string({ maxLength: 4 }), plain, { maxKeys: 2 })),
      refresh: fc.boolean(),
    }), { numRuns: 20, seed: 41 });
    let n = 0;
    for (const c of cases) {
      const doc = JSON.parse(c.refresh ? authJson(`p${n}`) : approved) as Record<string, Record<string, unknown>>;
      const into = c.where === 'top' ? doc as Record<string, unknown> : doc.tokens!;
      if (JSON.stringify(into[c.key]) === JSON.stringify(c.value)) continue;
      into[c.key] = c.value;
      writeAtomically(auth, `${JSON.stringify(doc, null, 2)}\n`);
      await waitFor(() => readFileSync(auth, 'utf8') === approved, 10_000, `reverted: ${JSON.stringify(c)}`, 5);
      n++;
    }
    assert.ok(n >= 15, `${n} cases run`);
    const mine = await waitFor(() => { const a = alertsOf(h, sel).filter((x) => x.path === 'auth.json' || x.count); return a.reduce((k, x) => k + (x.count ?? 1), 0) >= n ? a : undefined; }, 10_000, 'every alert');
    assert.ok(mine.every((a) => a.action === 'reverted'), JSON.stringify(mine.map((a) => [a.action, a.detail])));
  });

  it('codex: written while no guard ran, a token refresh is kept and an API key reverted at the guard\'s start', async () => {
    const { h, sel, auth } = codexHome();
    const refreshed = authJson('while-stopped');
    writeFileSync(auth, refreshed);
    await guard(h, sel);
    const note = await waitFor(() => alertsOf(h, sel).find((a) => a.path === 'auth.json'), 10_000, 'the note');
    assert.deepEqual([note.action, note.reason], ['noted', 'runtime-write']);
    assert.equal(readFileSync(auth, 'utf8'), refreshed);
    await world.stopGuards();
    writeFileSync(auth, authJson('while-stopped', { OPENAI_API_KEY: 'sk-agent-key' }));
    await guard(h, sel);
    await waitFor(() => readFileSync(auth, 'utf8') === refreshed, 10_000, 'auth.json reverted at start', 5);
    const al = await waitFor(() => alertsOf(h, sel).find((a) => a.path === 'auth.json' && a.action === 'reverted'), 10_000, 'the alert');
    assert.equal(al.reason, 'changed-while-stopped');
  });

  it("claude-code: \"don't ask again\" adding to permissions.allow in settings.local.json is reverted, filed as a request, and 'warden approve ID' applies it", async () => {
    const h = makeHome();
    const claude = join(h.home, '.claude');
    mkdirSync(claude, { recursive: true });
    const approved = '{\n  "permissions": {\n    "allow": ["Read"]\n  }\n}\n';
    const asked = '{\n  "permissions": {\n    "allow": ["Read", "Bash(npm test:*)"]\n  }\n}\n';
    writeFileSync(join(claude, 'settings.json'), '{}\n');
    writeFileSync(join(claude, 'settings.local.json'), approved);
    const sel = ['--profile', 'claude-code', '--home', h.home];
    assert.equal(w(h, ['init', ...sel]).code, 0);
    const g = await guard(h, sel);
    const local = join(claude, 'settings.local.json');
    const t0 = Date.now();
    writeAtomically(local, asked);
    await waitFor(() => readFileSync(local, 'utf8') === approved, 10_000, 'settings.local.json reverted', 5);
    assert.ok(Date.now() - t0 <= DEADLINE_MS, `reverted in ${Date.now() - t0} ms`);
    const al = await waitFor(() => alertsOf(h, sel).find((a) => a.path === 'settings.local.json'), 10_000, 'the alert');
    assert.equal(al.action, 'reverted');
    assert.match(al.detail ?? '', /on the user's behalf .*pending request/);
    assert.ok((al.grants ?? []).some((x) => x.key === 'permissions.allow' && x.new === 'Bash(npm test:*)'), JSON.stringify(al.grants));
    // The request: listed with its grant, bound to the approved version.
    const listed = await waitFor(() => {
      const r = w(h, ['approve', ...sel, '--json']);
      const list = JSON.parse(r.stdout || '[]') as { id: string; paths: string[]; grants?: { key: string; new?: unknown }[] }[];
      return list.find((p) => p.paths.includes('settings.local.json'));
    }, 10_000, `the pending request (${g.err()})`);
    assert.ok(listed.grants?.some((x) => x.key === 'permissions.allow' && x.new === 'Bash(npm test:*)'), JSON.stringify(listed));
    // One step: the owner's yes on a terminal, the grant shown in the prompt.
    const r = ptyRun([['\\[y/N\\]', 'y\r']], [process.execPath, CLI, 'approve', listed.id, ...sel], { env: h.env, cwd: '/' });
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /permissions\.allow \+ "Bash\(npm test:\*\)"/);
    assert.equal(readFileSync(local, 'utf8'), asked, 'the file has the entry');
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(readFileSync(local, 'utf8'), asked, 'and keeps it');
    const v = w(h, ['verify', ...sel]);
    assert.equal(v.code, 0, v.stdout + v.stderr);
  });
});
