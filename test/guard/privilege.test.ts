/** The guard process never loads network code (SPEC §11): checked at run time, not only statically. */
import { it, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, makeRoot, startDaemon, REPO, type TestRoot } from '../helpers/root.js';

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
  await d.stop();
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
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
