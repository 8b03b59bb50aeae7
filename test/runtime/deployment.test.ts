/**
 * In the deployment the runtime runs as the agent's user, which owns the root: a manifest
 * that user could have written proves nothing. A real second user (created here) opens the
 * view: it trusts a manifest only the warden account (root here) can write, and refuses
 * one it owns, or one in a directory it can write.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, mkdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { cli, makeRoot, type TestRoot } from '../helpers/root.js';
import { cleanupAll } from '../helpers/children.js';
import { readableDistSrc } from '../helpers/readable-copy.js';

const USER = `wi15rt${process.pid % 100000}`;
let uid = -1;
let gid = -1;
let t: TestRoot;
const isRoot = process.getuid?.() === 0;

// The runtime: prints what its view says, then exits.
const RUNTIME = `
import(process.argv[1]).then(({ openApprovedView }) => {
  const v = openApprovedView(process.argv[2], { deployment: JSON.parse(process.argv[3]), recheckMs: 0 });
  const s = v.current();
  process.stdout.write(JSON.stringify({ ok: s.ok, reason: s.reason, generation: s.generation, path: v.manifestPath }));
  return v.close();
});
`;

let runtimeEntry = '';

function runAs(dep: { runtimeDir: string; stateDir: string }): { ok: boolean; reason: string | null; generation: number | null; path: string } {
  const r = spawnSync(process.execPath, ['-e', RUNTIME, runtimeEntry, t.root, JSON.stringify(dep)], { uid, gid, encoding: 'utf8', env: { PATH: process.env.PATH }, timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

describe('the deployment: the runtime trusts only a manifest it cannot write', { skip: !isRoot && 'needs root to create a user' }, () => {
  before(() => {
    const add = spawnSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', USER], { encoding: 'utf8' });
    assert.equal(add.status, 0, add.stderr);
    uid = Number(spawnSync('id', ['-u', USER], { encoding: 'utf8' }).stdout.trim());
    gid = Number(spawnSync('id', ['-g', USER], { encoding: 'utf8' }).stdout.trim());
    t = makeRoot();
    assert.equal(cli(t, ['init']).code, 0);
    // The runtime's user must be able to read the root (as the agent's user can).
    for (const d of [t.base, t.root]) chmodSync(d, 0o755);
    // The checkout may be private (0700): the runtime's user loads it from a readable copy.
    runtimeEntry = join(readableDistSrc(), 'runtime', 'index.js');
  });
  after(() => cleanupAll([
    () => { const r = spawnSync('userdel', [USER], { encoding: 'utf8' }); if (r.status !== 0 && !/does not exist/.test(r.stderr)) throw new Error(`userdel ${USER}: ${r.stderr}`); },
    () => t?.cleanup(),
  ]));

  it("adopts the deployment's manifest when only the warden account can write it", () => {
    const dep = { runtimeDir: join(t.base, 'run'), stateDir: join(t.base, 'state-dir') };
    mkdirSync(dep.runtimeDir, { mode: 0o755 });
    copyFileSync(t.p('snapshots/manifest.json'), join(dep.runtimeDir, 'manifest.json'));
    chmodSync(join(dep.runtimeDir, 'manifest.json'), 0o644);
    const s = runAs(dep);
    assert.deepEqual({ ok: s.ok, generation: s.generation, path: s.path }, { ok: true, generation: 1, path: join(dep.runtimeDir, 'manifest.json') }, s.reason ?? '');
  });

  it('refuses a manifest the runtime user owns', () => {
    const dep = { runtimeDir: join(t.base, 'run-owned'), stateDir: join(t.base, 'state-dir') };
    mkdirSync(dep.runtimeDir, { mode: 0o755 });
    const m = join(dep.runtimeDir, 'manifest.json');
    copyFileSync(t.p('snapshots/manifest.json'), m);
    chmodSync(m, 0o444);
    chownSync(m, uid, gid);
    const s = runAs(dep);
    assert.equal(s.ok, false);
    assert.match(s.reason ?? '', /could have been written by this process's user/);
  });

  it('refuses a manifest in a directory the runtime user can write', () => {
    const dep = { runtimeDir: join(t.base, 'run-open'), stateDir: join(t.base, 'state-dir') };
    mkdirSync(dep.runtimeDir);
    chmodSync(dep.runtimeDir, 0o777);
    copyFileSync(t.p('snapshots/manifest.json'), join(dep.runtimeDir, 'manifest.json'));
    chmodSync(join(dep.runtimeDir, 'manifest.json'), 0o644);
    const s = runAs(dep);
    assert.equal(s.ok, false);
    assert.match(s.reason ?? '', /could have been written by this process's user/);
  });

  it('never falls back to a manifest inside the root while the deployment is installed', () => {
    const dep = { runtimeDir: join(t.base, 'run-missing'), stateDir: join(t.base, 'state-dir') };
    mkdirSync(dep.stateDir, { recursive: true });
    // A good-looking manifest is in the root's store (snapshots/manifest.json), made readable.
    chmodSync(t.p('snapshots'), 0o755);
    const s = runAs(dep);
    assert.equal(s.ok, false);
    assert.match(s.reason ?? '', /no manifest at .*run-missing\/manifest\.json \(the deployment is installed/);
    unlinkSync(t.p('snapshots/manifest.json'));
  });
});
