/**
 * A root's key and store are named by its real path: after a move, every command says so
 * and names the command that re-homes them (never a fresh key that silently authenticates
 * nothing); `warden rehome --from OLD` brings them over, embedded and in the deployment.
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { cli, makeRoot, startDaemon, type Daemon, type TestRoot } from '../helpers/root.js';

let t: TestRoot;
let d: Daemon | null = null;
afterEach(async () => { await d?.stop(); d = null; t?.cleanup(); });

function move(env: NodeJS.ProcessEnv = {}): { moved: TestRoot; old: string } {
  assert.equal(cli(t, ['init'], { env }).code, 0);
  const old = t.root;
  const to = join(t.base, 'moved-root');
  renameSync(old, to);
  return { moved: { ...t, root: to, p: (rel: string) => join(to, rel) }, old };
}

describe('a store from before the deployment layout', () => {
  it('a deployment that finds only ROOT/snapshots says where the store must go, and uses nothing', () => {
    t = makeRoot();
    assert.equal(cli(t, ['init']).code, 0);
    const state = join(t.base, 'lib', 'warden-guard');
    mkdirSync(state, { recursive: true, mode: 0o700 });
    const st = cli(t, ['status'], { env: { WARDEN_GUARD_STATE_DIR: state } });
    assert.equal(st.code, 2, st.stdout + st.stderr);
    assert.match(st.stderr, /store is still inside the root .*snapshots.*mv .*snapshots .*warden-guard\/stores\/[0-9a-f]{16}/);
    assert.ok(!existsSync(join(state, 'stores')), 'nothing created');
  });
});

describe('a moved root', () => {
  it('embedded: commands name the move and the fix; rehome brings the key over; the guard starts', async () => {
    t = makeRoot();
    const { moved, old } = move();
    for (const args of [['status'], ['verify'], ['run', '--guard']]) {
      const r = cli(moved, args);
      assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.ok(r.stderr.includes(`registered for ${old}`) && r.stderr.includes(`warden rehome --from ${old}`), r.stderr);
    }
    const rh = cli(moved, ['rehome', '--from', old]);
    assert.equal(rh.code, 0, rh.stderr);
    assert.equal(cli(moved, ['verify']).code, 0);
    d = await startDaemon(moved);
    assert.equal(cli(moved, ['status']).code, 0);
  });

  it('deployment: the state directory’s store follows too', async () => {
    t = makeRoot();
    const guardState = join(t.base, 'lib', 'warden-guard');
    mkdirSync(guardState, { recursive: true, mode: 0o700 });
    const env = { WARDEN_GUARD_STATE_DIR: guardState };
    const { moved, old } = move(env);
    const before = readdirSync(join(guardState, 'stores'));
    const st = cli(moved, ['status'], { env });
    assert.equal(st.code, 2, st.stdout + st.stderr);
    assert.ok(st.stderr.includes(`warden rehome --from ${old}`), st.stderr);
    assert.equal(cli(moved, ['rehome', '--from', old], { env }).code, 0);
    const after = readdirSync(join(guardState, 'stores'));
    assert.equal(after.length, 1);
    assert.notDeepEqual(after, before, 'the store now carries the new identity');
    assert.equal(cli(moved, ['verify'], { env }).code, 0);
    assert.ok(!existsSync(moved.p('snapshots')), 'still nothing inside the root');
    // A second rehome has nothing to move and says so.
    const again = cli(moved, ['rehome', '--from', old], { env });
    assert.equal(again.code, 2);
    assert.match(again.stderr, /no key for/);
  });
});
