/**
 * Every watch follows the object now at its path (docs/ARCHITECTURE.md, "Watching, and what
 * it costs"), as the agent of deployment A (a second user who owns the root) attacks it:
 *
 * - below a `**` glob base, a file twelve directory levels down is found by `verify` and by
 *   the daemon; a tree made with `mkdir -p` and filled at once is seen by its watches, not
 *   only by the backstop rescan (which here runs every 30 s, past every deadline below);
 * - after orgs/ is deleted and made again (by the agent, by root, or put back by warden's
 *   own repair), a file then moved into it is removed in real time;
 * - every approved file's current inode carries an inode watch, also after restores that
 *   reuse an inode number (the kernel hands a freed number out again at once); the binding
 *   takes a name that is not UTF-8 by its bytes, and a directory with such a name is watched.
 */
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TEST_WARDEN_TOML, cli, readAlertsOf, testWorld, waitFor, type TestRoot } from '../helpers/root.js';
import { giveToAgent, makeAgent, type Agent } from '../helpers/agent.js';
import { IN_MODIFY, closeInotify, loadInotify } from '../../src/fsx/inotify.js';
import { nameFromBytes } from '../../src/common/names.js';
import { parseBody } from '../../src/store/baseline.js';

const world = testWorld();
const agents: Agent[] = [];
afterEach(async () => { await world.cleanup(); });
after(() => { for (const a of agents) a.remove(); });

const DEEP_TOML = `${TEST_WARDEN_TOML}\n[[protect]]\npath = "deep/**/*.txt"\nkind = "text"\n`;
/** renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE), as a shell command taking a and b. */
const EXCHANGE = `python3 -c 'import ctypes,os,sys; l=ctypes.CDLL(None,use_errno=True); r=l.renameat2(-100,sys.argv[1].encode(),-100,sys.argv[2].encode(),2); sys.exit(0 if r==0 else os.strerror(ctypes.get_errno()))'`;
const twelve = (prefix: string) => `deep/${Array.from({ length: 12 }, (_, i) => `${prefix}${i + 1}`).join('/')}`;

/** A root handed to a fresh agent (deployment A), initialised. */
function agentRoot(toml = TEST_WARDEN_TOML, prepare?: (t: TestRoot) => void): { t: TestRoot; a: Agent } {
  const t = world.root({ wardenToml: toml });
  prepare?.(t);
  const a = makeAgent('wtwf');
  agents.push(a);
  giveToAgent(t, a);
  if (existsSync(t.p('deep'))) execFileSync('chown', ['-R', `${a.uid}:${a.gid}`, t.p('deep')]);
  const r = cli(t, ['init']);
  assert.equal(r.code, 0, r.stderr);
  return { t, a };
}

function asAgent(a: Agent, script: string): void {
  const r = a.sh(script);
  assert.equal(r.code, 0, `the agent's ${script}: ${r.out}`);
}

/** Milliseconds from now until `cond` holds (deadline `ms`). */
async function msUntil(cond: () => boolean, ms: number, what: string): Promise<number> {
  const t0 = performance.now();
  await waitFor(cond, ms, what);
  return performance.now() - t0;
}

describe('below a ** glob base, at any depth', () => {
  it('a file twelve levels below the base is found by verify', () => {
    const { t } = agentRoot(DEEP_TOML, (t) => { mkdirSync(t.p('deep')); writeFileSync(t.p('deep/top.txt'), 'top\n'); });
    const d = twelve('v');
    mkdirSync(t.p(d), { recursive: true });
    writeFileSync(t.p(`${d}/evil.txt`), 'evil\n');
    const v = cli(t, ['verify']);
    assert.equal(v.code, 1, v.stdout + v.stderr);
    assert.match(v.stdout, new RegExp(`${d}/evil\\.txt: unexpected-file`));
  });

  it('a file twelve levels below the base at init is approved: left alone, and an edit of it reverted in real time', async () => {
    const d = twelve('i');
    const { t, a } = agentRoot(DEEP_TOML, (t) => { mkdirSync(t.p(d), { recursive: true }); writeFileSync(t.p(`${d}/kept.txt`), 'kept\n'); });
    assert.ok(approvedPaths(t).includes(`${d}/kept.txt`), 'init approved the file twelve levels down');
    await world.daemon(t);
    asAgent(a, `echo changed > '${t.p(`${d}/kept.txt`)}'`);
    await msUntil(() => readFileSync(t.p(`${d}/kept.txt`), 'utf8') === 'kept\n', 3_000, 'the edit twelve levels down reverted');
    assert.equal(cli(t, ['verify']).code, 0);
  });

  it('a file written into a tree made there at once (mkdir -p, twelve levels) is removed in real time', async () => {
    const { t, a } = agentRoot(DEEP_TOML, (t) => { mkdirSync(t.p('deep')); writeFileSync(t.p('deep/top.txt'), 'top\n'); });
    await world.daemon(t);
    const d = twelve('m');
    const took = await (async () => {
      asAgent(a, `mkdir -p '${t.p(d)}' && echo evil > '${t.p(`${d}/evil.txt`)}'`);
      return msUntil(() => !existsSync(t.p(`${d}/evil.txt`)), 3_000, 'the file twelve levels down removed');
    })();
    // The alert is recorded just after the move into quarantine.
    await waitFor(() => readAlertsOf(t).some((x) => x.path === `${d}/evil.txt` && x.action === 'removed'), 5_000, 'alerted as removed');
    process.stderr.write(`# mkdir -p + write, 12 levels: removed after ${took.toFixed(0)} ms\n`);
  });

  it('a file written twelve levels down in a tree there at start is removed in real time', async () => {
    const d = twelve('s');
    const { t, a } = agentRoot(DEEP_TOML, (t) => { mkdirSync(t.p(d), { recursive: true }); writeFileSync(t.p('deep/top.txt'), 'top\n'); });
    await world.daemon(t);
    asAgent(a, `echo evil > '${t.p(`${d}/later.txt`)}'`);
    await msUntil(() => !existsSync(t.p(`${d}/later.txt`)), 3_000, 'the file twelve levels down removed');
  });
});

describe('a protected directory made again: its watch follows', () => {
  /** orgs/ approved again: a directory with the approved file, and verify clean (a foreign directory is moved aside first, then one warden makes is filled). */
  const orgsBack = (t: TestRoot, approved: string) => () => {
    try { return lstatSync(t.p('orgs')).isDirectory() && readFileSync(t.p('orgs/bookclub.toml'), 'utf8') === approved && cli(t, ['verify']).code === 0; } catch { return false; }
  };

  for (const who of ['agent', 'root'] as const) {
    it(`orgs/ deleted and made again by the ${who}, then a file moved in: removed within a second`, async () => {
      const { t, a } = agentRoot();
      const approved = readFileSync(t.p('orgs/bookclub.toml'), 'utf8');
      await world.daemon(t);
      const run = (s: string) => { if (who === 'agent') asAgent(a, s); else execFileSync('sh', ['-c', s]); };
      // The guard may put files back while rm -rf runs (it then fails with ENOTEMPTY: the agent
      // tries again), and may move the new orgs/ aside before the echo lands: whatever the race, the approved orgs/ comes back.
      run(`cd '${t.root}' && for i in 1 2 3 4 5; do rm -rf orgs 2>/dev/null && break; done; mkdir -p orgs && echo 'members = ["agent"]' > orgs/bookclub.toml; true`);
      await waitFor(orgsBack(t, approved), 15_000, 'the approved orgs/ back');
      writeFileSync(join(t.base, 'grant.toml'), 'name = "grant"\nmembers = ["agent"]\n');
      if (who === 'agent') execFileSync('chown', [`${a.uid}:${a.gid}`, join(t.base, 'grant.toml')]);
      run(`mv '${join(t.base, 'grant.toml')}' '${t.p('orgs/grant.toml')}'`);
      const took = await msUntil(() => !existsSync(t.p('orgs/grant.toml')), 2_000, 'the moved-in file removed');
      process.stderr.write(`# orgs/ made again by the ${who}, move-in removed after ${took.toFixed(0)} ms\n`);
      // And a rename inside orgs/ (a name that matches nothing made to match).
      run(`cd '${t.root}' && echo 'members = ["agent"]' > orgs/x.part && mv orgs/x.part orgs/grant2.toml`);
      await msUntil(() => !existsSync(t.p('orgs/grant2.toml')), 2_000, 'the renamed file removed');
    });
  }

  it('orgs/ exchanged for a new directory in one step (no moment without orgs/), then a file moved in: removed within a second', async () => {
    const { t, a } = agentRoot();
    await world.daemon(t);
    for (let round = 0; round < 3; round++) {
      // The same mode, owner and content as the approved orgs/: only the directory itself is another.
      asAgent(a, `cd '${t.root}' && rm -rf ../new${round} && mkdir ../new${round} && chmod --reference=orgs ../new${round} && cp -p orgs/*.toml ../new${round}/ && ${EXCHANGE} ../new${round} orgs`);
      // Whatever warden makes of the new directory, orgs/ is a directory with the approved files.
      await waitFor(() => { try { return lstatSync(t.p('orgs')).isDirectory() && cli(t, ['verify']).code === 0; } catch { return false; } }, 15_000, 'orgs/ approved again');
      const f = join(t.base, `grant${round}.toml`);
      writeFileSync(f, 'members = ["agent"]\n');
      execFileSync('chown', [`${a.uid}:${a.gid}`, f]);
      asAgent(a, `mv '${f}' '${t.p(`orgs/grant${round}.toml`)}'`);
      const took = await msUntil(() => !existsSync(t.p(`orgs/grant${round}.toml`)), 2_000, `round ${round}: the moved-in file removed`);
      process.stderr.write(`# orgs/ exchanged, round ${round}: move-in removed after ${took.toFixed(0)} ms\n`);
    }
  });

  it('orgs/ deleted and put back by warden\'s own repair, then a file moved in: removed within a second', async () => {
    const { t, a } = agentRoot();
    const approved = readFileSync(t.p('orgs/bookclub.toml'), 'utf8');
    await world.daemon(t);
    for (let round = 0; round < 3; round++) {
      asAgent(a, `cd '${t.root}' && for i in 1 2 3 4 5; do rm -rf orgs 2>/dev/null && break; done; true`);
      await waitFor(orgsBack(t, approved), 15_000, 'the approved orgs/ back');
      const f = join(t.base, `grant${round}.toml`);
      writeFileSync(f, 'members = ["agent"]\n');
      execFileSync('chown', [`${a.uid}:${a.gid}`, f]);
      asAgent(a, `mv '${f}' '${t.p(`orgs/grant${round}.toml`)}'`);
      await msUntil(() => !existsSync(t.p(`orgs/grant${round}.toml`)), 2_000, `round ${round}: the moved-in file removed`);
    }
  });
});

/** Inode numbers the process watches (every inotify descriptor: /proc/PID/fdinfo). */
function watchedInodes(pid: number): Set<number> {
  const out = new Set<number>();
  for (const fd of readdirSync(`/proc/${pid}/fdinfo`)) {
    let s = '';
    try { s = readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'); } catch { continue; }
    for (const m of s.matchAll(/^inotify wd:\w+ ino:(\w+)/gm)) out.add(parseInt(m[1] as string, 16));
  }
  return out;
}

/** How many inotify watches the process holds, over all its inotify descriptors. */
function watchCount(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fdinfo`)) {
    try { n += (readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8').match(/^inotify wd:/gm) ?? []).length; } catch { /* closed meanwhile */ }
  }
  return n;
}

function approvedPaths(t: TestRoot): string[] {
  const idx = readFileSync(t.p('snapshots/baseline/index'));
  return Object.keys(parseBody(idx.subarray(idx.indexOf(0x0a) + 1)).files);
}

describe('inode watches follow restores', () => {
  it('after restores that reuse inode numbers, every approved file\'s inode is watched', async (ctx) => {
    if (!loadInotify()) { ctx.skip('no inotify binding: the inode watches are off'); return; }
    const { t, a } = agentRoot();
    const d = await world.daemon(t);
    const paths = approvedPaths(t);
    const unwatched = () => paths.filter((p) => !watchedInodes(d.proc.pid!).has(lstatSync(t.p(p)).ino));
    await waitFor(() => unwatched().length === 0, 10_000, 'every approved inode watched at start');
    const before = watchCount(d.proc.pid!);
    const f = 'orgs/bookclub.toml';
    const approved = readFileSync(t.p(f), 'utf8');
    // A rename over the file frees its inode; the restore's temp file often gets the same number.
    for (let i = 0; i < 6; i++) {
      asAgent(a, `cd '${t.root}' && echo 'members = ["agent"]' > orgs/tmp${i} && mv orgs/tmp${i} ${f}`);
      await waitFor(() => { try { return readFileSync(t.p(f), 'utf8') === approved; } catch { return false; } }, 5_000, 'restored');
    }
    await waitFor(() => unwatched().length === 0, 5_000, 'every approved inode watched after the restores');
    // And no watch was lost on the way (a watch left on a freed inode is gone from the kernel's list).
    await waitFor(() => watchCount(d.proc.pid!) >= before, 5_000, `as many watches as at start (${before})`);
  });

  it('the inode watch binding takes a name that is not UTF-8 by its bytes', (ctx) => {
    const lib = loadInotify();
    if (!lib) { ctx.skip('no inotify binding'); return; }
    // warden never approves such a name (init and apply refuse it), but the binding must not
    // turn one into another name: a path with such a directory on the way, or a name a glob matches.
    const t = world.root();
    const raw = Buffer.concat([Buffer.from('ev'), Buffer.from([0xff, 0xfe]), Buffer.from('.toml')]);
    writeFileSync(Buffer.concat([Buffer.from(t.p('orgs') + '/'), raw]), 'name = "raw"\n');
    const fd = lib.init();
    try {
      assert.ok(lib.addWatch(fd, t.p(`orgs/${nameFromBytes(raw)}`), IN_MODIFY) >= 0, `inotify_add_watch: errno ${lib.errno()}`);
    } finally { closeInotify(fd); }
  });

  it('below a ** glob base, a directory whose name is not UTF-8 moved in with a file in it: the file is removed in real time', async () => {
    const { t, a } = agentRoot(DEEP_TOML, (t) => { mkdirSync(t.p('deep')); writeFileSync(t.p('deep/top.txt'), 'top\n'); });
    await world.daemon(t);
    const dir = Buffer.concat([Buffer.from(t.p('deep') + '/d'), Buffer.from([0xff])]);
    const file = Buffer.concat([dir, Buffer.from('/x/evil.txt')]);
    // The agent's shell: printf makes the byte. Made beside the root and moved in whole (made in
    // place, the guard may move the directory aside before mkdir -p has made its child).
    asAgent(a, `cd '${t.base}' && d="$(printf 'd\\377')" && mkdir -p "$d/x" && echo evil > "$d/x/evil.txt" && mv "$d" '${t.p('deep')}/'`);
    await msUntil(() => !existsSync(file), 3_000, 'the file below the directory whose name is not UTF-8 removed');
  });
});
