/**
 * The root is a path (docs/CONTRACT.md §Detection). The agent owns the root's parent (deployment
 * A), so it can rename the root away and put its own copy at the path; the guard used to
 * keep checking the moved-away tree through its descriptor ("re-armed the watch on"), while
 * every reader of ROOT/… saw the agent's config. Now what sits at the path is put right
 * within the revert budget, with an alert `root-replaced`.
 */
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { cli, readAlertsOf, testWorld, waitFor, type TestRoot } from '../helpers/root.js';
import { giveToAgent, makeAgent, type Agent } from '../helpers/agent.js';
import type { Alert } from '../../src/store/alert-types.js';

const ORG = 'orgs/bookclub.toml';
const world = testWorld();
const agents: Agent[] = [];
afterEach(async () => { await world.cleanup(); });
after(() => { for (const a of agents) a.remove(); });

async function guarded(): Promise<{ t: TestRoot; a: Agent; approved: string }> {
  const t = world.root();
  const a = makeAgent('wtrp');
  agents.push(a);
  giveToAgent(t, a);
  const init = cli(t, ['init']);
  assert.equal(init.code, 0, init.stderr);
  await world.daemon(t);
  return { t, a, approved: readFileSync(t.p(ORG), 'utf8') };
}

/** The agent swaps two names in one step (as `mv --exchange` does). */
const EXCHANGE = (a: string, b: string) => `python3 -c "import ctypes,sys; l=ctypes.CDLL(None, use_errno=True); sys.exit(0 if l.renameat2(-100, b'${a}', -100, b'${b}', 2) == 0 else ctypes.get_errno())"`;

const BUDGET_MS = 2_000; // 1 s in the spec; slack for a loaded 2-core test machine

describe('the root path is what is guarded', () => {
  it('a copy swapped in at the root path is moved aside whole, as the agent left it, and the approved tree is put back', async () => {
    const { t, a, approved } = await guarded();
    const r = a.sh(`cd ${t.base} && mkdir evil && cp -a root/config root/orgs root/blocks evil/ && printf 'hourly_cap = 777\\n' >> evil/${ORG} && printf 'x = 1\\n' > evil/orgs/extra.toml`);
    assert.equal(r.code, 0, r.out);
    const edited = readFileSync(join(t.base, 'evil', ORG), 'utf8');
    // One atomic step (renameat2 RENAME_EXCHANGE), so no moment shows an empty path.
    const mv = a.sh(`cd ${t.base} && ${EXCHANGE('evil', 'root')}`);
    assert.equal(mv.code, 0, mv.out);
    const t0 = Date.now();
    await waitFor(() => readFileSync(t.p(ORG), 'utf8') === approved && !existsSync(t.p('orgs/extra.toml')), BUDGET_MS, 'the path serves the approved org again');
    const ms = Date.now() - t0;
    const rr = await waitFor(() => readAlertsOf(t).find((x) => x.reason === 'root-replaced'), BUDGET_MS, 'the root-replaced alert');
    assert.equal(rr.path, '.');
    // Not warden's directory (docs/ARCHITECTURE.md, invariant 19): kept whole, nothing in it changed or swept.
    assert.ok(rr.quarantine, JSON.stringify(rr));
    const kept = t.p(rr.quarantine);
    assert.equal(readFileSync(join(kept, ORG), 'utf8'), edited);
    assert.equal(readFileSync(join(kept, 'orgs/extra.toml'), 'utf8'), 'x = 1\n');
    assert.equal(lstatSync(kept).uid, a.uid);
    // The path is guarded from now on, and it verifies clean.
    assert.equal(cli(t, ['verify']).code, 0);
    a.sh(`printf 'hourly_cap = 778\\n' >> ${t.p(ORG)}`);
    await waitFor(() => readFileSync(t.p(ORG), 'utf8') === approved, BUDGET_MS, 'a later edit in the new root is reverted');
    process.stdout.write(`# root swap put right in ${ms} ms\n`);
  });

  it('a symlink at the root path is quarantined and the approved tree recreated', async () => {
    const { t, a, approved } = await guarded();
    const r = a.sh(`cd ${t.base} && mkdir -p evil/orgs && printf 'hourly_cap = 777\\n' > evil/${ORG} && ln -s evil link && ${EXCHANGE('link', 'root')}`);
    assert.equal(r.code, 0, r.out);
    await waitFor(() => !lstatSync(t.root).isSymbolicLink() && existsSync(t.p(ORG)) && readFileSync(t.p(ORG), 'utf8') === approved, BUDGET_MS, 'a real root with the approved tree');
    const rr = readAlertsOf(t).find((x) => x.reason === 'root-replaced');
    assert.ok(rr?.quarantine, 'the link was kept in quarantine');
    assert.ok(lstatSync(join(t.p('snapshots/quarantine'), rr.quarantine.split('/').slice(-2).join('/'))).isSymbolicLink());
    assert.equal(cli(t, ['verify']).code, 0);
  });

  it('a root moved away with nothing in its place is recreated at the path', async () => {
    const { t, a, approved } = await guarded();
    assert.equal(a.sh(`mv ${t.root} ${t.base}/root.old`).code, 0);
    await waitFor(() => existsSync(t.p(ORG)) && readFileSync(t.p(ORG), 'utf8') === approved, BUDGET_MS, 'the approved tree back at the path');
    assert.ok(readAlertsOf(t).some((x) => x.reason === 'root-replaced'));
    // The moved-away tree gets none of our writes any more.
    a.sh(`printf 'hourly_cap = 9\\n' >> ${t.base}/root.old/${ORG}`);
    await waitFor(() => readFileSync(t.p(ORG), 'utf8') === approved, 500, 'still approved');
    assert.ok(readFileSync(join(t.base, 'root.old', ORG), 'utf8').includes('hourly_cap = 9'), 'the old tree is no longer ours');
  });

  it('swapped while the guard is stopped (deployment store): verify and status say root-replaced; the guard puts it right at start', async () => {
    const t = world.root();
    const a = makeAgent('wtrs');
    agents.push(a);
    giveToAgent(t, a);
    const state = join(t.base, 'guard-state');
    mkdirSync(state, { mode: 0o700 });
    const env = { WARDEN_GUARD_STATE_DIR: state };
    assert.equal(cli(t, ['init'], { env }).code, 0);
    const approved = readFileSync(t.p(ORG), 'utf8');
    assert.equal(a.sh(`cd ${t.base} && mkdir evil && cp -a root/config root/orgs root/blocks evil/ && printf 'hourly_cap = 777\\n' >> evil/${ORG} && ${EXCHANGE('evil', 'root')}`).code, 0);
    const v = cli(t, ['verify'], { env });
    assert.equal(v.code, 1, v.stdout + v.stderr);
    assert.match(v.stdout, /DRIFT \.: root-replaced/);
    const st = cli(t, ['status'], { env });
    assert.match(st.stdout, /DRIFT \. \(root-replaced\)/);
    await world.daemon(t, ['--guard'], env);
    assert.equal(readFileSync(t.p(ORG), 'utf8'), approved, 'reverted before ready');
    const stores = join(state, 'stores');
    const alerts = readFileSync(join(stores, readdirSync(stores)[0] ?? '', 'alerts.jsonl'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Alert);
    assert.ok(alerts.some((x) => x.reason === 'changed-while-stopped' && x.also?.includes('root-replaced') && x.path === '.'), JSON.stringify(alerts.map((x) => [x.reason, x.also])));
    const v2 = cli(t, ['verify'], { env });
    assert.equal(v2.code, 0, v2.stdout);
  });
});
