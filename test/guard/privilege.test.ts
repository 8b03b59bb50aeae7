/** The guard process never loads network code (docs/CONTRACT.md §Deployment): checked at run time, not only statically. */
import { it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, makeRoot, readAlertsOf, startDaemon, waitFor, REPO, type TestRoot } from '../helpers/root.js';

const ORG = 'orgs/bookclub.toml';

const FORBIDDEN = /discord|node-notifier|undici|node:(net|http|https|tls|dgram)\b|\/notifier\//;
// The notifier's network-free modules (delivery state for `status`, the owner-code outbox).
const ALLOWED_NOTIFIER = /\/dist\/src\/notifier\/(delivery-state|jsonl|paths|outbox-messages)\.js$/;
const roots: TestRoot[] = [];
after(() => { for (const t of roots) t.cleanup(); });

async function loadedModules(args: string[]): Promise<string[]> {
  const t = makeRoot();
  roots.push(t);
  assert.equal(cli(t, ['init']).code, 0);
  const log = join(t.base, 'imports.log');
  const d = await startDaemon(t, args, {
    WARDEN_TEST_IMPORT_LOG: log,
    NODE_OPTIONS: `--import ${join(REPO, 'test', 'helpers', 'record-imports.mjs')}`,
  });
  // The recorder runs for the whole life of the process, so make that life do the lazy
  // work too: a sanctioned change over the control socket, then a tamper and its revert.
  const wanted = readFileSync(t.p(ORG), 'utf8').replace('hourly_cap = 20', 'hourly_cap = 12');
  assert.notEqual(wanted, readFileSync(t.p(ORG), 'utf8'));
  const r = cli(t, ['apply', ORG, '--from', '-'], { input: wanted });
  assert.equal(r.code, 0, r.stderr);
  writeFileSync(t.p(ORG), 'tampered = true\n');
  await waitFor(() => readFileSync(t.p(ORG), 'utf8') === wanted && readAlertsOf(t).some((a) => a.path === ORG), 20_000, 'the tamper reverted to the applied content');
  await d.stop();
  const mods = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  // Proof that this process applied the change (history is written by whoever applies, and
  // simple-git loads only then), so the lazy apply path was recorded too.
  assert.ok(mods.some((m) => /simple-git/.test(m)), 'the daemon applied the change (simple-git loaded)');
  return mods;
}

it('warden run --guard loads no network or desktop module', async () => {
  const mods = await loadedModules(['--guard']);
  assert.ok(mods.some((m) => m.includes('/dist/src/guard/guard.js')), 'the recorder saw the guard load');
  // node:net is used for the local control socket (AF_UNIX); it is not network code, but
  // nothing that speaks HTTP, TLS or Discord may be loaded.
  const bad = mods.filter((m) => FORBIDDEN.test(m) && !/^node:net$/.test(m) && !ALLOWED_NOTIFIER.test(m));
  assert.deepEqual(bad, []);
});

it('the recorder would catch it: plain warden run does load the notifier', async () => {
  const mods = await loadedModules([]);
  assert.ok(mods.some((m) => FORBIDDEN.test(m) && !/^node:net$/.test(m) && !ALLOWED_NOTIFIER.test(m)), 'negative control');
});
