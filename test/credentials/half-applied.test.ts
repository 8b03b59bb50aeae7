/**
 * Which credential changes are half-applied (src/credentials/rules.ts): a group switched
 * whole, a token reset, a token for another application, a failing check, and fingerprints
 * that carry no value. Pure: in `npm run mutate -- guard` and `-- credentials` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { diffCredentials, discordTokenHolds, fingerprint, credentialFingerprintText } from '../../src/credentials/rules.js';
import { wardenConfigSchema } from '../../src/config/warden-config.js';

describe('credential rules', () => {
  const config = wardenConfigSchema.parse({ credentials: { files: ['config/credentials.toml'], groups: { discord: { keys: ['token', 'application_id'], check: 'discord-token' } } } });
  const tok = (app: string, rest = 'x.y') => `${Buffer.from(app).toString('base64')}.${rest}`;
  const text = (t: string, app: string, key = 'k1') => `[discord]\ntoken = "${t}"\napplication_id = "${app}"\n\n[anthropic]\napi_key = "${key}"\n`;
  const OLD = text(tok('111'), '111');

  it('discord-token check', () => {
    assert.equal(discordTokenHolds({ token: tok('42'), application_id: '42' }), true);
    assert.equal(discordTokenHolds({ token: tok('42'), application_id: '43' }), false);
    assert.equal(discordTokenHolds({ application_id: '43' }), false);
  });
  it('the whole group switched is not half-applied', () => {
    const d = diffCredentials(OLD, text(tok('222'), '222'), config, 'c');
    assert.equal(d.halfApplied, false);
    assert.deepEqual(d.changes.map((c) => c.key), ['application_id', 'token']);
  });
  it('a token reset (new token, same application_id) is consistent: the check holds (docs/CONTRACT.md §Credentials)', () => {
    const d = diffCredentials(OLD, text(tok('111', 'reset.z'), '111'), config, 'c');
    assert.equal(d.halfApplied, false);
    assert.deepEqual(d.changes.map((c) => c.key), ['token']);
  });
  it('a new token for another application is half-applied, naming the key that must come along', () => {
    const d = diffCredentials(OLD, text(tok('222'), '111'), config, 'c');
    assert.equal(d.halfApplied, true);
    assert.deepEqual(d.halfGroups, []);
    assert.deepEqual(d.failedChecks, [{ group: 'discord', check: 'discord-token', unchanged: ['application_id'] }]);
  });
  it('a group without a check changes whole; a confirmed key counts as changed', () => {
    const two = (a: string, b: string) => `[mail]\nuser = "${a}"\npassword = "${b}"\n`;
    assert.deepEqual(diffCredentials(two('u', 'p'), two('u', 'p2'), config, 'c').halfGroups, [{ group: 'mail', changed: ['password'], unchanged: ['user'] }]);
    assert.equal(diffCredentials(two('u', 'p'), two('u', 'p2'), config, 'c', new Set(['mail.user'])).halfApplied, false);
  });
  it('a failing check is half-applied even when both keys changed', () => {
    const d = diffCredentials(OLD, text(tok('333'), '222'), config, 'c');
    assert.equal(d.halfApplied, true);
    assert.deepEqual(d.failedChecks, [{ group: 'discord', check: 'discord-token', unchanged: [] }]);
  });
  it('a single-key group changes alone', () => {
    assert.equal(diffCredentials(OLD, text(tok('111'), '111', 'k2'), config, 'c').halfApplied, false);
  });
  it('unparsable is half-applied, and no error text carries a value', () => {
    const d = diffCredentials(OLD, '[discord]\ntoken = "SECRET-VALUE', config, 'c');
    assert.equal(d.halfApplied, true);
    assert.ok(!JSON.stringify(d).includes('SECRET-VALUE'));
  });
  it('fingerprints are 12 hex digits and the mirror text has no value', () => {
    assert.match(fingerprint('abc'), /^[0-9a-f]{12}$/);
    const mirror = credentialFingerprintText(Buffer.from(OLD));
    assert.ok(!mirror.includes(tok('111')) && mirror.includes(`discord.token = ${fingerprint(tok('111'))}`));
  });
});
