/**
 * The credential mode finding (src/credentials/mode.ts): any group or other bit on a
 * credential file is a finding, with the fix that fits the root. Pure: in `npm run mutate --
 * credentials` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { credentialModeFindings } from '../../src/credentials/mode.js';

describe('credential mode finding', () => {
  it('any group or other bit is a finding, with the fix that fits the root', () => {
    for (const mode of [0o600, 0o400, 0o700, 0o100600]) assert.deepEqual(credentialModeFindings([{ path: 'c.toml', mode }], true), [], mode.toString(8));
    for (const mode of [0o601, 0o602, 0o604, 0o610, 0o620, 0o640, 0o666]) assert.equal(credentialModeFindings([{ path: 'c.toml', mode }], false).length, 1, mode.toString(8));
    assert.deepEqual(credentialModeFindings([{ path: 'a.toml', mode: null }, { path: 'b.toml', mode: 0o100644 }], true), [{
      path: 'b.toml', mode: '0644', fix: 'warden apply b.toml --mode 0600',
      message: 'b.toml holds credentials and is readable by others (mode 0644); fix: warden apply b.toml --mode 0600',
    }]);
    assert.deepEqual(credentialModeFindings([{ path: 'b.toml', mode: 0o4604 }], false), [{
      path: 'b.toml', mode: '4604', fix: 'chmod 600 b.toml',
      message: 'b.toml holds credentials and is readable by others (mode 4604); fix: chmod 600 b.toml',
    }]);
    assert.equal(credentialModeFindings([{ path: 'b.toml', mode: 0o44 }], false)[0]?.mode, '0044');
  });
});
