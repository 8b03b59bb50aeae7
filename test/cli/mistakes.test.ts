/**
 * The owner's mistakes, answered plainly (docs/CHANGES.md; README "Commands"): a
 * `warden.toml` candidate with one unknown key is one error with the right summary, and
 * a mistyped command, subcommand, option or key gets a "did you mean".
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, makeInitRoot, type TestRoot } from '../helpers/root.js';

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
