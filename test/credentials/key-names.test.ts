/**
 * The words of a credential refusal (src/credentials/names.ts): did-you-mean for an unknown
 * key, the companions a key must change with, the suggested command, and never a value.
 * Pure: in `npm run mutate -- credentials` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closest, editDistance, failedCheckMessage, groupKeys, halfAppliedMessage, missingCompanions, suggestion, unknownKeyErrors } from '../../src/credentials/names.js';
import { wardenConfigSchema, type WardenConfig } from '../../src/config/warden-config.js';

const cfg = (groups: Record<string, { keys: string[]; check?: 'discord-token' }> = {}): WardenConfig =>
  wardenConfigSchema.parse({ credentials: { files: ['config/credentials.toml'], groups } });
const DISCORD = cfg({ discord: { keys: ['token', 'application_id'], check: 'discord-token' } });

describe('credential names: did you mean', () => {
  it('edit distance', () => {
    assert.equal(editDistance('', ''), 0);
    assert.equal(editDistance('abc', ''), 3);
    assert.equal(editDistance('', 'abcd'), 4);
    assert.equal(editDistance('token', 'token'), 0);
    assert.equal(editDistance('tokn', 'token'), 1);
    assert.equal(editDistance('token', 'tokne'), 2);
    assert.equal(editDistance('kitten', 'sitting'), 3);
    assert.equal(editDistance('abc', 'xabc'), 1);
    assert.equal(editDistance('abcx', 'abc'), 1);
  });
  it('closest: within two edits and half the name, case-insensitive, never the name itself', () => {
    assert.equal(closest('tokn', ['application_id', 'token']), 'token');
    assert.equal(closest('TOKEN', ['token']), 'token');
    assert.equal(closest('token', ['token']), null);
    assert.equal(closest('toke', ['tok', 'token']), 'tok', 'the first of equal distance wins');
    assert.equal(closest('tokxx', ['token']), 'token', 'two edits');
    assert.equal(closest('txkxx', ['token']), null, 'three edits');
    assert.equal(closest('ab', ['xy']), null, 'two edits but the whole of a two-letter name');
    assert.equal(closest('abc', ['xyc']), 'xyc', 'two edits within half of three letters (rounded up)');
    assert.equal(closest('a', ['b']), 'b');
    assert.equal(closest('x', []), null);
  });

  const tables = { discord: { token: 't', application_id: '1' }, mail: { user: 'u', password: 'p' } };
  it('unknown key: names the group, its keys and the near one', () => {
    assert.deepEqual(unknownKeyErrors(tables, DISCORD, [{ group: 'discord', key: 'tokn' }], false),
      ['discord.tokn is not a key of group discord (its keys: discord.token, discord.application_id); did you mean discord.token?']);
    assert.deepEqual(unknownKeyErrors(tables, DISCORD, [{ group: 'mail', key: 'zzzzzzzz' }], false),
      ["mail.zzzzzzzz is not a key of group mail (its keys: mail.user, mail.password). To add a new key on purpose, run 'warden cred set --new mail.zzzzzzzz'."]);
    assert.deepEqual(unknownKeyErrors(tables, DISCORD, [{ group: 'mail', key: 'zzzzzzzz' }], true), []);
    assert.deepEqual(unknownKeyErrors(tables, DISCORD, [{ group: 'mail', key: 'user' }, { group: 'discord', key: 'application_id' }], false), []);
  });
  it('a configured key absent from the file is still a key; an unknown group names the groups', () => {
    assert.deepEqual(unknownKeyErrors({}, DISCORD, [{ group: 'discord', key: 'token' }], false), []);
    assert.deepEqual(unknownKeyErrors(tables, DISCORD, [{ group: 'mial', key: 'user' }], false),
      ['there is no credential group "mial" (groups: discord, mail); did you mean mail.user?']);
    assert.deepEqual(unknownKeyErrors(tables, DISCORD, [{ group: 'zzzzzz', key: 'k' }], false),
      ["there is no credential group \"zzzzzz\" (groups: discord, mail). To add a new group on purpose, run 'warden cred set --new zzzzzz.k'."]);
    assert.deepEqual(unknownKeyErrors({}, cfg(), [{ group: 'zzzzzz', key: 'k' }], false),
      ["there is no credential group \"zzzzzz\" (groups: none). To add a new group on purpose, run 'warden cred set --new zzzzzz.k'."]);
    assert.deepEqual(unknownKeyErrors({}, cfg(), [{ group: 'zzzzzz', key: 'k' }], true), []);
    assert.equal(unknownKeyErrors(tables, DISCORD, [{ group: 'a', key: 'b' }, { group: 'c', key: 'd' }], false).length, 2, 'one refusal per name');
    // The groups are listed sorted, whether they come from the file or the configuration.
    const zm = { zeta: { k: '1' }, alpha: { k: '2' } };
    assert.deepEqual(unknownKeyErrors(zm, cfg({ mid: { keys: ['k'] } }), [{ group: 'qqqqqq', key: 'k' }], false),
      ["there is no credential group \"qqqqqq\" (groups: alpha, mid, zeta). To add a new group on purpose, run 'warden cred set --new qqqqqq.k'."]);
  });
  it('a name such as __proto__ or toString is data, not a member', () => {
    assert.equal(unknownKeyErrors(tables, DISCORD, [{ group: 'mail', key: 'toString' }], false).length, 1);
    assert.equal(unknownKeyErrors(tables, DISCORD, [{ group: 'constructor', key: 'x' }], false).length, 1);
  });
});

describe('credential names: companions and suggestions', () => {
  const tables = { discord: { token: 't', application_id: '1', extra: 'e' }, mail: { user: 'u', password: 'p', host: 'h' } };
  it('a unit without a check is named whole, once per unit; a checked unit is judged later', () => {
    assert.deepEqual(missingCompanions(tables, DISCORD, [{ group: 'discord', key: 'token' }]), []);
    assert.deepEqual(missingCompanions(tables, DISCORD, [{ group: 'mail', key: 'password' }, { group: 'mail', key: 'user' }]),
      [{ unit: 'mail', group: 'mail', missing: ['mail.host'] }]);
    assert.deepEqual(missingCompanions(tables, DISCORD, [{ group: 'mail', key: 'password' }, { group: 'mail', key: 'user' }, { group: 'mail', key: 'host' }]), []);
    assert.deepEqual(missingCompanions(tables, DISCORD, [{ group: 'discord', key: 'extra' }]), [], 'the other keys of a configured group are a unit of their own');
    const two = { discord: { token: 't', application_id: '1', x: '1', y: '2' } };
    assert.deepEqual(missingCompanions(two, DISCORD, [{ group: 'discord', key: 'x' }]), [{ unit: 'discord (other keys)', group: 'discord', missing: ['discord.y'] }]);
    assert.deepEqual(missingCompanions(tables, DISCORD, [{ group: 'new', key: 'k' }]), [], 'a new key alone is a whole new unit');
  });
  it('groupKeys: every key of the table, over its units', () => {
    assert.deepEqual(groupKeys(tables, DISCORD, 'discord'), ['token', 'application_id', 'extra']);
    assert.deepEqual(groupKeys(tables, DISCORD, 'mail'), ['user', 'password', 'host']);
    assert.deepEqual(groupKeys(tables, DISCORD, 'none'), []);
  });
  it('suggestion: never the refused command, whitespace aside', () => {
    assert.equal(suggestion([], undefined), '');
    assert.equal(suggestion(['cred rotate mail'], undefined), "; run 'warden cred rotate mail'");
    assert.equal(suggestion(['cred rotate mail', 'cred set mail.user'], ' cred  rotate\tmail '), "; run 'warden cred set mail.user'");
    assert.equal(suggestion(['cred rotate mail', 'cred set mail.user'], 'apply x'), "; run 'warden cred rotate mail' or 'warden cred set mail.user'");
  });
  it('half-applied message', () => {
    const h = { group: 'mail', changed: ['password'], unchanged: ['user', 'host'] };
    assert.equal(halfAppliedMessage(h),
      "half-applied: mail.password would change but mail.user, mail.host would not; keys of group mail change together, so these must come along: mail.user, mail.host; run 'warden cred rotate mail' or 'warden cred set mail.password mail.user mail.host' (cred rotate asks for every key and accepts a value re-entered unchanged)");
    assert.equal(halfAppliedMessage({ group: 'discord (other keys)', changed: ['x'], unchanged: ['y'] }, 'cred rotate discord'),
      "half-applied: discord.x would change but discord.y would not; keys of group discord (other keys) change together, so these must come along: discord.y; run 'warden cred set discord.x discord.y'");
    assert.match(halfAppliedMessage(h, 'apply config/credentials.toml'), /\(cred rotate asks for every key/);
  });
  it('failed-check message', () => {
    assert.equal(failedCheckMessage({ group: 'discord', check: 'discord-token', unchanged: ['application_id'] }),
      'half-applied: check "discord-token" fails for discord: the first dot-separated segment of discord.token must base64-decode to discord.application_id; check the new value, or change discord.application_id with it (these must come along: discord.application_id)'
      + "; run 'warden cred rotate discord'");
    assert.equal(failedCheckMessage({ group: 'discord', check: 'discord-token', unchanged: [] }, 'cred rotate discord'),
      'half-applied: check "discord-token" fails for discord: the first dot-separated segment of discord.token must base64-decode to discord.application_id; the values given do not agree with each other');
  });
});
