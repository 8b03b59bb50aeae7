/**
 * A root the agent swaps while it has used up the file system's inodes (docs/CONTRACT.md
 * §Threat model: "filling the root's file system first so that a revert has no room"): the
 * move aside fails with ENOSPC. That is a failed repair, retried at each look, not an object
 * that cannot be moved (a mount point: docs/ARCHITECTURE.md, invariant 19): warden must not
 * stop guarding the root, back off for a minute, or advise adopting the agent's directory
 * with `warden rehome --here`. Red-team finding: the agent's grant was served for 63 s after
 * room came back, and the alert advised adopting it.
 */
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, waitFor } from '../helpers/root.js';
import { killOwned, own } from '../helpers/children.js';
import type { Alert } from '../../src/store/alert-types.js';

const APPROVED = '{\n  "permissions": { "allow": ["Read"] }\n}\n';
const GRANTED = '{"permissions":{"allow":["Bash"]}}';
const NOBODY = 65534;
const mounts: string[] = [];
const stops: (() => Promise<void>)[] = [];
afterEach(async () => { for (const s of stops.splice(0)) await s(); await killOwned(); });
after(() => { for (const m of mounts.splice(0)) { spawnSync('umount', [m]); rmSync(m, { recursive: true, force: true }); } });

/** A small tmpfs (few inodes) the test can fill; null when this machine cannot make one. */
function smallFs(): string | null {
  if (process.geteuid?.() !== 0 || !existsSync('/usr/bin/python3')) return null;
  const dir = mkdtempSync(join(tmpdir(), 'warden-enospc-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64m,nr_inodes=400,mode=755', 'tmpfs', dir]);
  if (r.status !== 0) { rmSync(dir, { recursive: true, force: true }); return null; }
  mounts.push(dir);
  return dir;
}

/** As the agent (another user): a Python one-liner, so renameat2 and the inode flood are real syscalls. */
function asAgent(code: string, ...args: string[]): void {
  const r = spawnSync('setpriv', ['--reuid', String(NOBODY), '--regid', String(NOBODY), '--clear-groups', '/usr/bin/python3', '-c', code, ...args], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
}

const EXCHANGE = 'import ctypes,sys\nl=ctypes.CDLL(None,use_errno=True)\nassert l.renameat2(-100,sys.argv[1].encode(),-100,sys.argv[2].encode(),2)==0, ctypes.get_errno()';
const FLOOD = 'import os,sys\nos.mkdir(sys.argv[1])\ni=0\nwhile True:\n  try: open(os.path.join(sys.argv[1],str(i)),"w").close(); i+=1\n  except OSError: break';

interface SmallFsGuard { home: string; claude: string; sel: string[]; cli(args: string[]): { status: number | null; stdout: string; stderr: string } }

/** A claude-code root on a small tmpfs, initialised, its guard running (as root) until the test ends; null: skipped. */
async function guardOnSmallFs(t: { skip(msg: string): void }): Promise<SmallFsGuard | null> {
  const fs = smallFs();
  if (!fs) { t.skip('needs root, /usr/bin/python3 and a tmpfs mount (nr_inodes) to run out of inodes'); return null; }
  const home = join(fs, 'home');
  const claude = join(home, '.claude');
  mkdirSync(join(claude, 'agents'), { recursive: true });
  writeFileSync(join(claude, 'settings.json'), APPROVED);
  for (const p of [home, claude, join(claude, 'agents'), join(claude, 'settings.json')]) chownSync(p, NOBODY, NOBODY);
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: join(fs, 'state'), WARDEN_GUARD_STATE_DIR: join(fs, 'ng'), WARDEN_GUARD_RUNTIME_DIR: join(fs, 'nr'), NO_COLOR: '1', HOME: home };
  for (const k of ['STATE_DIRECTORY', 'NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WARDEN_ROOT', 'XDG_CONFIG_HOME']) delete env[k];
  const sel = ['--profile', 'claude-code', '--home', home];
  const cli = (args: string[]) => { const r = spawnSync(process.execPath, [CLI, ...args, ...sel], { env, encoding: 'utf8', timeout: 60_000 }); return { status: r.status, stdout: r.stdout, stderr: r.stderr }; };
  const init = cli(['init']);
  assert.equal(init.status, 0, init.stderr);
  const proc = own(spawn(process.execPath, [CLI, 'run', '--guard', ...sel], { env, stdio: ['ignore', 'pipe', 'pipe'] }), 'warden run --guard (enospc)');
  let out = '';
  proc.stdout!.on('data', (d) => { out += String(d); });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  stops.push(async () => { if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM'); await exited; });
  await waitFor(() => out.includes('ready\n') || proc.exitCode !== null, 20_000, 'guard ready');
  assert.ok(out.includes('ready\n'));
  return { home, claude, sel, cli };
}

/** The agent exchanges its own directory `fake` (holding a grant) with the root while every inode is used; room comes back after `holdMs`. */
async function swapWithoutRoom(g: SmallFsGuard, fake: string, holdMs: number): Promise<boolean> {
  asAgent(`import os\nos.mkdir(${JSON.stringify(fake)})\nopen(${JSON.stringify(join(fake, 'settings.json'))},"w").write(${JSON.stringify(GRANTED)})`);
  asAgent(FLOOD, join(g.home, 'flood'));
  asAgent(EXCHANGE, g.claude, fake);
  await new Promise((r) => setTimeout(r, holdMs));
  rmSync(join(g.home, 'flood'), { recursive: true, force: true });
  return waitFor(() => readFileSync(join(g.claude, 'settings.json'), 'utf8') === APPROVED, 2_000, 'the root put right once there is room').then(() => true, () => false);
}

function alertsOf(g: SmallFsGuard): Alert[] {
  const r = g.cli(['alerts', '--json']);
  const doc = JSON.parse(r.stdout) as { alerts?: Alert[] } | Alert[];
  return Array.isArray(doc) ? doc : doc.alerts ?? [];
}

describe('a root swapped while the file system has no inodes left', () => {
  it('ENOSPC on the move aside is a failed repair retried at each look: the root is put right as soon as there is room, and no alert advises adopting the agent\'s directory', async (t) => {
    const g = await guardOnSmallFs(t);
    if (!g) return;
    // Six seconds without room: a backoff would have grown to several seconds by then.
    const t0 = Date.now();
    const put = await swapWithoutRoom(g, join(g.home, 'fake'), 6000);
    console.log(`# root put right ${put ? `within ${Date.now() - t0 - 6000} ms` : 'not within 2 s'} after room came back`);
    assert.ok(put, 'the root is put right within 2 s of room coming back');
    const alerts = alertsOf(g);
    assert.ok(alerts.some((a) => a.path === '' || a.path === '.'), `the swap was alerted: ${JSON.stringify(alerts).slice(0, 500)}`);
    for (const a of alerts) assert.doesNotMatch(a.advice ?? '', /rehome --here/, `no alert advises adopting the agent's directory: ${a.advice}`);
  });

  it('a root put right after a failed repair is no longer failing: status lists nothing, and the next failed repair is alerted again', async (t) => {
    const g = await guardOnSmallFs(t);
    if (!g) return;
    assert.ok(await swapWithoutRoom(g, join(g.home, 'fake'), 1500), 'the first swap put right');
    const failing = () => (JSON.parse(g.cli(['status', '--json']).stdout) as { daemon?: { failing?: string[] } }).daemon?.failing;
    // The retry timer of the failure may still be pending for a moment; then nothing is failing.
    await waitFor(() => failing()?.length === 0, 3_000, 'status: nothing failing after the root was put right').catch(() => undefined);
    assert.deepEqual(failing(), [], 'status lists no failing path once the root is right again');
    const failedAlerts = () => alertsOf(g).filter((a) => a.action === 'revert-failed' && (a.path === '' || a.path === '.')).length;
    const before = failedAlerts();
    assert.ok(before >= 1, 'the first failed repair was alerted');
    assert.ok(await swapWithoutRoom(g, join(g.home, 'fake2'), 1500), 'the second swap put right');
    assert.equal(failedAlerts(), before + 1, 'the second failed repair has its own revert-failed alert');
  });
});
