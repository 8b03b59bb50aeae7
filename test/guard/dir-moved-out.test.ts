/**
 * Red team: the startup pass acts on one directory's findings through
 * the descriptor it opened for that directory. The agent moves the directory out of the
 * root while the guard is reverting its files: the descriptor follows the directory, so
 * without a check every later revert landed outside the root (3,998 of 4,000 files in the
 * reproduction). Now each act first checks that the held directory is still the one at
 * its path in the root; when it is not, the rest are checked afresh from the root.
 */
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, testWorld, waitFor } from '../helpers/root.js';
import { cleanupAll, killOwned, own } from '../helpers/children.js';

const world = testWorld();
const users: string[] = [];
// Every step runs whatever the others did: a root that will not go must not skip a userdel.
after(() => cleanupAll([() => killOwned(), () => world.cleanup(), ...users.map((u) => () => { const r = spawnSync('userdel', [u], { encoding: 'utf8' }); if (r.status !== 0) throw new Error(`userdel ${u}: ${r.stderr}`); })]));

const N = 2000;

it('a directory moved out of the root during the startup pass gets no more of our writes', async () => {
  const t = world.root();
  const dir = t.p('blocks/conditional');
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < N; i++) writeFileSync(join(dir, `b${i}.md`), `block ${i}\n`);
  // The agent: another user who owns the root and a place of its own outside it.
  const name = `wtmv${Math.random().toString(36).slice(2, 8)}`;
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', name]);
  users.push(name);
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
  const away = join(t.base, 'agent');
  mkdirSync(away);
  chmodSync(t.base, 0o755);
  // Its files, not warden's store (snapshots/ stays warden's own, as the store check demands).
  execFileSync('chown', [`${uid}:${gid}`, t.root]);
  execFileSync('chown', ['-R', `${uid}:${gid}`, t.p('blocks'), away]);
  // Approved as the agent's: the guard must not put the owner back before the move.
  const init = cli(t, ['init']);
  assert.equal(init.code, 0, init.stderr);
  // Edited while the guard is stopped; moved away the moment the first revert shows.
  for (let i = 0; i < N; i++) writeFileSync(join(dir, `b${i}.md`), `block ${i}\nevil\n`);
  const mover = own(spawn('sh', ['-c', `while grep -q evil "${dir}/b0.md"; do :; done; mv "${dir}" "${away}/cond" && grep -L evil "${away}"/cond/b*.md | wc -l > "${away}/at-move"`], { uid, gid, stdio: 'ignore' }), 'the agent moving the directory');
  const moved = new Promise<number | null>((res) => mover.once('exit', res));
  // The startup pass over 2,000 edited files: on a loaded machine (load 15 on 2 cores) it took over 20 s.
  const d = await world.daemon(t, undefined, undefined, 90_000);
  assert.equal(await waitFor(async () => (mover.exitCode !== null || mover.signalCode !== null) ? { code: await moved } : null, 60_000, 'the agent to move the directory').then((r) => r.code), 0, 'the agent moved the directory');
  const atMove = Number(readFileSync(join(away, 'at-move'), 'utf8').trim());
  // The guard puts the directory back in the root with every approved file.
  const ours = (d0: string) => readdirSync(d0).filter((f) => /^b\d+\.md$/.test(f));
  await waitFor(() => existsSync(dir) && ours(dir).length === N && ours(dir).every((f) => !readFileSync(join(dir, f), 'utf8').includes('evil')), 60_000, 'the root restored');
  const outside = ours(join(away, 'cond')).filter((f) => !readFileSync(join(away, 'cond', f), 'utf8').includes('evil')).length;
  assert.ok(outside <= atMove, `the guard wrote ${outside - atMove} file(s) into the directory after it left the root`);
  assert.equal(d.proc.exitCode, null, 'the guard runs on');
});
