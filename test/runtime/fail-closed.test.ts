/**
 * The view fails closed (grants nothing, no credentials, says why) when it has no
 * trustworthy manifest or no complete approved state, and recovers by itself.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, renameSync, rmdirSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { canRead, openApprovedView, type ApprovedView } from '../../src/runtime/index.js';
import { cli, sha, testWorld, waitFor, type TestRoot } from '../helpers/root.js';
import { GUEST, GUEST_CTX, MEMBER, MEMBER_CTX, noDeployment } from './helpers.js';

const world = testWorld();
const views: ApprovedView[] = [];
after(async () => { for (const v of views) await v.close(); await world.cleanup(); });
const initRoot = (): TestRoot => world.root({ init: true });
const manifestOf = (t: TestRoot) => t.p('snapshots/manifest.json');
function open(t: TestRoot, opts: Parameters<typeof openApprovedView>[1] = {}): ApprovedView {
  const v = openApprovedView(t.root, { deployment: noDeployment(t), ...opts });
  views.push(v);
  return v;
}
/** Replace a file atomically, as warden does, so the view never sees it half-written by the test itself. */
function putAtomically(path: string, bytes: Buffer | string): void {
  let mode = 0o644;
  try { mode = statSync(path).mode & 0o7777; } catch { /* new file */ }
  writeFileSync(`${path}.test-tmp`, bytes);
  chmodSync(`${path}.test-tmp`, mode); // keep the approved mode: only the content differs
  renameSync(`${path}.test-tmp`, path);
}

function assertClosed(v: ApprovedView, why: RegExp): void {
  const s = v.current();
  assert.equal(s.ok, false, 'failed closed');
  assert.match(s.reason ?? '', why);
  assert.equal(s.generation, null);
  assert.deepEqual(s.credentials, {}, 'no credentials');
  assert.deepEqual(s.files, {});
  assert.equal(canRead(s.policy, MEMBER, MEMBER_CTX, '/workspace/bookclub/a.md'), false, 'a member can read nothing');
  assert.equal(canRead(s.policy, GUEST, GUEST_CTX, '/workspace/public/a.md'), false, 'a guest can read nothing');
  assert.equal(s.policy.owner, null, 'nobody is the owner');
}

describe('the approved view fails closed', () => {
  it('with no manifest, and recovers by itself when it appears', { timeout: 30_000 }, async () => {
    const t = initRoot();
    const good = readFileSync(manifestOf(t));
    unlinkSync(manifestOf(t));
    const v = open(t);
    await v.ready();
    assertClosed(v, /no manifest at .*snapshots\/manifest\.json/);
    putAtomically(manifestOf(t), good);
    await waitFor(() => v.current().ok, 10_000, 'the view to recover');
    const s = v.current();
    assert.equal(s.generation, 1);
    assert.equal(s.credentials.discord?.application_id, '111111111111111111');
    assert.equal(canRead(s.policy, MEMBER, MEMBER_CTX, '/workspace/bookclub/a.md'), true);
    assert.equal(canRead(s.policy, GUEST, GUEST_CTX, '/workspace/public/a.md'), true);
  });

  it("with another root's manifest", { timeout: 30_000 }, async () => {
    const a = initRoot();
    const b = initRoot();
    putAtomically(manifestOf(a), readFileSync(manifestOf(b)));
    const v = open(a);
    assertClosed(v, /manifest of another root/);
    // Same path, another directory (the root was replaced): refused too.
    const m = JSON.parse(readFileSync(manifestOf(b), 'utf8'));
    putAtomically(manifestOf(a), JSON.stringify({ ...m, root: { ...m.root, path: a.root } }));
    await waitFor(() => /another directory/.test(v.current().reason ?? ''), 10_000, 'the view to refuse the other inode');
    assertClosed(v, /another directory/);
  });

  it('with a truncated or malformed manifest, and recovers when a good one is put in place', { timeout: 30_000 }, async () => {
    const t = initRoot();
    const good = readFileSync(manifestOf(t));
    putAtomically(manifestOf(t), good.subarray(0, Math.floor(good.length / 2)));
    const v = open(t);
    assertClosed(v, /malformed: not valid JSON/);
    putAtomically(manifestOf(t), good.toString().replace(/"sha256": "[0-9a-f]{64}"/, '"sha256": "not-a-hash"'));
    await waitFor(() => /is not \{kind, sha256, size, mode\}/.test(v.current().reason ?? ''), 10_000, 'the view to refuse a bad entry');
    putAtomically(manifestOf(t), good);
    await waitFor(() => v.current().ok, 10_000, 'the view to recover');
    assert.equal(v.current().generation, 1);
  });

  it('when a file matches an older generation only; a view that held the new one keeps it', { timeout: 60_000 }, async () => {
    const t = initRoot();
    const old = readFileSync(t.p('orgs/bookclub.toml'), 'utf8');
    const next = old.replace(/^folders = \[/m, 'folders = ["/workspace/gen2/", ');
    // No daemon: the command applies under the lock, and publishes generation 2 itself.
    const r = cli(t, ['apply', 'orgs/bookclub.toml', '--from', '-'], { input: next });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(readFileSync(manifestOf(t), 'utf8')).generation, 2, 'the command published generation 2');
    const held = open(t);
    assert.equal(held.current().generation, 2);
    // Put generation 1's content back by hand (no daemon runs to revert it).
    putAtomically(t.p('orgs/bookclub.toml'), old);
    const fresh = open(t);
    assertClosed(fresh, /waiting for the files to match the approved manifest \(generation 2\): orgs\/bookclub\.toml does not hold the approved content/);
    // The view that already held generation 2 keeps it (the direct edit is never seen).
    await new Promise((res) => setTimeout(res, 300));
    assert.equal(held.current().generation, 2);
    assert.equal(canRead(held.current().policy, MEMBER, MEMBER_CTX, '/workspace/gen2/a.md'), true);
    // When the approved bytes are back, the fresh view adopts them.
    putAtomically(t.p('orgs/bookclub.toml'), next);
    await waitFor(() => fresh.current().ok, 10_000, 'the fresh view to adopt generation 2');
    assert.equal(fresh.current().generation, 2);
  });

  it('when the manifest is deleted or made unreadable after adoption, and recovers when it is back', { timeout: 60_000 }, async () => {
    const t = initRoot();
    const good = readFileSync(manifestOf(t));
    const v = open(t);
    await v.ready();
    assert.equal(v.current().generation, 1, 'adopted generation 1 first');
    // Deleted: the view does not keep serving its last state (docs/RUNTIME.md: it fails closed until a good one is back).
    unlinkSync(manifestOf(t));
    await waitFor(() => !v.current().ok, 10_000, 'the view to fail closed once the manifest is gone');
    assertClosed(v, /no manifest at .*snapshots\/manifest\.json/);
    putAtomically(manifestOf(t), good);
    await waitFor(() => v.current().ok, 10_000, 'the view to recover');
    assert.equal(v.current().generation, 1);
    // Unreadable as a manifest: a directory in its place (root reads through any mode bits).
    unlinkSync(manifestOf(t));
    mkdirSync(manifestOf(t));
    await waitFor(() => !v.current().ok, 10_000, 'the view to fail closed on a manifest it cannot read');
    assertClosed(v, /is not a regular file/);
    rmdirSync(manifestOf(t));
    putAtomically(manifestOf(t), good);
    await waitFor(() => v.current().ok, 10_000, 'the view to recover again');
  });

  it('when a direct edit keeps the size (hourly_cap = 20 -> 25, as in the README tour): never served as approved', { timeout: 30_000 }, async () => {
    const t = initRoot();
    const path = t.p('orgs/bookclub.toml');
    const old = readFileSync(path, 'utf8');
    const edited = old.replace('hourly_cap = 20', 'hourly_cap = 25');
    assert.notEqual(edited, old);
    assert.equal(Buffer.byteLength(edited), Buffer.byteLength(old), 'the edit keeps the size');
    putAtomically(path, edited);
    const v = open(t);
    assertClosed(v, /waiting for the files to match the approved manifest \(generation 1\): orgs\/bookclub\.toml does not hold the approved content/);
    // The approved bytes back: adopted, and the state is built from them, not from the edit.
    putAtomically(path, old);
    await waitFor(() => v.current().ok, 10_000, 'the view to adopt once the approved bytes are back');
    assert.equal(v.current().files['orgs/bookclub.toml'], sha(old));
  });

  it('with a manifest that is a symlink or a FIFO (never followed, never blocked on)', { timeout: 30_000 }, async () => {
    const t = initRoot();
    const good = readFileSync(manifestOf(t));
    writeFileSync(join(t.base, 'elsewhere.json'), good);
    unlinkSync(manifestOf(t));
    symlinkSync(join(t.base, 'elsewhere.json'), manifestOf(t));
    const v = open(t);
    assertClosed(v, /is a symlink, not the manifest/);
    unlinkSync(manifestOf(t));
    execFileSync('mkfifo', [manifestOf(t)]);
    await waitFor(() => /is not a regular file/.test(v.current().reason ?? ''), 10_000, 'the view to refuse the FIFO');
    assertClosed(v, /is not a regular file/);
    unlinkSync(manifestOf(t));
    putAtomically(manifestOf(t), good);
    await waitFor(() => v.current().ok, 10_000, 'the view to recover');
  });

  it('when a file has the approved bytes but not the approved mode', { timeout: 30_000 }, async () => {
    const t = initRoot();
    const mode = statSync(t.p('config/guests.toml')).mode & 0o777;
    chmodSync(t.p('config/guests.toml'), 0o666);
    const v = open(t);
    assertClosed(v, /config\/guests\.toml has mode 666, not the approved/);
    chmodSync(t.p('config/guests.toml'), mode);
    await waitFor(() => v.current().ok, 10_000, 'the view to adopt once the mode is back');
  });

  it('in the deployment, a manifest planted inside the root never wins', { timeout: 30_000 }, async () => {
    const t = initRoot();
    // The deployment is installed (its state directory exists), but its manifest is not there:
    // the good-looking one in snapshots/ (agent-writable in the deployment) must not be used.
    const dep = { runtimeDir: join(t.base, 'run-warden-guard'), stateDir: join(t.base, 'var-lib-warden-guard') };
    mkdirSync(dep.stateDir);
    const v = open(t, { deployment: dep });
    assertClosed(v, new RegExp(`no manifest at ${dep.runtimeDir}/manifest\\.json \\(the deployment is installed`));
    // The guard publishes into its RuntimeDirectory: the view moves to it.
    mkdirSync(dep.runtimeDir);
    copyFileSync(manifestOf(t), join(dep.runtimeDir, 'manifest.json'));
    await waitFor(() => v.current().ok, 10_000, "the view to adopt the deployment's manifest");
    assert.equal(v.manifestPath, join(dep.runtimeDir, 'manifest.json'));
  });
});
