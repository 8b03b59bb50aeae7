/**
 * A root this account may not read (docs/DEPLOY.md, "Who runs which command"): a profile's
 * 0700 directory, read by an account that holds its store but not the guard's capability.
 * `status` and `verify` say so and what to run, with exit 2, instead of an internal error.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readableCli } from '../helpers/readable-copy.js';

const isRoot = process.geteuid?.() === 0;
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0;
const OWNER = 4343;
const OTHER = 4242;

it('status and verify on a root this account cannot list: said, with exit 2, never an internal error', { skip: !isRoot ? 'needs root to play two accounts' : !hasSetpriv ? 'needs setpriv' : false }, () => {
  const top = mkdtempSync(join(tmpdir(), 'warden-unreadable-root-'));
  try {
    const home = join(top, 'h');
    mkdirSync(join(home, '.claude'), { recursive: true });
    writeFileSync(join(home, '.claude', 'settings.json'), '{"permissions":{"allow":["Read"]}}\n');
    chmodSync(top, 0o755);
    for (const p of [home, join(home, '.claude'), join(home, '.claude', 'settings.json')]) chownSync(p, OWNER, OWNER);
    mkdirSync(join(top, 'state'));
    chownSync(join(top, 'state'), OWNER, OWNER);
    const cli = readableCli();
    const run = (args: string[]) => spawnSync('setpriv', [`--reuid=${OWNER}`, `--regid=${OWNER}`, '--clear-groups', process.execPath, cli, ...args, '--profile', 'claude-code', '--home', home],
      { env: { PATH: process.env.PATH, HOME: top, XDG_STATE_HOME: join(top, 'state'), NO_COLOR: '1' }, encoding: 'utf8', timeout: 60_000 });
    const init = run(['init']);
    assert.equal(init.status, 0, init.stderr);
    // The directory now belongs to someone else and is 0700: this account keeps its store, not its sight.
    chownSync(join(home, '.claude'), OTHER, OTHER);
    chmodSync(join(home, '.claude'), 0o700);
    for (const c of ['status', 'verify']) {
      const r = run([c]);
      assert.equal(r.status, 2, `${c}: ${r.stdout}${r.stderr}`);
      assert.doesNotMatch(r.stderr, /internal error/, r.stderr);
      assert.match(r.stderr, /cannot be read by this account \(uid 4343\): its files were not checked/, r.stderr);
    }
  } finally { rmSync(top, { recursive: true, force: true }); }
});
