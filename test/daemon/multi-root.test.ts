/**
 * The host of several roots (src/daemon/multi-root.ts) and how `warden run` splits its
 * options into roots (src/cli/run-roots.ts): docs/PROFILES.md, "Several roots in one guard";
 * docs/ARCHITECTURE.md, "Several roots in one process". The real daemon is driven in
 * test/cli/multi-root.test.ts; here the host's own decisions, with a seam for each root's start.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { below, nestedConflict, runRoots } from '../../src/daemon/multi-root.js';
import type { Daemon, RunOptions } from '../../src/daemon/run.js';
import { runRootSets, type OptionToken } from '../../src/cli/run-roots.js';
import { protectedSet } from '../../src/config/protected-set.js';
import { WardenError } from '../../src/common/errors.js';
import { python3Available, startNotifyListener } from '../deploy/notify-listener.js';
import { waitFor } from '../helpers/wait-for.js';

/** A root's daemon that starts at once and records its stop. */
function fakeDaemon(stopped: string[], root: string): Daemon & { selfStop(): void } {
  let resolve!: () => void;
  const done = new Promise<void>((r) => { resolve = r; });
  return {
    guard: null, done, healthy: () => true, statusLine: () => 'guarding 1 files',
    stop: async () => { stopped.push(root); resolve(); return done; },
    selfStop: () => resolve(),
  };
}

const tokens = (args: [string, string][]): OptionToken[] => args.map(([name, value]) => ({ kind: 'option', name, value }));

describe('several roots in one process: the host', () => {
  it('says ready once, after every root started, each in order and tagged with its root', async () => {
    const started: RunOptions[] = [];
    const lines: string[] = [];
    const stopped: string[] = [];
    const host = await runRoots({ roots: ['/a', '/b/c', '/d'], notifier: false, initIfNeeded: false, stdout: (l) => lines.push(l), log: () => {},
      start: async (o) => { started.push(o); assert.deepEqual(lines, [], 'no ready before every root started'); return fakeDaemon(stopped, o.root); } });
    assert.deepEqual(lines, ['ready']);
    assert.deepEqual(started.map((o) => [o.root, o.host?.tag, o.guard]), [['/a', '/a', true], ['/d', '/d', true], ['/b/c', '/b/c', true]], 'outer (shorter) roots first, each one a guard tagged with its root');
    await host.stop();
    assert.deepEqual(stopped, ['/b/c', '/d', '/a'], 'stopped in reverse order of start');
    assert.equal(await host.done, 0);
  });

  it('a root that fails to start stops those already started, and the error names it with the root\'s own exit status', async () => {
    const stopped: string[] = [];
    await assert.rejects(runRoots({ roots: ['/one', '/two', '/three'], notifier: true, initIfNeeded: false, stdout: () => {}, log: () => {},
      start: async (o) => { if (o.root === '/two') throw new WardenError('not initialised: run `warden init`', 78); return fakeDaemon(stopped, o.root); } }),
    (err: unknown) => err instanceof WardenError && err.exitCode === 78 && /^root 2 of 3, \/two, did not start, so this process guards none of the 3 .*not initialised/.test(err.message));
    assert.deepEqual(stopped, ['/one'], 'the root started before is stopped; the one after never starts');
  });

  it('a root that stops on its own stops the others, and the process exits 1', async () => {
    const stopped: string[] = [];
    const ds: ReturnType<typeof fakeDaemon>[] = [];
    const logs: string[] = [];
    const host = await runRoots({ roots: ['/x', '/yy'], notifier: false, initIfNeeded: false, stdout: () => {}, log: (l) => logs.push(l),
      start: async (o) => { const d = fakeDaemon(stopped, o.root); ds.push(d); return d; } });
    ds[0]!.selfStop();
    assert.equal(await host.done, 1);
    assert.deepEqual(stopped, ['/yy', '/x']);
    assert.ok(logs.some((l) => l.includes('/x: this root\'s guard stopped on its own')), logs.join('\n'));
  });

  it('systemd hears READY=1 once, a status line naming each root, and WATCHDOG=1 only while every root is healthy', async (t) => {
    if (!python3Available()) { t.skip('python3 is needed for the stand-in datagram listener'); return; }
    const l = await startNotifyListener();
    const saved = { NOTIFY_SOCKET: process.env.NOTIFY_SOCKET, WATCHDOG_USEC: process.env.WATCHDOG_USEC, WATCHDOG_PID: process.env.WATCHDOG_PID };
    Object.assign(process.env, { NOTIFY_SOCKET: l.socketPath, WATCHDOG_USEC: '200000' });
    delete process.env.WATCHDOG_PID;
    let bHealthy = true;
    let host: Awaited<ReturnType<typeof runRoots>> | null = null;
    try {
      const stopped: string[] = [];
      host = await runRoots({ roots: ['/a', '/b'], notifier: false, initIfNeeded: false, stdout: () => {}, log: () => {},
        start: async (o) => ({ ...fakeDaemon(stopped, o.root), healthy: () => (o.root === '/b' ? bHealthy : true) }) });
      await l.waitFor((m) => m.includes('STATUS=/a: guarding 1 files; /b: guarding 1 files'), 5000);
      const pings = () => l.messages.filter((m) => m.includes('WATCHDOG=1')).length;
      await waitFor(() => pings() >= 2, 5000, 'pings while both roots are healthy');
      bHealthy = false;
      await new Promise((r) => setTimeout(r, 300)); // a ping already on its way may still land
      const before = pings();
      await new Promise((r) => setTimeout(r, 700)); // three watchdog intervals
      assert.equal(pings(), before, 'no WATCHDOG=1 while one root is unhealthy');
      bHealthy = true;
      await waitFor(() => pings() > before, 5000, 'pings again once every root is healthy');
      await host.stop();
      assert.equal(l.messages.filter((m) => m.includes('READY=1')).length, 1, 'READY=1 once');
    } finally {
      await host?.stop(); // its watchdog timer would keep this file alive after a failed assertion
      for (const [k, v] of Object.entries(saved)) { if (v === undefined) delete process.env[k]; else process.env[k] = v; }
      await l.close();
    }
  });

  it('a root inside another is refused when the outer guard would act on what it holds', () => {
    const example = protectedSet({ protect: [{ path: 'config/*.toml' }, { path: 'deep/**' }], credentials: { files: [] } });
    const covers = (paths: string[]) => ({ isProtectedDir: (r: string) => example.isProtectedDir(r), inDeepGlob: (r: string) => example.inDeepGlob(r), kindOf: (r: string) => example.kindOf(r), paths });
    assert.equal(below('/r', '/r/sub/x'), 'sub/x');
    assert.equal(below('/r', '/rx'), null, 'a sibling with a common prefix is not inside');
    assert.match(nestedConflict(covers([]), 'config') ?? '', /protects a directory/);
    assert.match(nestedConflict(covers([]), 'deep/a') ?? '', /glob/);
    assert.match(nestedConflict(covers([]), 'snapshots/x') ?? '', /store/);
    assert.match(nestedConflict(covers(['sub/a.toml']), 'sub') ?? '', /guards sub\/a\.toml/);
    assert.equal(nestedConflict(covers(['config/a.toml']), 'projects/app'), null, 'a root beside what the outer one protects is fine');
  });
});

describe('warden run: the roots of its options', () => {
  it('one root: the options as a command alone gets them', () => {
    assert.deepEqual(runRootSets({ profile: ['codex'], project: ['/p'], guard: true }, []), [{ profile: 'codex', project: '/p', guard: true }]);
    assert.deepEqual(runRootSets({ root: ['/r'] }, []), [{ root: '/r' }]);
  });

  it('several: each --root and --profile is a root, a --project belongs to the --profile before it, --home to every profile', () => {
    const values = { root: ['/r'], profile: ['claude-code', 'claude-code', 'codex'], project: ['/app'], home: ['/h'], guard: true };
    const t = tokens([['root', '/r'], ['profile', 'claude-code'], ['profile', 'claude-code'], ['project', '/app'], ['profile', 'codex'], ['home', '/h']]);
    assert.deepEqual(runRootSets(values, t), [
      { root: '/r', guard: true },
      { profile: 'claude-code', home: '/h', guard: true },
      { profile: 'claude-code', home: '/h', project: '/app', guard: true },
      { profile: 'codex', home: '/h', guard: true },
    ]);
  });

  it('refuses a --project after a --root, two --project for one --profile, and --home twice', () => {
    assert.throws(() => runRootSets({ root: ['/r', '/s'], project: ['/p'] }, tokens([['root', '/r'], ['project', '/p'], ['root', '/s']])), /--project \/p goes right after the --profile NAME/);
    assert.throws(() => runRootSets({ profile: ['a', 'b'], project: ['/p', '/q'] }, tokens([['profile', 'a'], ['project', '/p'], ['project', '/q'], ['profile', 'b']])), /goes right after/);
    assert.throws(() => runRootSets({ profile: ['a', 'b'], home: ['/h', '/i'] }, []), /--home is given once/);
  });
});
