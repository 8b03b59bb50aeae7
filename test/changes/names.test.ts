/** Pure credential-name rules (src/credentials/names.ts, mode.ts). */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closest, suggestion, unknownKeyErrors, missingCompanions } from '../../src/credentials/names.js';
import { credentialModeFindings } from '../../src/credentials/mode.js';
import { wardenConfigSchema } from '../../src/config/warden-config.js';

const config = wardenConfigSchema.parse({ credentials: { files: ['config/credentials.toml'], groups: { discord: { keys: ['token', 'application_id'], check: 'discord-token' } } } });
const tables = { discord: { token: 't', application_id: '1' }, mail: { user: 'u', password: 'p' } };

describe('credential names', () => {
  it('did you mean', () => {
    assert.equal(closest('tokn', ['token', 'application_id']), 'token');
    assert.equal(closest('zzzzzz', ['token']), null);
    assert.match(unknownKeyErrors(tables, config, [{ group: 'discord', key: 'tokn' }], false)[0] ?? '', /did you mean discord\.token\?/);
    assert.deepEqual(unknownKeyErrors(tables, config, [{ group: 'discord', key: 'token' }], false), []);
    assert.deepEqual(unknownKeyErrors(tables, config, [{ group: 'slack', key: 'token' }], true), []);
  });
  it('a refusal never suggests the refused command', () => {
    assert.equal(suggestion(['cred rotate discord'], 'cred rotate discord'), '');
    assert.match(suggestion(['cred rotate mail', 'cred set mail.user mail.password'], 'cred set  mail.user mail.password'), /^; run 'warden cred rotate mail'$/);
  });
  it('units without a check must be named whole; checked units are judged later', () => {
    assert.deepEqual(missingCompanions(tables, config, [{ group: 'discord', key: 'token' }]), []);
    assert.deepEqual(missingCompanions(tables, config, [{ group: 'mail', key: 'password' }]), [{ unit: 'mail', group: 'mail', missing: ['mail.user'] }]);
  });
  it('credentials mode finding and its fix', () => {
    assert.deepEqual(credentialModeFindings([{ path: 'c.toml', mode: 0o600 }], true), []);
    assert.equal(credentialModeFindings([{ path: 'c.toml', mode: 0o640 }], true)[0]?.fix, 'warden apply c.toml --mode 0600');
    assert.equal(credentialModeFindings([{ path: 'c.toml', mode: 0o604 }], false)[0]?.fix, 'chmod 600 c.toml');
  });
});
