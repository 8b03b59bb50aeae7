/**
 * The agent fills the root's file system with its own files, then edits a
 * protected file in place (same size: no block is needed). The restore's temp file could not
 * be written (ENOSPC), so the edit stayed live as long as the disk stayed full. Now the
 * approved bytes go over the rejected file's own blocks (fsx/beneath.ts rewriteInPlaceAt),
 * the alert names the full disk, and the rejected bytes reach quarantine once there is room.
 *
 * A 64 MiB loop-mounted ext4 made with `-m 0`, and the guard run without CAP_SYS_RESOURCE
 * (setpriv), as the deployment's guard is: neither the root-reserved blocks nor ext4's own
 * reserve pool are open to it (with that capability, the plain restore still finds room).
 * The store is the deployment's, outside the root on another file system (WARDEN_GUARD_STATE_DIR).
 */
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { CLI, cli, makeRoot, readAlertsFile, waitFor, type TestRoot } from '../helpers/root.js';
import type { Alert } from '../../src/store/alert-types.js';
import { giveToAgent, makeAgent, type Agent } from '../helpers/agent.js';

const ORG = 'orgs/bookclub.toml';
const BUDGET_MS = 2_000; // 1 s in the spec; slack for a loaded 2-core test machine

const work = mkdtempSync(join(tmpdir(), 'warden-fulldisk-'));
const img = join(work, 'img');
const mnt = join(work, 'mnt');
const state = join(work, 'state');
const env = { WARDEN_GUARD_STATE_DIR: state };
function alerts(): Alert[] {
  const stores = join(state, 'stores');
  const id = readdirSync(stores)[0] ?? '';
  return readAlertsFile(join(stores, id, 'alerts.jsonl'));
}
let mounted = false;
let t: TestRoot | null = null;
let d: ChildProcess | null = null;
let a: Agent | null = null;
after(async () => {
  if (d && d.exitCode === null) { d.kill('SIGTERM'); await new Promise((r) => d!.once('exit', r)); }
  t?.cleanup();
  if (mounted) spawnSync('umount', [mnt]);
  a?.remove();
  rmSync(work, { recursive: true, force: true });
});

it('a same-size edit on a full file system is reverted within the budget; the alert says the disk is full', async () => {
  chmodSync(work, 0o755);
  execFileSync('truncate', ['-s', '64M', img]);
  execFileSync('mkfs.ext4', ['-q', '-m', '0', img]);
  mkdirSync(mnt);
  execFileSync('mount', ['-o', 'loop', img, mnt]);
  mounted = true;
  const base = join(mnt, 'w');
  mkdirSync(base);
  t = makeRoot({ base });
  a = makeAgent('wtfd');
  giveToAgent(t, a);
  mkdirSync(state, { mode: 0o700 });
  const init = cli(t, ['init'], { env });
  assert.equal(init.code, 0, init.stderr);
  const g = spawn('setpriv', ['--bounding-set=-sys_resource', '--inh-caps=-sys_resource', process.execPath, CLI, 'run', '--guard', '--root', t.root], { env: { ...t.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  d = g;
  let out = '';
  g.stdout!.on('data', (b) => { out += String(b); });
  g.stderr!.on('data', () => { /* drained */ });
  await waitFor(() => out.includes('ready\n') || g.exitCode !== null, 20_000, 'the guard ready');
  assert.equal(g.exitCode, null, 'the guard runs');
  const approved = readFileSync(t.p(ORG), 'utf8');
  // The agent's own files fill every block (big ones, then small ones for the last blocks).
  const fill = a.sh(`cd ${base} && mkdir fill && (dd if=/dev/zero of=fill/big bs=1M 2>/dev/null; i=0; while head -c 4096 /dev/zero > fill/s$i 2>/dev/null; do i=$((i+1)); done; while head -c 1 /dev/zero > fill/s$i 2>/dev/null; do i=$((i+1)); done; sync; while head -c 1 /dev/zero > fill/s$i 2>/dev/null; do i=$((i+1)); done; true)`);
  assert.equal(fill.code, 0, fill.out);
  const df = execFileSync('df', ['-B1', '--output=avail', mnt], { encoding: 'utf8' }).trim().split('\n').pop()?.trim();
  assert.ok(Number(df) < 8192, `the file system is full (${df} B free)`);
  // Same size, in place: overwrite one byte of the approved file.
  const i = Buffer.from(approved).indexOf('='); // a byte offset (the fixture has non-ASCII text)
  const edit = a.sh(`python3 -c "
f = open('${t.p(ORG)}', 'r+b'); f.seek(${i}); f.write(b'#'); f.close()"`);
  const t0 = Date.now();
  assert.equal(edit.code, 0, edit.out);
  await waitFor(() => readFileSync(t!.p(ORG), 'utf8') === approved, BUDGET_MS, 'reverted on the full disk');
  process.stdout.write(`# reverted on a full disk ${Date.now() - t0} ms after the edit\n`);
  const alert = await waitFor(() => alerts().find((x) => x.path === ORG && x.action === 'reverted'), 5_000, 'the alert');
  assert.match(alert.detail ?? '', /file system is full \(ENOSPC\)/);
  assert.ok(alert.quarantine, 'the alert names where the rejected bytes go');
  // The rejected bytes are in quarantine, whole (the store's file system has room).
  const q = join(state, 'stores', readdirSync(join(state, 'stores'))[0] ?? '', 'quarantine', alert.id);
  await waitFor(() => existsSync(q), 5_000, 'the rejected bytes in quarantine');
  const rejected = Buffer.from(approved);
  rejected[i] = '#'.charCodeAt(0);
  assert.deepEqual(readFileSync(q), rejected);
  assert.equal(cli(t, ['verify'], { env }).code, 0);
});
