/**
 * Startup loads only what guarding needs: the sanctioned-change, approval and
 * policy modules and simple-git load when a change arrives, not at start, and not for
 * `warden verify`. Recorded with the same import recorder as test/guard/privilege.test.ts.
 */
import { it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { existsSync } from 'node:fs';
import { cli, makeRoot, readAlertsOf, startDaemon, REPO, type TestRoot } from '../helpers/root.js';
import { discordPair, makeTwoFileRoot, run } from '../changes/helpers.js';

const LAZY = /\/dist\/src\/(changes\/(apply|approvals|validate|diff|init)|policy\/)[^/]*\.js$|simple-git/;
/**
 * What a guard's start leaves unloaded beyond LAZY (~15 MB of RSS): zod and every
 * schema module, the control protocol (loaded with the first request), chokidar (polling only).
 */
const GUARD_LAZY = new RegExp(`${LAZY.source}|/node_modules/zod/|/node_modules/chokidar/|/dist/src/(config/warden-config|toml/schema|daemon/protocol|changes/protocol)\\.js$`);
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
    assert.deepEqual(atStart.filter((m) => GUARD_LAZY.test(m)), [], 'nothing of the change machinery, zod or chokidar at start');
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

it('a start that recovers an interrupted transaction loads journal.ts, not the approval, validation and policy modules', { timeout: 120_000 }, async () => {
  const t = makeTwoFileRoot();
  roots.push(t);
  assert.equal(cli(t, ['init']).code, 0);
  // A rotation under the lock, killed by the crash seam after its baseline commit: a journal to recover.
  const v = discordPair('7777');
  const r = await run(t, ['cred', 'rotate', 'discord'], { input: `${v.token}\n${v.application_id}\n`, env: { WARDEN_TEST_CRASH_AT: 'baseline' } });
  assert.notEqual(r.code, 0, 'the seam killed the command');
  assert.ok(existsSync(t.p('snapshots/journal/intent')), 'a journal is left to recover');
  const log = join(t.base, 'recover-imports.log');
  const d = await startDaemon(t, ['--guard'], recorder(log));
  try {
    const atStart = loaded(log);
    assert.ok(atStart.some((m) => /\/dist\/src\/changes\/journal\.js$/.test(m)), 'recovery ran through journal.ts');
    assert.ok(!existsSync(t.p('snapshots/journal/intent')), 'the journal was recovered');
    assert.ok(readAlertsOf(t).some((a) => a.reason === 'half-applied'), 'the interruption is reported');
    assert.deepEqual(atStart.filter((m) => GUARD_LAZY.test(m) && !/simple-git/.test(m)), [], 'no approval, validation, policy or zod module for a recovery');
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
