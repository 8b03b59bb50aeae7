/**
 * No environment variable of the shipped daemon can blind a detection layer (docs/
 * ARCHITECTURE.md, "Test seams"). The watch layers' test seams used to be environment
 * variables read by the daemon itself: whoever set the service's environment
 * (WARDEN_TEST_DIR_WATCH_BLIND=orgs) made a new org file wait for the backstop rescan
 * (30 s) instead of being removed at once. Now they are set only in-process
 * (src/guard/test-seams.ts, test/helpers/seamed-main.ts).
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, REPO, cli, testWorld, waitFor } from '../helpers/root.js';
import { own } from '../helpers/children.js';

const world = testWorld();
afterEach(async () => { await world.cleanup(); });

const SEAMS = { WARDEN_TEST_DIR_WATCH_BLIND: 'orgs', WARDEN_TEST_INODE_WATCH_BLIND: 'orgs/bookclub.toml', WARDEN_TEST_STORE_WATCH_BLIND: '1' };

describe('the watch layers\' test seams are out of production\'s reach', () => {
  it('the shipped daemon, started with the seams\' variables set, still sees a new org file at once', async () => {
    const t = world.root();
    assert.equal(cli(t, ['init']).code, 0);
    // The shipped CLI itself (not startDaemon, which would run the seamed one for these variables).
    const proc = own(spawn(process.execPath, [CLI, 'run', '--guard', '--root', t.root], { env: { ...t.env, ...SEAMS }, stdio: ['ignore', 'pipe', 'pipe'] }), 'warden run --guard (shipped, seam variables set)');
    let out = '';
    proc.stdout!.on('data', (d) => { out += String(d); });
    await waitFor(() => out.includes('ready\n') || proc.exitCode !== null, 20_000, 'ready');
    assert.ok(out.includes('ready\n'), 'the daemon started');
    writeFileSync(t.p('orgs/new.toml'), 'name = "new"\n');
    // rescan_seconds is 30: only the orgs directory's watch removes it within 3 s.
    await waitFor(() => !existsSync(t.p('orgs/new.toml')), 3_000, 'the new file removed by its directory\'s watch');
  });

  it('no file under src/ reads a watch seam from the environment', () => {
    const hits: string[] = [];
    const walk = (dir: string): void => {
      for (const e of readdirSync(dir, { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.ts') && /WARDEN_TEST_(DIR|INODE|STORE)_WATCH_BLIND/.test(readFileSync(p, 'utf8'))) hits.push(p.slice(REPO.length + 1));
      }
    };
    walk(join(REPO, 'src'));
    assert.deepEqual(hits, []);
  });
});
