/**
 * A protected file's ACL and extended attributes are part of its approved state
 * (docs/ARCHITECTURE.md), as the agent would attack them (deployment A emulated: the agent
 * owns the root and its files): `setfacl -m u:nobody:r` (mode bits unchanged) and
 * `setfattr -n user.x` are put back to the approved set and alerted, naming acl or xattr; an
 * attribute approved at init is put back after it is removed and survives a content revert;
 * a restore into a directory with a default ACL does not inherit it.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentWorld, type AgentWorld } from '../helpers/agent-world.js';
import { fileSha, readAlertsFile, waitFor } from '../helpers/root.js';
import type { Alert } from '../../src/store/alert-types.js';
import { readXattrsAt } from '../../src/fsx/xattrs.js';

const ORG = 'orgs/bookclub.toml';
const GUESTS = 'config/guests.toml';

/** Whether user xattrs and ACLs work where the tests make their roots (tmpfs before 6.6, some overlays: not). */
function attrsHere(): string | false {
  if (process.getuid?.() !== 0) return 'needs root (a second user)';
  const d = mkdtempSync(join(tmpdir(), 'warden-xattr-probe-'));
  try {
    const f = join(d, 'f');
    writeFileSync(f, 'x');
    const a = spawnSync('setfattr', ['-n', 'user.probe', '-v', '1', f]);
    const b = spawnSync('setfacl', ['-m', 'u:nobody:r', f]);
    if (a.status !== 0 || b.status !== 0) return `user xattrs or ACLs are not supported in ${tmpdir()} (or setfattr/setfacl missing)`;
    return false;
  } finally { rmSync(d, { recursive: true, force: true }); }
}
const SKIP = attrsHere();

const worlds: AgentWorld[] = [];
after(async () => { for (const w of worlds) await w.cleanup(); });
const alertsOf = (w: AgentWorld): Alert[] => readAlertsFile(join(w.store, 'alerts.jsonl'));
const attrsOf = (p: string) => readXattrsAt(p);
const asAgent = (w: AgentWorld, cmd: string[]) => {
  const r = spawnSync('setpriv', [`--reuid=${w.uid}`, `--regid=${w.gid}`, '--clear-groups', ...cmd], { encoding: 'utf8', timeout: 10_000 });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
};

describe('ACLs and extended attributes are approved state', { skip: SKIP }, () => {
  it('setfacl (mode bits unchanged) and setfattr on protected files are reverted and alerted as acl and xattr', async () => {
    const w = agentWorld();
    worlds.push(w);
    await w.guard();
    const mode = lstatSync(w.t.p(ORG)).mode & 0o7777;
    const sha = fileSha(w.t.p(ORG));
    let r = asAgent(w, ['setfacl', '-m', 'u:nobody:r', w.t.p(ORG)]);
    assert.equal(r.code, 0, r.out);
    const acl = await waitFor(() => alertsOf(w).find((a) => a.path === ORG && a.reason === 'acl'), 5000, 'an acl alert');
    assert.equal(acl.action, 'reverted');
    await waitFor(() => (Object.keys(attrsOf(w.t.p(ORG)) ?? { x: 1 }).length === 0 ? true : null), 5000, 'the ACL gone');
    assert.equal(lstatSync(w.t.p(ORG)).mode & 0o7777, mode, 'the mode is the approved one');
    assert.equal(fileSha(w.t.p(ORG)), sha, 'the content is the approved one');
    assert.equal(lstatSync(w.t.p(ORG)).uid, w.uid, 'the owner is the approved one');

    r = asAgent(w, ['setfattr', '-n', 'user.x', '-v', 'y', w.t.p(GUESTS)]);
    assert.equal(r.code, 0, r.out);
    const xa = await waitFor(() => alertsOf(w).find((a) => a.path === GUESTS && a.reason === 'xattr'), 5000, 'an xattr alert');
    assert.equal(xa.action, 'reverted');
    await waitFor(() => (Object.keys(attrsOf(w.t.p(GUESTS)) ?? { x: 1 }).length === 0 ? true : null), 5000, 'the attribute gone');
    // Nothing else was alerted for these two files (no loop of reverts).
    await new Promise((res) => setTimeout(res, 500));
    assert.deepEqual(alertsOf(w).filter((a) => a.path === ORG || a.path === GUESTS).map((a) => a.reason).sort(), ['acl', 'xattr']);
    const v = w.cli(['verify']);
    assert.equal(v.code, 0, v.stdout + v.stderr);
    // No command approves an ACL: accept says so and changes nothing.
    const acc = w.cli(['accept', acl.id]);
    assert.equal(acc.code, 1, acc.stdout + acc.stderr);
    assert.match(acc.stderr, /no warden command approves one/);
    assert.deepEqual(attrsOf(w.t.p(ORG)), {});
  });

  it('an attribute approved at init is put back when removed, and kept across a content revert; warden verify sees a change', async () => {
    const w = agentWorld({ init: false });
    worlds.push(w);
    assert.equal(spawnSync('setfattr', ['-n', 'user.origin', '-v', 'owner', w.t.p(ORG)]).status, 0);
    const init = w.cli(['init', '--json']);
    assert.equal(init.code, 0, init.stderr);
    w.store = (JSON.parse(init.stdout) as { store: string }).store;
    // verify (no guard running) names the change of an attribute.
    assert.equal(asAgent(w, ['setfattr', '-x', 'user.origin', w.t.p(ORG)]).code, 0);
    const v = w.cli(['verify']);
    assert.notEqual(v.code, 0, 'verify finds the removed attribute');
    assert.match(v.stdout + v.stderr, /bookclub\.toml/);
    await w.guard();
    const want = { 'user.origin': Buffer.from('owner').toString('base64') };
    await waitFor(() => (JSON.stringify(attrsOf(w.t.p(ORG))) === JSON.stringify(want) ? true : null), 5000, 'the approved attribute put back');
    const r = asAgent(w, ['sh', '-c', `printf 'tampered = 1\\n' >> ${w.t.p(ORG)}`]);
    assert.equal(r.code, 0, r.out);
    await waitFor(() => alertsOf(w).find((a) => a.path === ORG && a.reason === 'content'), 5000, 'the content reverted');
    assert.deepEqual(attrsOf(w.t.p(ORG)), want, 'the restored file carries the approved attribute');
  });

  it('a restore into a directory with a default ACL does not inherit it', async () => {
    const w = agentWorld();
    worlds.push(w);
    await w.guard();
    // The agent owns orgs/ (deployment A): it may give the directory a default ACL; the directory's own state is not this test's.
    assert.equal(asAgent(w, ['setfacl', '-d', '-m', 'u:nobody:rw', w.t.p('orgs')]).code, 0);
    const r = asAgent(w, ['sh', '-c', `printf 'tampered = 1\\n' >> ${w.t.p(ORG)}`]);
    assert.equal(r.code, 0, r.out);
    await waitFor(() => alertsOf(w).find((a) => a.path === ORG && a.reason === 'content'), 5000, 'the content reverted');
    assert.deepEqual(attrsOf(w.t.p(ORG)), {}, 'no ACL on the restored file');
    await new Promise((res) => setTimeout(res, 500));
    assert.equal(alertsOf(w).filter((a) => a.path === ORG).length, 1, 'one alert, no loop of reverts');
    // A sanctioned change written there has none either: warden never fights itself.
    const wanted = readFileSync(w.t.p(ORG), 'utf8') + '# sanctioned\n';
    const ap = w.cli(['apply', ORG, '--from', '-'], wanted);
    assert.equal(ap.code, 0, ap.stderr);
    assert.equal(readFileSync(w.t.p(ORG), 'utf8'), wanted);
    assert.deepEqual(attrsOf(w.t.p(ORG)), {}, 'no ACL on the applied file');
    await new Promise((res) => setTimeout(res, 700));
    assert.equal(alertsOf(w).filter((a) => a.path === ORG).length, 1, 'no alert after the sanctioned change');
  });
});
