/**
 * A command other than `warden run` works on one root (docs/PROFILES.md, "Several roots in
 * one guard"): `--profile`, `--root`, `--home` or `--project` given twice with two values is
 * refused with exit 2, never settled silently by the last one.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI } from '../helpers/root.js';

it('status, alerts and verify refuse a root-selecting option given twice, naming both values', () => {
  const home = mkdtempSync(join(tmpdir(), 'warden-one-root-'));
  try {
    const env = { ...process.env, HOME: home, XDG_STATE_HOME: join(home, 'state'), NO_COLOR: '1' };
    for (const args of [['status', '--profile', 'codex', '--profile', 'claude-code'], ['alerts', '--root', '/a', '--root', '/b'], ['verify', '--profile', 'codex', '--home', '/x', '--home', '/y']]) {
      const r = spawnSync(process.execPath, [CLI, ...args], { env, encoding: 'utf8', timeout: 30_000 });
      assert.equal(r.status, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /is given twice \(.+, .+\): 'warden \w+' works on one root; only 'warden run' takes several/, r.stderr);
    }
  } finally { rmSync(home, { recursive: true, force: true }); }
});
