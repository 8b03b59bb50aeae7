/**
 * The owner's mistakes, answered plainly (docs/CHANGES.md; README "Commands"): a
 * `warden.toml` candidate with one unknown key is one error with the right summary, and
 * a mistyped command, subcommand, option or key gets a "did you mean".
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, makeInitRoot, makeRoot, type TestRoot } from '../helpers/root.js';

const roots: TestRoot[] = [];
after(() => { for (const t of roots) t.cleanup(); });
const root = (): TestRoot => { const t = makeInitRoot(); roots.push(t); return t; };
const count = (s: string, re: RegExp): number => (s.match(new RegExp(re.source, 'g')) ?? []).length;

describe('check --from on warden.toml', () => {
  it('one unknown key: one error, counted once, and a summary that says what an invalid warden.toml means', () => {
    const t = root();
    const bad = join(t.base, 'wbad.toml');
    writeFileSync(bad, `${readFileSync(t.p('config/warden.toml'), 'utf8')}\nbogus_key = 1\n`);
    const r = cli(t, ['check', '--from', bad, 'config/warden.toml']);
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(count(r.stdout, /unknown key "bogus_key"/), 1, r.stdout);
    assert.match(r.stdout, /^1 error: config\/warden\.toml is refused as a whole until it is fixed/m);
    assert.doesNotMatch(r.stdout, /no owner/, 'the owner is there; the file is invalid');
    assert.doesNotMatch(r.stdout, /2 errors/);
  });
});

describe('did you mean', () => {
  it('a mistyped command, subcommand and option', () => {
    const t = root();
    const c = cli(t, ['stauts']);
    assert.equal(c.code, 2);
    assert.match(c.stderr, /unknown command "stauts"; did you mean "status"\?/);
    assert.match(cli(t, ['notify', 'tset']).stderr, /unknown subcommand "notify tset"; did you mean "notify test"\?/);
    assert.match(cli(t, ['status', '--jsno']).stderr, /unknown option --jsno \(did you mean --json\?\)/);
    assert.doesNotMatch(cli(t, ['frobnicate']).stderr, /did you mean/, 'nothing close: no guess');
  });

  it('a mistyped key in warden.toml, at the top level and in a table', () => {
    const t = root();
    const bad = join(t.base, 'w.toml');
    writeFileSync(bad, readFileSync(t.p('config/warden.toml'), 'utf8').replace(/^rescan_seconds/m, 'rescan_secnods'));
    const r = cli(t, ['check', '--from', bad, 'config/warden.toml']);
    assert.match(r.stdout, /unknown key "rescan_secnods"; did you mean "rescan_seconds"\?/);
    writeFileSync(bad, `${readFileSync(t.p('config/warden.toml'), 'utf8')}\n[notify.discord]\ntoken_file = "/x"\napii = "http://127.0.0.1:1/api"\n`);
    assert.match(cli(t, ['check', '--from', bad, 'config/warden.toml']).stdout, /unknown key "apii"; did you mean "api"\?/);
  });
});

describe('binary content is summarised, never printed', () => {
  it('diff of a rejected binary, and the proposal accept shows: sizes, hashes, "binary", as git does', async () => {
    const { makeRoot, startDaemon, readAlertsOf, waitFor, TEST_WARDEN_TOML } = await import('../helpers/root.js');
    const t = makeRoot({ wardenToml: `${TEST_WARDEN_TOML}\n[[protect]]\npath = "config/tool.bin"\nkind = "text"\n` });
    roots.push(t);
    writeFileSync(t.p('config/tool.bin'), 'approved text\n');
    assert.equal(cli(t, ['init']).code, 0);
    const d = await startDaemon(t);
    try {
      const elf = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(20_000, 0x90), Buffer.from('\n\x1b[31mred\n')]);
      writeFileSync(t.p('config/tool.bin'), elf);
      await waitFor(() => readAlertsOf(t).some((a) => a.path === 'config/tool.bin' && a.quarantine), 10_000, 'the revert of the binary');
      const r = cli(t, ['diff']);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /binary content differs \(not shown\): approved 14 bytes, sha256 [0-9a-f]{12} → rejected 20,018 bytes, sha256 [0-9a-f]{12}, binary/);
      assert.ok(r.stdout.length < 2000, `a short summary, not the bytes (${r.stdout.length} chars)`);
      assert.doesNotMatch(r.stdout, /\\x7fELF|\\x90/);
    } finally { await d.stop(); }
    const id = readAlertsOf(t).find((a) => a.path === 'config/tool.bin')!.id;
    const acc = cli(t, ['accept', id, '--json']);
    assert.ok(!/\\x90\\x90/.test(acc.stdout + acc.stderr), 'accept shows no escaped bytes');
  });
});

describe('the deployment\'s init step', () => {
  it('prints no error-priority line when the guard\'s runtime directory does not exist yet (the guard publishes the manifest at its start)', { skip: existsSync('/run/warden-guard') ? '/run/warden-guard exists on this machine' : false }, () => {
    const t = makeRoot();
    roots.push(t);
    const state = join(t.base, 'state-dir');
    mkdirSync(state, { mode: 0o700 });
    const r = cli(t, ['init', '--if-needed'], { env: { STATE_DIRECTORY: state } });
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /^<[0-3]>/m, r.stderr);
    assert.doesNotMatch(r.stderr, /could not publish the runtime manifest/);
  });
});

describe('every setting is documented', () => {
  it('each key warden.toml takes is in the README\'s reference table', async () => {
    const { wardenConfigSchema } = await import('../../src/config/warden-config.js');
    const { REPO } = await import('../helpers/root.js');
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    const table = readme.slice(readme.indexOf('Every key, its default and what it does:'));
    type D = { type?: string; innerType?: unknown; in?: unknown; shape?: Record<string, unknown>; element?: unknown; valueType?: unknown };
    const def = (s: unknown): D => ((s as { _zod: { def: D } })._zod.def);
    const unwrap = (s: unknown): unknown => { let x = s; for (;;) { const d = def(x); if (d.innerType) x = d.innerType; else if (d.type === 'pipe') x = d.in; else return x; } };
    const keys: string[] = [];
    const walk = (s: unknown, path: string[]): void => {
      const d = def(unwrap(s));
      if (d.type === 'object' && d.shape) for (const [k, v] of Object.entries(d.shape)) walk(v, [...path, k]);
      else if (d.type === 'array' && def(unwrap(d.element)).type === 'object') walk(d.element, path);
      else if (d.type === 'record') walk(d.valueType, [...path, 'NAME']);
      else keys.push(path.join('.'));
    };
    walk(wardenConfigSchema, []);
    assert.ok(keys.includes('notify.discord.api'), keys.join(' '));
    for (const k of keys) {
      const leaf = k.split('.').pop()!;
      assert.match(table, new RegExp(`\`[^\`]*\\b${leaf}\\b[^\`]*\``), `README's table lacks ${k}`);
    }
  });
});
