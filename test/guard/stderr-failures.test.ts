/**
 * The real daemon is never killed by its own output: stderr to a closed pipe (EPIPE) or to a
 * full file system (ENOSPC), and it still reverts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { CLI, protectedPicture, readAlertsOf, waitFor, type TestRoot } from '../helpers/root.js';
import { own } from '../helpers/children.js';
import { cleanups, fresh } from '../helpers/fresh-guard.js';

const ORG = 'orgs/bookclub.toml';
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

describe('never killed by its own output', () => {
  async function stillReverts(t: TestRoot, proc: ReturnType<typeof spawn>): Promise<void> {
    const approved = protectedPicture(t);
    for (let i = 0; i < 5; i++) {
      writeFileSync(t.p(ORG), `members = ["out-${i}"]\n`);
      writeFileSync(t.p(`orgs/new-${i}.toml`), 'members = []\n');
      await waitFor(() => same(protectedPicture(t), approved), 10_000, `revert ${i}`);
      assert.equal(proc.exitCode, null, 'the guard is still running');
    }
    await waitFor(() => readAlertsOf(t).filter((a) => a.path.startsWith('orgs/new-')).length === 5, 10_000, 'every revert recorded');
    assert.equal(proc.exitCode, null, 'the guard is still running');
  }

  function spawnGuard(t: TestRoot, stderr: 'pipe' | number): ReturnType<typeof spawn> {
    const proc = own(spawn(process.execPath, [CLI, 'run', '--guard', '--root', t.root], { env: t.env, stdio: ['ignore', 'pipe', stderr] }), 'a child of this test');
    cleanups.push(() => { if (proc.exitCode === null) proc.kill('SIGKILL'); });
    return proc;
  }

  it('stderr to a closed pipe (EPIPE)', async () => {
    const t = fresh();
    const proc = spawnGuard(t, 'pipe');
    let out = '';
    proc.stdout!.on('data', (b) => { out += String(b); });
    proc.stderr!.destroy(); // the reader goes away: every write to stderr is EPIPE
    await waitFor(() => out.includes('ready\n'), 20_000, 'ready');
    await stillReverts(t, proc);
  });

  it('stderr to a full file system (ENOSPC)', async () => {
    const t = fresh();
    const full = openSync('/dev/full', 'w');
    const proc = spawnGuard(t, full);
    closeSync(full);
    let out = '';
    proc.stdout!.on('data', (b) => { out += String(b); });
    await waitFor(() => out.includes('ready\n'), 20_000, 'ready');
    await stillReverts(t, proc);
  });
});
