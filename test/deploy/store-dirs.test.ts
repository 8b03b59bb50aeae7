/**
 * The notifier unit hides snapshots/{secrets,journal,quarantine,pending,control}
 * with InaccessiblePaths=, which only works for directories that exist when it starts. So
 * they exist from `warden init` on and are recreated at every guard start. And a guard on
 * a root that was never initialised says so and exits 78 (the unit does not restart it).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { CLI, cli, makeRoot, startDaemon } from '../helpers/root.js';

const DIRS = ['secrets', 'quarantine', 'pending', 'journal', 'control', 'outbox'];

function assertDirs(root: string, when: string): void {
  for (const d of DIRS) {
    const p = `${root}/snapshots/${d}`;
    assert.ok(existsSync(p), `${when}: snapshots/${d} exists`);
    assert.ok(statSync(p).isDirectory());
    assert.equal(statSync(p).mode & 0o777, 0o700, `${when}: snapshots/${d} is 0700`);
  }
}

test('init creates every store directory the notifier must not see; the guard recreates them at start', async () => {
  const t = makeRoot();
  try {
    const r = cli(t, ['init']);
    assert.equal(r.code, 0, r.stderr);
    assertDirs(t.root, 'after init');
    for (const d of ['quarantine', 'pending', 'journal', 'outbox']) rmSync(t.p(`snapshots/${d}`), { recursive: true });
    const d = await startDaemon(t, ['--guard']);
    try { assertDirs(t.root, 'after the guard started'); } finally { await d.stop(); }
  } finally { t.cleanup(); }
});

test('a guard on a root that was never initialised says so and exits 78, without a baseline or a key', () => {
  const t = makeRoot();
  try {
    const r = spawnSync(process.execPath, [CLI, 'run', '--guard', '--root', t.root], { env: t.env, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 78, r.stderr);
    assert.match(r.stderr, /not initialised: run `warden init` to record the approved baseline of /);
    assert.doesNotMatch(r.stderr, /no baseline key|init --force/, 'not the misleading "key was lost" message');
    assert.ok(!existsSync(t.p('snapshots/baseline/index')));
    // --init-if-needed (npm start) still initialises by itself
    const ok = cli(t, ['init']);
    assert.equal(ok.code, 0, ok.stderr);
  } finally { t.cleanup(); }
});
