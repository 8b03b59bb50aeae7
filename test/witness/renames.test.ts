/**
 * The witness sees renames of directories (docs/ARCHITECTURE.md, "Who wrote (`by`)"): when the
 * agent (a second user who owns the root and its parent) puts another directory at the root
 * path or at orgs/, in one renameat2(RENAME_EXCHANGE) or with a plain two-step `mv`, the
 * `root-replaced` / `dir-replaced` (or `deleted`) alert names the agent: its uid and user name
 * and the process that renamed, read from the witness's record as a file write's `by` is.
 * The guard runs as root with the witness in its process (`warden run`).
 */
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, readAlertsOf, testWorld, waitFor, type TestRoot } from '../helpers/root.js';
import { giveToAgent, makeAgent, type Agent } from '../helpers/agent.js';
import type { Alert, Writer } from '../../src/store/alert-types.js';

const ROOT_ONLY = process.getuid?.() !== 0 ? 'needs root (fanotify needs CAP_SYS_ADMIN, and a second user)' : false;
const ORG = 'orgs/bookclub.toml';
const BUDGET_MS = 10_000; // a loaded 2-core test machine
const world = testWorld();
const agents: Agent[] = [];
afterEach(async () => { await world.cleanup(); });
after(() => { for (const a of agents) a.remove(); });

const isWriter = (by: Alert['by']): by is Writer => typeof by === 'object' && by !== null && 'pid' in by;

/**
 * The agent exchanges `a` and `b` (in `dir`) in one renameat2(RENAME_EXCHANGE), then stays
 * alive a moment (the witness reads who it was from /proc: a process already reaped is named
 * by its pid only, docs/ARCHITECTURE.md). Prints its pid.
 */
const EXCHANGE = (dir: string, a: string, b: string) =>
  `cd '${dir}' && python3 -c "
import ctypes,os,sys,time
l=ctypes.CDLL(None, use_errno=True)
print(os.getpid(), flush=True)
r=l.renameat2(-100, b'${a}', -100, b'${b}', 2)
time.sleep(0.5)
sys.exit(0 if r == 0 else ctypes.get_errno())"`;

/**
 * A plain two-step `mv` by the agent: `mv NAME AWAY`, then `mv -T MINE NAME`, the real
 * `mv` binary each time. The parent reaps each only after half a second (waitid WNOWAIT
 * leaves it a zombie, whose /proc entry still says who it was), so the witness always has
 * time to read it. Prints the two pids.
 */
const TWO_STEP_MV = (dir: string, name: string, mine: string, away: string) =>
  `cd '${dir}' && python3 -c "
import os,subprocess,time
a=subprocess.Popen(['mv', '${name}', '${away}'])
os.waitid(os.P_PID, a.pid, os.WEXITED | os.WNOWAIT)
b=subprocess.Popen(['mv', '-T', '${mine}', '${name}'], stderr=subprocess.DEVNULL)
os.waitid(os.P_PID, b.pid, os.WEXITED | os.WNOWAIT)
print(a.pid, b.pid, flush=True)
time.sleep(0.5)
a.wait(); b.wait()"`;

/** A root given to a new agent, initialised, with `warden run` (guard, notifier and witness) as root. */
async function guardedWithWitness(prefix: string): Promise<{ t: TestRoot; a: Agent; approved: string }> {
  const t = world.root();
  const a = makeAgent(prefix);
  agents.push(a);
  giveToAgent(t, a);
  const init = cli(t, ['init']);
  assert.equal(init.code, 0, init.stderr);
  const d = await world.daemon(t, []);
  assert.match(d.stderr(), /witness running/);
  return { t, a, approved: readFileSync(t.p(ORG), 'utf8') };
}

/** Until no alert was added for `ms`. */
async function quiet(t: TestRoot, ms: number): Promise<void> {
  let n = -1;
  let since = Date.now();
  await waitFor(() => {
    const now = readAlertsOf(t).length;
    if (now !== n) { n = now; since = Date.now(); }
    return Date.now() - since >= ms ? true : null;
  }, BUDGET_MS, 'the alerts quiet', 100);
}

/** The alert's `by` names the agent: its uid and user name, the process (`comm`) and its pid when given. */
function namesAgent(alert: Alert, a: Agent, comm: string, pids: number[]): void {
  const by = alert.by;
  assert.ok(isWriter(by), `the ${alert.reason} alert of ${alert.path} names who did it: ${JSON.stringify(by)}`);
  assert.equal(by.uid, a.uid, JSON.stringify(by));
  assert.equal(by.user, a.name, JSON.stringify(by));
  assert.equal(by.comm, comm, JSON.stringify(by));
  if (pids.length) assert.ok(pids.includes(by.pid), `pid ${by.pid} is one of ${pids.join(', ')}`);
  assert.match(by.op, /^rename-(in|away)$/, JSON.stringify(by));
}

describe('the witness names who renamed a protected directory', { skip: ROOT_ONLY }, () => {
  it('a directory exchanged onto orgs/ (renameat2 RENAME_EXCHANGE): the dir-replaced alert names the agent', async () => {
    const { t, a, approved } = await guardedWithWitness('wrno');
    const x = a.sh(`mkdir '${t.p('mine')}' && ${EXCHANGE(t.root, 'mine', 'orgs')}`);
    assert.equal(x.code, 0, x.out);
    const alert = await waitFor(() => readAlertsOf(t).find((y) => y.path === 'orgs' && y.reason === 'dir-replaced'), BUDGET_MS, 'the dir-replaced alert');
    namesAgent(alert, a, 'python3', [Number(x.out.trim())]);
    await waitFor(() => { try { return readFileSync(t.p(ORG), 'utf8') === approved; } catch { return false; } }, BUDGET_MS, 'the approved org back');
  });

  it('a directory exchanged onto the root path: the root-replaced alert names the agent', async () => {
    const { t, a, approved } = await guardedWithWitness('wrnr');
    const x = a.sh(`mkdir '${join(t.base, 'e')}' && ${EXCHANGE(t.base, 'e', 'root')}`);
    assert.equal(x.code, 0, x.out);
    const alert = await waitFor(() => readAlertsOf(t).find((y) => y.reason === 'root-replaced'), BUDGET_MS, 'the root-replaced alert');
    namesAgent(alert, a, 'python3', [Number(x.out.trim())]);
    await waitFor(() => { try { return readFileSync(t.p(ORG), 'utf8') === approved; } catch { return false; } }, BUDGET_MS, 'the approved tree back');
  });

  it('a separate witness (run --witness) beside a guard: the exchange onto orgs/ and onto the root path names the agent', async () => {
    const t = world.root();
    const a = makeAgent('wrns');
    agents.push(a);
    giveToAgent(t, a);
    assert.equal(cli(t, ['init']).code, 0);
    const g = await world.daemon(t, ['--guard']);
    await world.daemon(t, ['--witness', '--writer-pid', String(g.proc.pid)]);
    let x = a.sh(`mkdir '${t.p('mine')}' && ${EXCHANGE(t.root, 'mine', 'orgs')}`);
    assert.equal(x.code, 0, x.out);
    const alert = await waitFor(() => readAlertsOf(t).find((y) => y.path === 'orgs' && y.reason === 'dir-replaced'), BUDGET_MS, 'the dir-replaced alert');
    namesAgent(alert, a, 'python3', [Number(x.out.trim())]);
    // The repair's own alerts (the files made anew in orgs/) name nobody, and after a lookup
    // that found nothing the guard waits for the record at most once a second (witness-link.ts):
    // the next attack comes once the alerts have been quiet for longer than that.
    await quiet(t, 1200);
    x = a.sh(`mkdir '${join(t.base, 'e')}' && ${EXCHANGE(t.base, 'e', 'root')}`);
    assert.equal(x.code, 0, x.out);
    const rr = await waitFor(() => readAlertsOf(t).find((y) => y.reason === 'root-replaced'), BUDGET_MS, 'the root-replaced alert');
    namesAgent(rr, a, 'python3', [Number(x.out.trim())]);
  });

  it('a chmod of orgs/ and of the root by the agent: the mode alert names it (an attribute change of a directory)', async () => {
    const { t, a } = await guardedWithWitness('wrnc');
    for (const [dir, name, path] of [[t.root, 'orgs', 'orgs'], [t.base, 'root', '.']] as const) {
      const x = a.sh(`cd '${dir}' && python3 -c "
import os,time
print(os.getpid(), flush=True)
os.chmod('${name}', 0o700)
time.sleep(0.5)"`);
      assert.equal(x.code, 0, x.out);
      const alert = await waitFor(() => readAlertsOf(t).find((y) => y.path === path && y.reason === 'mode'), BUDGET_MS, `the mode alert of ${path}`);
      const by = alert.by;
      assert.ok(isWriter(by), JSON.stringify(by));
      assert.deepEqual([by.uid, by.user, by.comm, by.pid, by.op], [a.uid, a.name, 'python3', Number(x.out.trim()), 'attrib']);
    }
  });

  it('a plain two-step mv over orgs/ and over the root path: every alert of the path names the agent and mv', async () => {
    const { t, a, approved } = await guardedWithWitness('wrnm');
    /**
     * The two steps, until an alert of the path says who (at most 3 rounds): the guard may
     * make the path anew between them, and the agent's second mv then collides with it (a
     * `revert-failed`, which names nobody, and the agent's directory, its own, verified).
     */
    const twoStep = async (dir: string, name: string, isOfPath: (y: Alert) => boolean, what: string): Promise<void> => {
      for (let round = 0; round < 3; round++) {
        await quiet(t, 1200); // as in the test above: no lookup that found nothing within the last second
        const seen = readAlertsOf(t).length;
        const x = a.sh(`mkdir '${join(dir, `mine${round}`)}' && ${TWO_STEP_MV(dir, name, `mine${round}`, `${name}.away${round}`)}`);
        assert.equal(x.code, 0, x.out);
        const pids = x.out.trim().split(/\s+/).map(Number);
        const fresh = await waitFor(() => {
          const l = readAlertsOf(t).slice(seen).filter((y) => isOfPath(y) || (y.path === (name === 'root' ? '.' : name) && y.action === 'revert-failed'));
          return l.length ? l : null;
        }, BUDGET_MS, `an alert of ${what}`).catch((e: Error) => { throw new Error(`${e.message}; the alerts: ${JSON.stringify(readAlertsOf(t).map((y) => [y.path, y.reason, y.by]))}`); });
        await waitFor(() => { try { return readFileSync(t.p(ORG), 'utf8') === approved; } catch { return false; } }, BUDGET_MS, 'the approved tree back');
        await new Promise((r) => setTimeout(r, 300)); // a second alert of the same two steps
        const named = readAlertsOf(t).slice(seen).filter(isOfPath);
        process.stdout.write(`# two-step mv over ${what}, round ${round}: ${JSON.stringify(readAlertsOf(t).slice(seen).filter((y) => y.path === (name === 'root' ? '.' : name)).map((y) => [y.reason, y.action, isWriter(y.by) ? y.by.op : y.by]))}\n`);
        for (const alert of named) namesAgent(alert, a, 'mv', pids);
        if (named.length) return;
        assert.ok(fresh.every((y) => y.action === 'revert-failed'));
      }
      assert.fail(`three rounds of a two-step mv over ${what} all raced the guard's repair`);
    };
    await twoStep(t.root, 'orgs', (y) => y.path === 'orgs' && (y.reason === 'dir-replaced' || y.reason === 'deleted'), 'orgs/');
    await twoStep(t.base, 'root', (y) => y.reason === 'root-replaced', 'the root path');
  });
});
