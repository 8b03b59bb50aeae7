/**
 * The path-hardening attacks, as the agent: the root on its own file system (a loop-mounted ext4 as
 * the agent's home, the usual case when /home is a partition), the store on another. A
 * hard link into quarantine is impossible there, yet nothing may be lost (docs/CONTRACT.md §Revert): the
 * agent truncates an approved file, writes, waits 1.5 s, writes again; both writes must end
 * up in quarantine. A new file in a protected directory is kept there too.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { agentWorld, type AgentWorld } from '../helpers/agent-world.js';
import { readAlertsFile, waitFor } from '../helpers/root.js';
import type { Alert } from '../../src/store/alert-types.js';

const ORG = 'orgs/bookclub.toml';
const worlds: AgentWorld[] = [];
after(async () => { for (const w of worlds.splice(0)) await w.cleanup(); });

const alertsOf = (w: AgentWorld): Alert[] => readAlertsFile(join(w.store, 'alerts.jsonl'));
/** Every byte kept in the store's quarantine, as one text. */
const kept = (w: AgentWorld): string => {
  const q = join(w.store, 'quarantine');
  let out = '';
  for (const id of readdirSync(q)) for (const n of readdirSync(join(q, id))) out += readFileSync(join(q, id, n), 'utf8') + '\n';
  return out;
};

const LATE = String.raw`
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
os.write(fd, b'members = ["first-write"]\n')
time.sleep(1.5)
os.write(fd, b'# second-write\n')
os.close(fd)
`;

describe('root and store on different file systems', () => {
  it('O_TRUNC, write, 1.5 s, write again: both writes are in quarantine; a new file is kept too', async () => {
    const w = agentWorld({ loop: true });
    worlds.push(w);
    assert.notEqual(statSync(w.t.root).dev, statSync(w.store).dev, 'root and store are on different file systems');
    const approved = readFileSync(w.t.p(ORG), 'utf8');
    await w.guard();
    const r = w.agent(LATE, [w.t.p(ORG)]);
    assert.equal(r.code, 0, r.out);
    await waitFor(() => readFileSync(w.t.p(ORG), 'utf8') === approved, 10_000, 'reverted');
    await waitFor(() => kept(w).includes('first-write') && kept(w).includes('second-write'), 10_000, `both writes kept (kept: ${JSON.stringify(kept(w))})`);
    // The alert is recorded just after the move into quarantine: wait for it, in one complete read.
    const seen = await waitFor(() => { const all = alertsOf(w); return all.some((a) => a.path === ORG && a.action === 'reverted' && a.quarantine) ? all : null; }, 10_000, 'the alert naming its quarantine');
    assert.ok(!seen.some((a) => a.action === 'revert-failed'), 'no revert failed');
    // A new file in a protected directory cannot be renamed into quarantine across file systems.
    const plant = w.agent("open(__import__('sys').argv[1], 'w').write('members = [\"planted\"]\\n')", [w.t.p('orgs/planted.toml')]);
    assert.equal(plant.code, 0, plant.out);
    await waitFor(() => !readdirSync(w.t.p('orgs')).includes('planted.toml'), 10_000, 'the new file removed');
    await waitFor(() => alertsOf(w).some((a) => a.path === 'orgs/planted.toml' && a.action === 'removed' && a.quarantine), 10_000, 'its alert');
    // The guard may take the new file while it is still empty (its create is an event): the held inode's late write reaches quarantine within the late-write poll.
    await waitFor(() => /planted/.test(kept(w)), 5_000, `the new file's content kept (kept: ${JSON.stringify(kept(w))})`);
  });
});
