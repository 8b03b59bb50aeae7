/**
 * A protected directory's ACLs (access and default) and `user.*` attributes are part of its
 * approved state (docs/ARCHITECTURE.md, "What a protected file's approved state is"), as the
 * agent would attack them (deployment A emulated: the agent owns the root and orgs/):
 * `setfacl -m u:nobody:rwx orgs` gives another user access to the directory with the mode
 * bits unchanged, `setfacl -d -m u:nobody:rw orgs` makes every file made there later
 * readable by it. Both are put back and alerted as `acl`. An ACL the directory had at init
 * is approved. A baseline recorded before directories' attributes were (no `xattrs` in its
 * directory entries) still loads, and claims nothing about them: no alert.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, openSync, closeSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentWorld, type AgentWorld } from '../helpers/agent-world.js';
import { readAlertsFile, waitFor } from '../helpers/root.js';
import type { Alert } from '../../src/store/alert-types.js';
import { ACL_DEFAULT, readXattrsAt } from '../../src/fsx/xattrs.js';
import { lookDirs } from '../../src/guard/dir-repair.js';
import { inspectDirs } from '../../src/guard/inspect.js';
import { parseBody, serializeBody, type BaselineIndex } from '../../src/store/baseline.js';
import type { BaselineState } from '../../src/store/baseline-state.js';

/** Whether ACLs work where the tests make their roots (tmpfs before 6.6, some overlays: not). */
function aclsHere(): string | false {
  if (process.getuid?.() !== 0) return 'needs root (a second user)';
  const d = mkdtempSync(join(tmpdir(), 'warden-dacl-probe-'));
  try {
    const b = spawnSync('setfacl', ['-d', '-m', 'u:nobody:r', d]);
    if (b.status !== 0) return `default ACLs are not supported in ${tmpdir()} (or setfacl is missing)`;
    return false;
  } finally { rmSync(d, { recursive: true, force: true }); }
}
const SKIP = aclsHere();

const worlds: AgentWorld[] = [];
after(async () => { for (const w of worlds) await w.cleanup(); });
const alertsOf = (w: AgentWorld): Alert[] => readAlertsFile(join(w.store, 'alerts.jsonl'));
const asAgent = (w: AgentWorld, cmd: string[]) => {
  const r = spawnSync('setpriv', [`--reuid=${w.uid}`, `--regid=${w.gid}`, '--clear-groups', ...cmd], { encoding: 'utf8', timeout: 10_000 });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
};
const none = (p: string): true | null => (Object.keys(readXattrsAt(p, { dir: true }) ?? { x: 1 }).length === 0 ? true : null);

describe('a protected directory\'s ACLs are approved state', { skip: SKIP }, () => {
  it('setfacl -m and setfacl -d on orgs/ and on the root are put back and alerted as acl; the mode stays', async () => {
    const w = agentWorld();
    worlds.push(w);
    await w.guard();
    const orgs = w.t.p('orgs');
    const mode = lstatSync(orgs).mode & 0o7777;
    let r = asAgent(w, ['setfacl', '-m', 'u:nobody:rwx', orgs]);
    assert.equal(r.code, 0, r.out);
    const acl = await waitFor(() => alertsOf(w).find((a) => a.path === 'orgs' && a.reason === 'acl'), 5000, 'an acl alert of orgs');
    assert.equal(acl.action, 'reverted');
    await waitFor(() => none(orgs), 5000, 'the access ACL gone');
    assert.equal(lstatSync(orgs).mode & 0o7777, mode, 'the mode is the approved one');

    r = asAgent(w, ['setfacl', '-d', '-m', 'u:nobody:rw', orgs]);
    assert.equal(r.code, 0, r.out);
    await waitFor(() => alertsOf(w).filter((a) => a.path === 'orgs' && a.reason === 'acl').length >= 2 ? true : null, 5000, 'a second acl alert of orgs');
    await waitFor(() => none(orgs), 5000, 'the default ACL gone');
    assert.equal(lstatSync(orgs).mode & 0o7777, mode, 'the mode is the approved one');
    await new Promise((res) => setTimeout(res, 500));
    assert.deepEqual(alertsOf(w).filter((a) => a.path === 'orgs').map((a) => a.reason), ['acl', 'acl'], 'no loop of reverts');

    // The root itself (held by descriptor): the same.
    const rootMode = lstatSync(w.t.root).mode & 0o7777;
    r = asAgent(w, ['setfacl', '-m', 'u:nobody:rwx', '-d', '-m', 'u:nobody:rw', w.t.root]);
    assert.equal(r.code, 0, r.out);
    await waitFor(() => alertsOf(w).find((a) => a.path === '.' && a.reason === 'acl'), 5000, 'an acl alert of the root');
    await waitFor(() => none(w.t.root), 5000, 'the root\'s ACLs gone');
    assert.equal(lstatSync(w.t.root).mode & 0o7777, rootMode, 'the root\'s mode is the approved one');
    const v = w.cli(['verify']);
    assert.equal(v.code, 0, v.stdout + v.stderr);
  });

  it('an ACL a directory had at init is approved, put back when removed, and verify names its change', async () => {
    const w = agentWorld({ init: false });
    worlds.push(w);
    const blocks = w.t.p('blocks');
    assert.equal(spawnSync('setfacl', ['-d', '-m', 'u:nobody:r', blocks]).status, 0);
    const want = readXattrsAt(blocks, { dir: true });
    assert.ok(want && want[ACL_DEFAULT], 'the default ACL is read');
    const init = w.cli(['init', '--json']);
    assert.equal(init.code, 0, init.stderr);
    w.store = (JSON.parse(init.stdout) as { store: string }).store;
    const v0 = w.cli(['verify']);
    assert.equal(v0.code, 0, v0.stdout + v0.stderr);
    assert.equal(asAgent(w, ['setfacl', '-k', blocks]).code, 0);
    const v = w.cli(['verify']);
    assert.notEqual(v.code, 0, 'verify finds the removed ACL');
    assert.match(v.stdout + v.stderr, /blocks/);
    await w.guard();
    await waitFor(() => (JSON.stringify(readXattrsAt(blocks, { dir: true })) === JSON.stringify(want) ? true : null), 5000, 'the approved ACL put back');
    await waitFor(() => alertsOf(w).find((a) => a.path === 'blocks' && a.reason === 'changed-while-stopped' && a.also?.includes('acl')), 5000, 'the alert');
  });
});

describe('a baseline recorded before directories\' attributes were', { skip: SKIP }, () => {
  it('loads, and a directory ACL it never recorded raises nothing (lookDirs, inspectDirs)', () => {
    const base = mkdtempSync(join(tmpdir(), 'warden-dacl-old-'));
    try {
      mkdirSync(join(base, 'orgs'), { mode: 0o755 });
      writeFileSync(join(base, 'orgs', 'a.toml'), 'a = 1\n');
      assert.equal(spawnSync('setfacl', ['-m', 'u:nobody:rwx', '-d', '-m', 'u:nobody:rw', join(base, 'orgs')]).status, 0);
      const st = lstatSync(join(base, 'orgs'));
      const rt = lstatSync(base);
      // The directories as an index of before recorded them: mode and owner only.
      const old: BaselineIndex = {
        version: 1, generation: 1, updated: new Date(0).toISOString(), files: {},
        dirs: { '': { mode: rt.mode & 0o7777, uid: rt.uid, gid: rt.gid }, orgs: { mode: st.mode & 0o7777, uid: st.uid, gid: st.gid } },
      };
      const index = parseBody(serializeBody(old));
      assert.equal(index.dirs.orgs?.xattrs, undefined, 'none recorded');
      const state = { index } as unknown as BaselineState;
      const fd = openSync(base, 'r');
      try {
        assert.deepEqual(lookDirs(fd, state, new Map()), [], 'the guard finds nothing to put right');
        assert.deepEqual(inspectDirs(fd, state), [], 'verify finds nothing');
        // Recorded as none (a baseline of now): the same ACLs are a finding.
        const now = { index: { ...index, dirs: { ...index.dirs, orgs: { ...index.dirs.orgs!, xattrs: {} } } } } as unknown as BaselineState;
        assert.deepEqual(lookDirs(fd, now, new Map()).map((f) => [f.path, f.reason]), [['orgs', 'acl']]);
        assert.deepEqual(inspectDirs(fd, now).map((f) => [f.path, f.verdict.reason]), [['orgs', 'acl']]);
      } finally { closeSync(fd); }
    } finally { rmSync(base, { recursive: true, force: true }); }
  });
});
