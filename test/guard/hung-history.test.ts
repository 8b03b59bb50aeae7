/**
 * A hung history (a FIFO planted as .git/HEAD): the change finishes, the failed history is
 * reported, no git process is left, and reverts go on.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, cli, waitFor, type TestRoot } from '../helpers/root.js';
import { own } from '../helpers/children.js';
import { cleanups, daemon, fresh } from '../helpers/fresh-guard.js';

const ORG = 'orgs/bookclub.toml';

describe('robust edges: a hung history', () => {
  /** git processes whose working directory is this history (a stuck child would be one). */
  function gitsIn(t: TestRoot): number[] {
    const out: number[] = [];
    for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
      try { if (readlinkSync(`/proc/${pid}/cwd`).startsWith(t.p('snapshots/history'))) out.push(Number(pid)); } catch { /* gone or not ours */ }
    }
    return out;
  }

  it('a FIFO planted as .git/HEAD: the change finishes, the failed history is reported, no git is left, reverts go on', async () => {
    const t = fresh();
    const env = { WARDEN_GIT_TIMEOUT_MS: '3000' };
    await daemon(t, env);
    const head = t.p('snapshots/history/.git/HEAD');
    rmSync(head);
    execFileSync('mkfifo', [head]);
    const src = join(t.base, 'org.toml');
    writeFileSync(src, readFileSync(t.p(ORG), 'utf8').replace(/hourly_cap = \d+/, 'hourly_cap = 33'));
    const started = Date.now();
    const apply = own(spawn(process.execPath, [CLI, 'apply', ORG, '--from', src, '--root', t.root], { env: { ...t.env, ...env }, stdio: 'ignore' }), 'a child of this test');
    cleanups.push(() => { if (apply.exitCode === null) apply.kill('SIGKILL'); });
    const exited = new Promise<number | null>((res) => apply.once('exit', (c) => res(c)));
    await waitFor(() => readFileSync(t.p(ORG), 'utf8').includes('hourly_cap = 33'), 10_000, 'the change is applied');
    // While git hangs, a direct edit is still reverted at once.
    const cond = readFileSync(t.p('config/conditions.toml'), 'utf8');
    writeFileSync(t.p('config/conditions.toml'), '# during a hung history\n');
    await waitFor(() => readFileSync(t.p('config/conditions.toml'), 'utf8') === cond, 5_000, 'revert during the hung history');
    const code = await exited;
    assert.equal(code, 0, 'the change itself succeeded');
    assert.ok(Date.now() - started < 30_000, 'the change did not wait for the hung git');
    await waitFor(() => gitsIn(t).length === 0, 10_000, 'no git child left behind');
    assert.equal(cli(t, ['verify']).code, 0);
  });
});
