/**
 * Startup loads only what guarding needs (issue 17): the sanctioned-change, approval and
 * policy modules and simple-git load when a change arrives, not at start, and not for
 * `warden verify`. Recorded with the same import recorder as test/guard/privilege.test.ts.
 */
import { it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, makeRoot, startDaemon, REPO, type TestRoot } from '../helpers/root.js';

const LAZY = /\/dist\/src\/(changes\/(apply|approvals|validate|diff|init)|policy\/)[^/]*\.js$|simple-git/;
const roots: TestRoot[] = [];
after(() => { for (const t of roots) t.cleanup(); });

const recorder = (log: string) => ({ WARDEN_TEST_IMPORT_LOG: log, NODE_OPTIONS: `--import ${join(REPO, 'test', 'helpers', 'record-imports.mjs')}` });
const loaded = (log: string) => readFileSync(log, 'utf8').split('\n').filter(Boolean);

it('the guard starts without the change, approval and policy modules; they load when a change arrives', async () => {
  const t = makeRoot();
  roots.push(t);
  assert.equal(cli(t, ['init']).code, 0);
  const log = join(t.base, 'imports.log');
  const d = await startDaemon(t, ['--guard'], recorder(log));
  try {
    const atStart = loaded(log);
    assert.ok(atStart.some((m) => m.includes('/dist/src/guard/guard.js')), 'the recorder saw the guard load');
    assert.deepEqual(atStart.filter((m) => LAZY.test(m)), [], 'nothing of the change machinery at start');
    // A change arrives: now they load (and the change is applied).
    const org = 'orgs/bookclub.toml';
    const wanted = readFileSync(t.p(org), 'utf8').replace('hourly_cap = 20', 'hourly_cap = 13');
    const r = cli(t, ['apply', org, '--from', '-'], { input: wanted });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(t.p(org), 'utf8'), wanted);
    assert.ok(loaded(log).some((m) => /\/dist\/src\/changes\/approvals\.js$/.test(m)), 'the change modules loaded for the change');
  } finally {
    await d.stop();
  }
});

it('warden verify loads neither the change machinery nor the policy modules', () => {
  const t = makeRoot();
  roots.push(t);
  assert.equal(cli(t, ['init']).code, 0);
  const log = join(t.base, 'verify-imports.log');
  const r = cli(t, ['verify'], { env: recorder(log) });
  assert.equal(r.code, 0, r.stderr);
  const mods = loaded(log);
  assert.ok(mods.some((m) => m.includes('/dist/src/guard/inspect.js')));
  assert.deepEqual(mods.filter((m) => LAZY.test(m)), []);
});
