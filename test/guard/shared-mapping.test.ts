/**
 * A write through mmap(MAP_SHARED) raises no inotify event; it stayed live
 * until the backstop rescan (29–32 s). The stamps of the approved files are polled now
 * (src/guard/stamp-poll.ts), so it is reverted within the budget. The agent does it for
 * real: open O_RDWR, map shared, close, patch bytes, msync — and again after the revert.
 */
import { after, afterEach, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { TEST_WARDEN_TOML, cli, readAlertsOf, testWorld, waitFor } from '../helpers/root.js';
import { join } from 'node:path';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { execFileSync, spawnSync } from 'node:child_process';
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

async function lateMappingWrites(base?: string): Promise<void> {
  // The witness off: it is the guard's own poll under test here, not the witness's view of opens.
  const t = world.root({ wardenToml: `${TEST_WARDEN_TOML}\n[witness]\nenabled = false\n`, ...(base ? { base } : {}) });
  const a = makeAgent('wtmd');
  agents.push(a);
  giveToAgent(t, a);
  assert.equal(cli(t, ['init']).code, 0);
  await world.daemon(t);
  const files = [ORG, 'config/conditions.toml', 'config/guests.toml'];
  const approved = files.map((f) => readFileSync(t.p(f), 'utf8'));
  // The agent maps all three and closes the descriptors, waits until any fast polling that an
  // open alone would cause has long ended, then patches one byte of each through its mapping.
  const r = a.sh(`python3 -c "
import mmap, os, time
time.sleep(2)  # the agent attacks a guard that has settled (every file watched, none polled fast)
ms = []
for p in [${files.map((f) => `'${t.p(f)}'`).join(', ')}]:
    fd = os.open(p, os.O_RDWR)
    ms.append(mmap.mmap(fd, 0, mmap.MAP_SHARED))
    os.close(fd)
time.sleep(3)
for m in ms:
    i = m.find(b'=')
    m[i:i+1] = b'#'
    m.flush()
# The mappings stay alive in a child for a while (its exit would be a hint of its own).
pid = os.fork()
if pid:
    open('${t.base}/holder.pid', 'w').write(str(pid))
else:
    nul = os.open('/dev/null', os.O_RDWR)
    for k in (0, 1, 2):
        os.dup2(nul, k)
    time.sleep(8)
    os._exit(0)
"`);
  const t0 = Date.now();
  const holder = Number(readFileSync(join(t.base, 'holder.pid'), 'utf8'));
  after(() => { try { process.kill(holder, 'SIGKILL'); } catch { /* gone */ } });
  assert.equal(r.code, 0, r.out);
  // Waited for by the alerts, not by reading the files: an open of a file is itself what puts it
  // on the fast cycle, so a test that polled the files would find them fast for that reason alone.
  await waitFor(() => files.every((f) => readAlertsOf(t).some((x) => x.path === f && x.reason === 'content')), BUDGET_MS, 'a revert alert for each file within the budget');
  process.stdout.write(`# three late mapping writes reverted ${Date.now() - t0} ms after the last msync\n`);
  for (const [k, f] of files.entries()) assert.equal(readFileSync(t.p(f), 'utf8'), approved[k], `${f}: approved bytes back`);
}

it('a mapping made, its descriptor closed, and written only seconds later is still reverted within the budget (idle files are polled slowly, an open file on the fast cycle)', async () => {
  await lateMappingWrites();
});

it('the same on tmpfs, where a store into a shared mapping moves no stamp at all (an open file is checked by hash)', async (ctx) => {
  const work = mkdtempSync(join(tmpdir(), 'warden-mmap-tmpfs-'));
  const mnt = join(work, 'mnt');
  mkdirSync(mnt);
  chmodSync(work, 0o755);
  try { execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0755', 'tmpfs', mnt], { stdio: 'ignore' }); }
  catch { rmSync(work, { recursive: true, force: true }); ctx.skip('cannot mount a tmpfs here'); return; }
  try {
    await lateMappingWrites(join(mnt, 'w')); // a folder of its own: the cleanup removes it, never the mount point
  } finally {
    await world.cleanup();
    spawnSync('umount', ['-l', mnt]);
    rmSync(work, { recursive: true, force: true });
  }
});

/**
 * A mapping made while the guard was stopped: its open came before any watch, so no IN_OPEN
 * will ever say it is there. When the guard arms the inode watch it asks the kernel whether
 * the inode is open for writing (a read lease is refused while it is: open-watch.ts settle),
 * and such a file counts as open: checked by hash on each fast look, so a store into the old
 * mapping is reverted within the budget, on tmpfs too (before, only the 8 s slow cycle's
 * stamps, which tmpfs never moves).
 */
async function mappingFromBeforeStart(base?: string): Promise<void> {
  const t = world.root({ wardenToml: `${TEST_WARDEN_TOML}\n[witness]\nenabled = false\n`, ...(base ? { base } : {}) });
  const a = makeAgent('wtmb');
  agents.push(a);
  giveToAgent(t, a);
  assert.equal(cli(t, ['init']).code, 0);
  const approved = readFileSync(t.p(ORG), 'utf8');
  const trigger = join(t.base, 'write-now');
  // Mapped, descriptor closed, held by a child that writes only when told to (the guard not running yet).
  const r = a.sh(`python3 -c "
import mmap, os, time
fd = os.open('${t.p(ORG)}', os.O_RDWR)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED)
os.close(fd)
pid = os.fork()
if pid:
    open('${t.base}/holder.pid', 'w').write(str(pid))
else:
    nul = os.open('/dev/null', os.O_RDWR)
    for k in (0, 1, 2):
        os.dup2(nul, k)
    for _ in range(3000):
        if os.path.exists('${trigger}'):
            break
        time.sleep(0.01)
    i = m.find(b'=')
    m[i:i+1] = b'#'
    m.flush()
    time.sleep(8)
    os._exit(0)
"`);
  assert.equal(r.code, 0, r.out);
  const holder = Number(readFileSync(join(t.base, 'holder.pid'), 'utf8'));
  after(() => { try { process.kill(holder, 'SIGKILL'); } catch { /* gone */ } });
  await world.daemon(t);
  // The attack comes once the guard has settled (every file watched after its first fast cycle).
  await new Promise((res) => setTimeout(res, 2_000));
  assert.equal(readAlertsOf(t).filter((x) => x.path === ORG).length, 0, 'nothing to revert before the write');
  writeFileSync(trigger, '');
  const t0 = Date.now();
  await waitFor(() => readAlertsOf(t).some((x) => x.path === ORG && x.reason === 'content'), BUDGET_MS, 'a revert alert within the budget');
  process.stdout.write(`# a write through a mapping made while the guard was stopped reverted ${Date.now() - t0} ms after the trigger\n`);
  await waitFor(() => readFileSync(t.p(ORG), 'utf8') === approved, BUDGET_MS, 'approved bytes back');
}

it('a mapping made while the guard was stopped, written once the guard runs, is reverted within the budget', async () => {
  await mappingFromBeforeStart();
});

it('the same on tmpfs (no stamp moves there: the file is checked by hash because it is open for writing)', async (ctx) => {
  const work = mkdtempSync(join(tmpdir(), 'warden-mmap-tmpfs-'));
  const mnt = join(work, 'mnt');
  mkdirSync(mnt);
  chmodSync(work, 0o755);
  try { execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m,mode=0755', 'tmpfs', mnt], { stdio: 'ignore' }); }
  catch { rmSync(work, { recursive: true, force: true }); ctx.skip('cannot mount a tmpfs here'); return; }
  try {
    await mappingFromBeforeStart(join(mnt, 'w'));
  } finally {
    await world.cleanup();
    spawnSync('umount', ['-l', mnt]);
    rmSync(work, { recursive: true, force: true });
  }
});
