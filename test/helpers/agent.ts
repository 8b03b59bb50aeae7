/**
 * The agent of deployment A, for tests: a second user who owns the root and its parent
 * (DEPLOY.md). Files the guard protects are approved as the agent's, as in the deployment;
 * warden's own store (ROOT/snapshots) stays the guard's.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, readFileSync } from 'node:fs';
import { cli, type Daemon, type TestRoot, type testWorld } from './root.js';

export interface Agent { name: string; uid: number; gid: number; sh(script: string): { code: number; out: string }; remove(): void }

export function makeAgent(prefix = 'wtag'): Agent {
  const name = `${prefix}${Math.random().toString(36).slice(2, 8)}`;
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
  return {
    name, uid, gid,
    sh(script) {
      const r = spawnSync('sh', ['-c', script], { uid, gid, encoding: 'utf8', timeout: 60_000 });
      return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
    },
    remove() { spawnSync('userdel', [name]); },
  };
}

/** Hand the root, its parent and the protected trees to the agent (before `warden init`). */
export function giveToAgent(t: TestRoot, a: Agent): void {
  chmodSync(t.base, 0o755);
  execFileSync('chown', [`${a.uid}:${a.gid}`, t.base, t.root]);
  execFileSync('chown', ['-R', `${a.uid}:${a.gid}`, t.p('config'), t.p('orgs'), t.p('blocks')]);
}

/**
 * A root given to a new agent (`prefix`, kept in `agents` for removal), initialised, with the
 * guard running as root: the starting point of every attack on what stands at a path.
 */
export async function guardedForAgent(world: ReturnType<typeof testWorld>, agents: Agent[], prefix: string): Promise<{ t: TestRoot; a: Agent; d: Daemon; approved: string }> {
  const t = world.root();
  const a = makeAgent(prefix);
  agents.push(a);
  giveToAgent(t, a);
  const init = cli(t, ['init']);
  if (init.code !== 0) throw new Error(`warden init failed: ${init.stderr}`);
  const d = await world.daemon(t);
  return { t, a, d, approved: readFileSync(t.p('orgs/bookclub.toml'), 'utf8') };
}
