/**
 * enforce decides by the inode being opened, not by the name the opener used (deployment A
 * emulated: the agent is a second user who owns the root's parent, the guard and a separate
 * witness run as in the units). A write through a hard link the agent made in its home is
 * refused for a file of a protected directory (orgs/) and for a file protected by name
 * (config/guests.toml); a truncate(2) by path, which no permission event can hold, is
 * reverted and its alert names the truncating process, never "no open for writing was seen".
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { agentWorld, type AgentWorld } from '../helpers/agent-world.js';
import { spawnSync } from 'node:child_process';
import { fileSha, readAlertsFile, readAlertsOf, startDaemon, testWorld, waitFor, TEST_WARDEN_TOML, type Daemon } from '../helpers/root.js';
import type { Alert, Writer } from '../../src/store/alert-types.js';

const ROOT_ONLY = process.getuid?.() !== 0 ? 'needs root (a second user, and fanotify needs CAP_SYS_ADMIN)' : false;
const ORG = 'orgs/bookclub.toml';
const GUESTS = 'config/guests.toml';
const ENFORCE = `${TEST_WARDEN_TOML}\n[witness]\nenforce = true\n`;
const worlds: AgentWorld[] = [];
const daemons: Daemon[] = [];
const world = testWorld();
const mounts: string[] = [];
after(async () => {
  for (const m of mounts) spawnSync('umount', [m]);
  for (const d of daemons) await d.stop();
  for (const w of worlds) await w.cleanup();
  await world.cleanup();
});
const alertsOf = (w: AgentWorld): Alert[] => readAlertsFile(join(w.store, 'alerts.jsonl'));
const isWriter = (by: Alert['by']): by is Writer => typeof by === 'object' && by !== null && 'pid' in by;

/** The guard as the units run it, and the witness beside it (its own process, root), sharing a record directory. */
async function deploy(wardenToml: string): Promise<{ w: AgentWorld; witness: Daemon }> {
  const w = agentWorld({ wardenToml });
  worlds.push(w);
  const rec = join(w.guardState, '..', 'warden-witness');
  mkdirSync(rec, { mode: 0o750, recursive: true });
  const g = await w.guard({ WARDEN_WITNESS_STATE_DIR: rec });
  const witness = await startDaemon(w.t, ['--witness', '--writer-pid', String(g.proc.pid)], { ...w.asWarden, WARDEN_WITNESS_STATE_DIR: rec });
  daemons.push(witness);
  await waitFor(() => (/witness running|ready/.test(g.stderr() + g.stdout()) ? true : null), 5000, 'guard up');
  return { w, witness };
}

/** As the agent: hard-link REL into its home, then open the link for appending; prints "ok" or the errno's name. */
const LINK_WRITE = `import errno, os, sys
root, rel, link = sys.argv[1], sys.argv[2], sys.argv[3]
if os.path.lexists(link): os.unlink(link)
os.link(os.path.join(root, rel), link)
try:
    fd = os.open(link, os.O_WRONLY | os.O_APPEND)
    os.write(fd, b'tampered = "through a hard link"\\n'); os.close(fd); print('ok')
except OSError as e:
    print(errno.errorcode[e.errno])
`;

describe('enforce by inode', { skip: ROOT_ONLY }, () => {
  it('a write through a hard link in the agent\'s home is refused, for a file of a protected directory and for a file protected by name', async () => {
    const { w } = await deploy(ENFORCE);
    for (const rel of [ORG, GUESTS]) {
      const before = fileSha(w.t.p(rel));
      const link = join(w.t.base, `hl-${rel.replace('/', '-')}`);
      // The witness marks within a second of its start; a refusal is what we wait for.
      const r = await waitFor(() => { const x = w.agent(LINK_WRITE, [w.t.root, rel, link]); return x.out.trim() === 'EPERM' ? x : null; }, 5000, `the write through a link of ${rel} refused`);
      assert.equal(r.out.trim(), 'EPERM');
      assert.equal(fileSha(w.t.p(rel)), before, `nothing was written to ${rel}`);
      const a = await waitFor(() => alertsOf(w).find((x) => x.reason === 'refused' && x.path === rel), 5000, `a refused alert naming ${rel}`);
      assert.ok(isWriter(a.by) && a.by.uid === w.uid && a.by.refused, JSON.stringify(a.by));
    }
  });

  it('a write through /proc/self/fd (a descriptor opened for reading) and through a bind mount of the file is refused', async () => {
    const { w } = await deploy(ENFORCE);
    const before = fileSha(w.t.p(ORG));
    await new Promise((r) => setTimeout(r, 1200)); // the marks are placed within a second
    const viaFd = w.agent(`import errno, os, sys
ro = os.open(sys.argv[1], os.O_RDONLY)
try:
    fd = os.open('/proc/self/fd/%d' % ro, os.O_WRONLY | os.O_APPEND); os.write(fd, b'x = 1\\n'); print('ok')
except OSError as e:
    print(errno.errorcode[e.errno])`, [w.t.p(ORG)]);
    assert.equal(viaFd.out.trim(), 'EPERM', viaFd.out);
    // A bind mount (made by root: an unprivileged user cannot mount) onto a file in the agent's home.
    const target = join(w.t.base, 'bound.toml');
    assert.equal(w.agent('import sys; open(sys.argv[1], "w").close()', [target]).code, 0);
    const m = spawnSync('mount', ['--bind', w.t.p(ORG), target], { encoding: 'utf8' });
    if (m.status !== 0) { assert.equal(fileSha(w.t.p(ORG)), before); return; /* no bind mounts here: the fd case stands alone */ }
    mounts.push(target);
    const viaMount = w.agent(`import errno, os, sys
try:
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND); os.write(fd, b'x = 2\\n'); print('ok')
except OSError as e:
    print(errno.errorcode[e.errno])`, [target]);
    assert.equal(viaMount.out.trim(), 'EPERM', viaMount.out);
    spawnSync('umount', [target]);
    mounts.splice(mounts.indexOf(target), 1);
    assert.equal(fileSha(w.t.p(ORG)), before, 'nothing was written');
  });

  it('the in-process witness of warden run refuses a write through a hard link too (config/guests.toml, orgs/)', async () => {
    const t = world.root({ init: true, wardenToml: ENFORCE });
    await world.daemon(t, []);
    for (const rel of [GUESTS, ORG]) {
      const before = fileSha(t.p(rel));
      const link = join(t.base, `hl-${rel.replace('/', '-')}`);
      const r = await waitFor(() => {
        const x = spawnSync('python3', ['-c', LINK_WRITE, t.root, rel, link], { encoding: 'utf8', timeout: 10_000 });
        return x.stdout.trim() === 'EPERM' ? x : null;
      }, 5000, `the write through a link of ${rel} refused`);
      assert.equal(r.stdout.trim(), 'EPERM');
      assert.equal(fileSha(t.p(rel)), before);
      await waitFor(() => readAlertsOf(t).find((x) => x.reason === 'refused' && x.path === rel), 5000, `a refused alert naming ${rel}`);
    }
  });

  it('a truncate(2) by path (no open) is reverted, and its alert names the truncating process', async () => {
    const { w } = await deploy(ENFORCE);
    const before = fileSha(w.t.p(ORG));
    await new Promise((r) => setTimeout(r, 1200)); // the name marks are placed within a second
    // It lingers a moment, as a runtime would: the witness reads who it is after the fact (no permission event holds a truncate).
    const r = w.agent('import os, sys, time; os.truncate(sys.argv[1], 0); print(os.getpid(), flush=True); time.sleep(0.5)', [w.t.p(ORG)]);
    assert.equal(r.code, 0, r.out);
    const pid = Number(r.out.trim());
    const a = await waitFor(() => alertsOf(w).find((x) => x.path === ORG && x.action === 'reverted'), 5000, 'the truncate reverted');
    await waitFor(() => (fileSha(w.t.p(ORG)) === before ? true : null), 5000, 'the approved content back');
    assert.doesNotMatch(JSON.stringify(a.by), /saw no open for writing/);
    assert.ok(isWriter(a.by) && a.by.pid === pid && a.by.uid === w.uid && a.by.op === 'modify', JSON.stringify(a.by));
  });

  it('a truncate(2) through a hard link in the agent\'s home is reverted, and its alert names the truncating process', async () => {
    const { w } = await deploy(ENFORCE);
    const before = fileSha(w.t.p(ORG));
    await new Promise((r) => setTimeout(r, 1200)); // the marks are placed within a second
    const link = join(w.t.base, 'hl-trunc');
    const r = w.agent('import os, sys, time; os.link(sys.argv[1], sys.argv[2]); os.truncate(sys.argv[2], 0); print(os.getpid(), flush=True); time.sleep(0.5)', [w.t.p(ORG), link]);
    assert.equal(r.code, 0, r.out);
    const pid = Number(r.out.trim());
    const a = await waitFor(() => alertsOf(w).find((x) => x.path === ORG && x.action === 'reverted'), 5000, 'the truncate reverted');
    await waitFor(() => (fileSha(w.t.p(ORG)) === before ? true : null), 5000, 'the approved content back');
    assert.ok(isWriter(a.by) && a.by.pid === pid && a.by.uid === w.uid && a.by.op === 'modify', JSON.stringify(a.by));
  });

  it('an ACL set on a protected file is put back, and its alert names the process that set it (an attribute change by name)', async () => {
    const { w } = await deploy(TEST_WARDEN_TOML);
    await new Promise((r) => setTimeout(r, 1200)); // the name marks are placed within a second
    // The access ACL "u::rw-,u:nobody:r--,g::r--,m::r--,o::r--" in the kernel's xattr form, set as setfacl would.
    const r = w.agent(`import os, sys, struct, time
e = lambda tag, perm, id: struct.pack('<HHI', tag, perm, id)
acl = struct.pack('<I', 2) + e(1, 6, 0xffffffff) + e(2, 4, 65534) + e(4, 4, 0xffffffff) + e(0x10, 4, 0xffffffff) + e(0x20, 4, 0xffffffff)
os.setxattr(sys.argv[1], 'system.posix_acl_access', acl); print(os.getpid(), flush=True); time.sleep(0.5)`, [w.t.p(ORG)]);
    assert.equal(r.code, 0, r.out);
    const pid = Number(r.out.trim());
    const a = await waitFor(() => alertsOf(w).find((x) => x.path === ORG && x.reason === 'acl'), 5000, 'the ACL put back');
    assert.ok(isWriter(a.by) && a.by.pid === pid && a.by.uid === w.uid && a.by.op === 'attrib', JSON.stringify(a.by));
  });
});
