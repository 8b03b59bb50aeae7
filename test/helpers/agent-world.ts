/**
 * Deployment A, emulated for attack tests: the guard runs as the warden account (this
 * process's user) with its store in its own state directory, outside the root; the agent
 * is a second user (created here) who owns the root and the root's parent, as
 * /home/agent/agent-root is in DEPLOY.md. `loop: true` puts the root's parent on a small
 * loop-mounted ext4, so root and store are on different file systems (the usual case when
 * /home is its own partition).
 *
 * Everything made here is undone by `cleanup()`: daemons stopped, the mount and the loop
 * device released, the user removed, the directories deleted.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, makeRoot, startDaemon, TEST_WARDEN_TOML, type CliResult, type Daemon, type TestRoot } from './root.js';

export interface AgentWorld {
  t: TestRoot;
  uid: number;
  gid: number;
  /** The guard's state directory (the store lives in stores/<root-id>/ below it). */
  guardState: string;
  /** The store directory of this root. */
  store: string;
  /** The environment of a command run as the warden account. */
  asWarden: NodeJS.ProcessEnv;
  /** A warden command as the warden account. */
  cli(args: string[], input?: string | Buffer): CliResult;
  /** The guard under its unit's directories (`env`: more of its environment, a test seam). */
  guard(env?: NodeJS.ProcessEnv): Promise<Daemon>;
  /** A python3 snippet run as the agent (sys.argv[1:] = args). */
  agent(script: string, args?: string[]): { code: number; out: string };
  cleanup(): Promise<void>;
}

let serial = 0;

export function agentWorld(opts: { loop?: boolean; wardenToml?: string; init?: boolean } = {}): AgentWorld {
  const undo: (() => void)[] = [];
  const daemons: Daemon[] = [];
  const name = `wa21${process.pid % 10000}${serial++}`;
  try {
    execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
    undo.push(() => { spawnSync('userdel', [name]); });
    const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
    const outer = mkdtempSync(join(tmpdir(), 'warden-agent-'));
    chmodSync(outer, 0o755); // the agent must reach its home
    undo.push(() => rmSync(outer, { recursive: true, force: true }));
    // The root's parent: the agent's home (a file system of its own with `loop`).
    const home = join(outer, 'home');
    mkdirSync(home);
    if (opts.loop) {
      const img = join(outer, 'home.img');
      execFileSync('truncate', ['-s', '64M', img]);
      execFileSync('mkfs.ext4', ['-q', '-F', img]);
      execFileSync('mount', ['-o', 'loop', img, home]);
      undo.push(() => { spawnSync('umount', ['-l', home]); });
      rmSync(join(home, 'lost+found'), { recursive: true, force: true });
    }
    const t = makeRoot({ base: home, wardenToml: opts.wardenToml ?? TEST_WARDEN_TOML });
    // makeRoot's own scratch directories stay the test's; the agent owns its home and the root below it.
    const own = (p: string): void => {
      const st = lstatSync(p);
      chownSync(p, uid, gid);
      if (st.isDirectory()) for (const n of readdirSync(p)) own(join(p, n));
    };
    own(home);
    const lib = join(outer, 'lib');
    const run = join(outer, 'run');
    mkdirSync(lib, { mode: 0o755 });
    mkdirSync(run, { mode: 0o755 });
    const guardState = join(lib, 'warden-guard');
    const guardRun = join(run, 'warden-guard');
    mkdirSync(guardState, { mode: 0o700 });
    mkdirSync(guardRun, { mode: 0o700 });
    const asWarden: NodeJS.ProcessEnv = { WARDEN_GUARD_STATE_DIR: guardState, WARDEN_GUARD_RUNTIME_DIR: guardRun };
    const w: AgentWorld = {
      t, uid, gid, guardState, store: '', asWarden,
      cli: (args, input) => cli(t, args, { env: asWarden, ...(input !== undefined ? { input } : {}) }),
      async guard(env = {}) {
        const d = await startDaemon(t, ['--guard'], { ...asWarden, STATE_DIRECTORY: guardState, RUNTIME_DIRECTORY: guardRun, ...env });
        daemons.push(d);
        return d;
      },
      agent(script, args = []) {
        const r = spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '/usr/bin/python3', '-c', script, ...args], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' }, timeout: 60_000 });
        return { code: r.status ?? -1, out: (r.stdout ?? '') + (r.stderr ?? '') };
      },
      async cleanup() {
        for (const d of daemons.splice(0)) await d.stop();
        for (const u of undo.splice(0).reverse()) { try { u(); } catch { /* best effort, the rest still runs */ } }
      },
    };
    if (opts.init !== false) {
      const r = w.cli(['init', '--json']);
      if (r.code !== 0) throw new Error(`warden init exited ${r.code}: ${r.stderr}`);
      w.store = (JSON.parse(r.stdout) as { store: string }).store;
    }
    return w;
  } catch (err) {
    for (const u of undo.reverse()) { try { u(); } catch { /* best effort */ } }
    throw err;
  }
}
