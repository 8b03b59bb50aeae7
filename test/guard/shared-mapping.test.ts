/**
 * Issue 21 row 2: a write through mmap(MAP_SHARED) raises no inotify event; it stayed live
 * until the backstop rescan (29–32 s). The stamps of the approved files are polled now
 * (src/guard/stamp-poll.ts), so it is reverted within the budget. The agent does it for
 * real: open O_RDWR, map shared, close, patch bytes, msync — and again after the revert.
 */
import { after, afterEach, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { cli, readAlertsOf, testWorld, waitFor } from '../helpers/root.js';
import { giveToAgent, makeAgent, type Agent } from '../helpers/agent.js';

const ORG = 'orgs/bookclub.toml';
const world = testWorld();
const agents: Agent[] = [];
afterEach(async () => { await world.cleanup(); });
after(() => { for (const a of agents) a.remove(); });

const BUDGET_MS = 2_000; // 1 s in the spec; slack for a loaded 2-core test machine

it('a write through a shared mapping is reverted within the budget, each time', async () => {
  const t = world.root();
  const a = makeAgent('wtmm');
  agents.push(a);
  giveToAgent(t, a);
  assert.equal(cli(t, ['init']).code, 0);
  await world.daemon(t);
  const approved = readFileSync(t.p(ORG), 'utf8');
  const i = Buffer.from(approved).indexOf('='); // a byte offset (the fixture has non-ASCII text)
  assert.ok(i > 0, 'the fixture has a key');
  for (let round = 1; round <= 2; round++) {
    // Same size, one byte changed: only the mapping writes; nothing calls write(2).
    const r = a.sh(`python3 -c "
import mmap, os
fd = os.open('${t.p(ORG)}', os.O_RDWR)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED)
os.close(fd)
m[${i}:${i + 1}] = b'#'
m.flush()
m.close()"`);
    const t0 = Date.now();
    assert.equal(r.code, 0, r.out);
    await waitFor(() => readFileSync(t.p(ORG), 'utf8') === approved, BUDGET_MS, `round ${round}: reverted`);
    process.stdout.write(`# round ${round}: reverted ${Date.now() - t0} ms after msync\n`);
    // The alert proves the mapping wrote (the revert may land before this test reads the file).
    await waitFor(() => readAlertsOf(t).filter((x) => x.path === ORG && x.reason === 'content').length === round, 5_000, 'alerted');
  }
});
