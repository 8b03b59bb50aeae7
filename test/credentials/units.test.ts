/**
 * Pure credential rules (src/credentials): the words of a refusal, which keys must change
 * together, the mode finding, the in-place value editor, and that no value ever comes out.
 * Fast (no daemon, no CLI): `npm run mutate -- credentials` runs this file per mutant.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closest, editDistance, failedCheckMessage, groupKeys, halfAppliedMessage, missingCompanions, suggestion, unknownKeyErrors } from '../../src/credentials/names.js';
import { credentialModeFindings } from '../../src/credentials/mode.js';
import {
  credentialFingerprintText, diffCredentials, diffCredentialSet, discordTokenHolds, fingerprint, groupUnits, mergeCredentialSet, parseCredentials, unitOf,
} from '../../src/credentials/rules.js';
import { setCredentialValues, tomlString } from '../../src/credentials/edit.js';
import { wardenConfigSchema, type WardenConfig } from '../../src/config/warden-config.js';
import { WardenError } from '../../src/common/errors.js';

const cfg = (groups: Record<string, { keys: string[]; check?: 'discord-token' }> = {}): WardenConfig =>
  wardenConfigSchema.parse({ credentials: { files: ['config/credentials.toml'], groups } });
const DISCORD = cfg({ discord: { keys: ['token', 'application_id'], check: 'discord-token' } });
const b64 = (s: string) => Buffer.from(s).toString('base64');
/** Tables are prototype-less dicts: compare their JSON. */
const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

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

describe('credential rules', () => {
  it('unitOf: a key name two groups share belongs to the unit of the group asked for', () => {
    const two = cfg({ a: { keys: ['token', 'id'] }, b: { keys: ['token', 'secret'] } });
    const tables = { a: { token: '1', id: '2' }, b: { token: '3', secret: '4' } };
    assert.equal(unitOf(tables, two, 'b', 'token')?.name, 'b');
    assert.deepEqual(unitOf(tables, two, 'b', 'token')?.keys, ['token', 'secret']);
    assert.equal(unitOf(tables, two, 'a', 'token')?.name, 'a');
    // The same for groups that are not configured (each is its own unit).
    assert.equal(unitOf({ x: { k: '1' }, y: { k: '2' } }, cfg(), 'y', 'k')?.table, 'y');
    // Companions are asked of the group named: b's token needs b's secret, not a's id.
    assert.deepEqual(missingCompanions(tables, two, [{ group: 'b', key: 'token' }]).map((m) => m.missing), [['b.secret']]);
  });
  it('parse: groups of strings; anything else refused by key, never by value', () => {
    assert.deepEqual(plain(parseCredentials('[a]\nk = "v"\n', 'f')), { ok: true, tables: { a: { k: 'v' } } });
    const bad = parseCredentials('top = "SECRET1"\n[a]\nk = 5\nj = "ok"\n[b]\nx = ["SECRET2"]\n[d]\nt = 1979-05-27\n', 'f');
    assert.equal(bad.ok, false);
    if (!bad.ok) {
      assert.deepEqual(bad.errors, [
        { file: 'f', key: 'top', message: 'top-level keys must be groups (TOML tables) of string values' },
        { file: 'f', key: 'a.k', message: 'credential values must be strings' },
        { file: 'f', key: 'b.x', message: 'credential values must be strings' },
        { file: 'f', key: 'd.t', message: 'credential values must be strings' },
      ]);
      assert.ok(!JSON.stringify(bad).includes('SECRET'));
    }
    for (const t of ['arr = [1]\n', 'd = 1979-05-27\n', 'n = 3\n']) {
      const r = parseCredentials(t, 'f');
      assert.equal(r.ok, false, t);
      if (!r.ok) assert.equal(r.errors[0]?.message, 'top-level keys must be groups (TOML tables) of string values');
    }
    const syntax = parseCredentials('[a\n', 'f');
    assert.equal(syntax.ok, false);
    if (!syntax.ok) assert.equal(syntax.errors.length, 1);
  });
  it('units: configured keys, the table\'s other keys, unconfigured tables whole, sorted', () => {
    const t = { zeta: { a: '1' }, discord: { token: 't', application_id: '1', extra: 'e' } };
    assert.deepEqual(groupUnits(t, DISCORD), [
      { name: 'discord', table: 'discord', keys: ['token', 'application_id'], check: 'discord-token' },
      { name: 'discord (other keys)', table: 'discord', keys: ['extra'] },
      { name: 'zeta', table: 'zeta', keys: ['a'] },
    ]);
    assert.deepEqual(groupUnits({}, cfg({ mail: { keys: ['u', 'p'] } })), [{ name: 'mail', table: 'mail', keys: ['u', 'p'] }]);
    assert.deepEqual(unitOf(t, DISCORD, 'discord', 'extra'), { name: 'discord (other keys)', table: 'discord', keys: ['extra'] });
    assert.deepEqual(unitOf(t, DISCORD, 'discord', 'new'), { name: 'discord (other keys)', table: 'discord', keys: ['extra', 'new'] });
    assert.deepEqual(unitOf({}, DISCORD, 'fresh', 'k'), { name: 'fresh', table: 'fresh', keys: ['k'] });
    assert.equal(t.discord.extra, 'e');
    assert.equal(Object.hasOwn(t.discord, 'new'), false, 'unitOf does not change the tables it is given');
  });
  it('discord token check: base64url first segment equals application_id', () => {
    assert.equal(discordTokenHolds({ token: `${b64('42')}.a.b`, application_id: '42' }), true);
    assert.equal(discordTokenHolds({ token: b64('42'), application_id: '42' }), true, 'a token of one segment');
    // '>>?' base64-encodes to 'Pj4/' (standard) = 'Pj4_' (url-safe); '??>' to 'Pz8-'.
    assert.equal(discordTokenHolds({ token: 'Pj4_.x', application_id: '>>?' }), true);
    assert.equal(discordTokenHolds({ token: 'Pz8-.x', application_id: '??>' }), true);
    assert.equal(discordTokenHolds({ token: `${b64('42')}.a`, application_id: '' }), false);
    assert.equal(discordTokenHolds({ token: '', application_id: '42' }), false);
    assert.equal(discordTokenHolds({ token: `x.${b64('42')}`, application_id: '42' }), false, 'only the first segment counts');
    assert.equal(discordTokenHolds(undefined), false);
  });
  it('diff: changes by fingerprint, sorted by group and key, added and removed keys', () => {
    const d = diffCredentials('[b]\nx = "1"\ny = "2"\n[a]\nk = "old"\n', '[a]\nk = "new"\nn = "v"\n[b]\nx = "1"\n', cfg(), 'f');
    assert.deepEqual(d.changes, [
      { group: 'a', key: 'k', before: fingerprint('old'), after: fingerprint('new') },
      { group: 'a', key: 'n', before: null, after: fingerprint('v') },
      { group: 'b', key: 'y', before: fingerprint('2'), after: null },
    ]);
    assert.deepEqual(d.halfGroups, [], 'every key of a changed; b is judged by the keys it has now');
    assert.equal(d.halfApplied, false);
    assert.deepEqual(diffCredentials(null, '[a]\nk = "v"\n', cfg(), 'f').halfApplied, false, 'a new file');
    assert.deepEqual(diffCredentials('[a]\nk = "v"\n', null, cfg(), 'f').changes, [{ group: 'a', key: 'k', before: fingerprint('v'), after: null }]);
    // A removed file is every key gone, not a file that does not parse: no parse error, and
    // removing whole groups is not half-applied.
    const removed = diffCredentials('[a]\nk = "v"\nj = "w"\n', null, cfg(), 'f');
    assert.deepEqual(removed.parseErrors, []);
    assert.equal(removed.halfApplied, false);
    assert.equal(removed.changes.length, 2);
    assert.deepEqual(diffCredentials('[a]\nk = "v"\n', '[a]\nk = "v"\n', cfg(), 'f'), { changes: [], halfGroups: [], failedChecks: [], parseErrors: [], halfApplied: false });
  });
  it('diff: an old file that does not parse counts as empty; a new one that does not is half-applied with its errors', () => {
    const d = diffCredentials('[a', '[a]\nk = "v"\nj = "w"\n', cfg(), 'f');
    assert.equal(d.halfApplied, false);
    assert.equal(d.changes.length, 2);
    const e = diffCredentials('[a]\nk = "v"\n', '[a]\nk = 1\n', cfg(), 'f');
    assert.equal(e.halfApplied, true);
    assert.deepEqual(e.halfGroups, []);
    assert.deepEqual(e.parseErrors, [{ file: 'f', key: 'a.k', message: 'credential values must be strings' }]);
  });
  it('unit rules: a checked unit that changed is judged by its check only', () => {
    const text = (token: string, app: string) => `[discord]\ntoken = "${token}"\napplication_id = "${app}"\n`;
    const ok = diffCredentials(text(`${b64('1')}.a`, '1'), text(`${b64('1')}.b`, '1'), DISCORD, 'f');
    assert.deepEqual([ok.halfGroups, ok.failedChecks, ok.halfApplied], [[], [], false]);
    const bad = diffCredentials(text(`${b64('1')}.a`, '1'), text(`${b64('2')}.b`, '1'), DISCORD, 'f', new Set(['discord.application_id']));
    assert.deepEqual(bad.failedChecks, [{ group: 'discord', check: 'discord-token', unchanged: [] }], 'a confirmed key is covered');
    // An unchanged checked unit is not judged, even when its check fails today.
    const stale = diffCredentials(`${text('x', '1')}[m]\nk = "a"\n`, `${text('x', '1')}[m]\nk = "b"\n`, DISCORD, 'f');
    assert.deepEqual([stale.failedChecks, stale.halfApplied], [[], false]);
  });
  it('unit rules: a confirmed key of another table does not cover this one', () => {
    const two = (a: string, b: string) => `[mail]\nuser = "${a}"\npassword = "${b}"\n`;
    const d = diffCredentials(two('u', 'p'), two('u', 'p2'), cfg(), 'f', new Set(['other.user', 'mail.password']));
    assert.deepEqual(d.halfGroups, [{ group: 'mail', changed: ['password'], unchanged: ['user'] }]);
    assert.equal(diffCredentials(two('u', 'p'), two('u2', 'p2'), cfg(), 'f').halfApplied, false);
    // A key removed alone from a configured group without a check leaves it half-switched as
    // surely as a changed one: the group's keys are the configured ones, present or not.
    const MAIL = cfg({ mail: { keys: ['user', 'password'] } });
    const removed = diffCredentials(two('u', 'p'), '[mail]\nuser = "u"\n', MAIL, 'f');
    assert.deepEqual(removed.halfGroups, [{ group: 'mail', changed: ['password'], unchanged: ['user'] }]);
    assert.equal(removed.halfApplied, true);
    assert.deepEqual(removed.changes.map((c) => [c.group, c.key, c.after]), [['mail', 'password', null]]);
    // The whole group removed at once is not half of anything.
    assert.equal(diffCredentials(two('u', 'p'), '[other]\nk = "v"\n', MAIL, 'f').halfApplied, false);
    // An unconfigured table is judged by the keys it has now (docs/CONTRACT.md §Credentials): dropping one is not half.
    assert.equal(diffCredentials(two('u', 'p'), '[mail]\nuser = "u"\n', cfg(), 'f').halfApplied, false);
  });
  it('credential sets: merged over files; a key defined twice is an error naming both files', () => {
    const s = mergeCredentialSet([
      { path: 'a.toml', text: '[g]\nk = "1"\n' },
      { path: 'gone.toml', text: null },
      { path: 'b.toml', text: '[g]\nj = "2"\nk = "3"\n[h]\nx = "4"\n' },
      { path: 'bad.toml', text: '[g]\nz = 5\n' },
    ]);
    assert.deepEqual(plain(s.tables), { g: { k: '1', j: '2' }, h: { x: '4' } });
    assert.deepEqual(plain(s.where), { 'g.k': 'a.toml', 'g.j': 'b.toml', 'h.x': 'b.toml' });
    assert.deepEqual(s.errors, [
      { file: 'b.toml', key: 'g.k', message: 'g.k is also defined in a.toml; a key lives in one file of the set' },
      { file: 'bad.toml', key: 'g.z', message: 'credential values must be strings' },
    ]);
    const d = diffCredentialSet({ g: { k: '1', j: '2' } }, { g: { k: '9', j: '2' } }, cfg());
    assert.deepEqual(d, { changes: [{ group: 'g', key: 'k', before: fingerprint('1'), after: fingerprint('9') }], halfGroups: [{ group: 'g', changed: ['k'], unchanged: ['j'] }], failedChecks: [] });
    assert.equal(diffCredentialSet({ g: { k: '1', j: '2' } }, { g: { k: '9', j: '2' } }, cfg(), new Set(['g.j'])).halfGroups.length, 0);
  });
  it('history mirror: fingerprints only, sorted; unparsable text by its sha256 prefix', () => {
    assert.equal(credentialFingerprintText(Buffer.from('[b]\ny = "2"\nx = "1"\n[a]\nk = "v"\n')),
      `# fingerprints only: first 12 hex digits of sha256(value)\na.k = ${fingerprint('v')}\nb.x = ${fingerprint('1')}\nb.y = ${fingerprint('2')}\n`);
    assert.equal(credentialFingerprintText(Buffer.from('[a\nSECRET')), `# does not parse (sha256 ${fingerprint('[a\nSECRET')})\n`);
    assert.equal(fingerprint('abc'), 'ba7816bf8f01');
  });
});

describe('credential value editor', () => {
  it('tomlString escapes what TOML requires', () => {
    assert.equal(tomlString('plain'), '"plain"');
    assert.equal(tomlString('a"b\\c\nd\te\rf\u0001g\u007fh\u001fi é'), '"a\\"b\\\\c\\nd\\te\\rf\\u0001g\\u007Fh\\u001Fi é"');
    assert.equal(tomlString(' ~'), '" ~"');
    assert.equal(tomlString(''), '""');
  });
  it('replaces a value in place, comments and layout kept', () => {
    const text = '# my creds\n[discord]   # the bot\ntoken   =  "old" # rotated monthly\napplication_id = \'1\'\n\n[mail]\nuser = "u"\n';
    assert.equal(setCredentialValues(text, 'c.toml', [{ group: 'discord', key: 'token', value: 'n"ew' }, { group: 'discord', key: 'application_id', value: '2' }]),
      '# my creds\n[discord]   # the bot\ntoken   =  "n\\"ew" # rotated monthly\napplication_id = "2"\n\n[mail]\nuser = "u"\n');
  });
  it('a value with escapes, a quoted key, a quoted table name', () => {
    const text = '["my group"]\n"odd key" = "a\\"b"\n[\'lit\']\nk = "x"\n';
    assert.equal(setCredentialValues(text, 'c.toml', [{ group: 'my group', key: 'odd key', value: 'v' }, { group: 'lit', key: 'k', value: 'y' }]),
      '["my group"]\n"odd key" = "v"\n[\'lit\']\nk = "y"\n');
    assert.equal(setCredentialValues("[g]\n'lk' = 'x'\n", 'c.toml', [{ group: 'g', key: 'lk', value: 'y' }]), "[g]\n'lk' = \"y\"\n");
  });
  it('a missing key goes after the group\'s last key; a missing group is appended', () => {
    const text = '[a]\nk = "1"\n\n[b]\nx = "2"\n\n\n';
    assert.equal(setCredentialValues(text, 'c.toml', [{ group: 'a', key: 'new', value: 'n' }, { group: 'a', key: 'new2', value: 'm' }]),
      '[a]\nk = "1"\nnew = "n"\nnew2 = "m"\n\n[b]\nx = "2"\n\n\n');
    assert.equal(setCredentialValues(text, 'c.toml', [{ group: 'c d', key: 'k k', value: 'v' }, { group: 'c d', key: 'j', value: 'w' }]),
      '[a]\nk = "1"\n\n[b]\nx = "2"\n\n["c d"]\n"k k" = "v"\nj = "w"\n');
    assert.equal(setCredentialValues('[empty]\n', 'c.toml', [{ group: 'empty', key: 'k', value: 'v' }]), '[empty]\nk = "v"\n');
    assert.equal(setCredentialValues('', 'c.toml', [{ group: 'g', key: 'k', value: 'v' }]), '\n[g]\nk = "v"\n');
  });
  it('keeps CRLF line ends', () => {
    assert.equal(setCredentialValues('[a]\r\nk = "1"\r\n', 'c.toml', [{ group: 'a', key: 'k', value: '2' }]), '[a]\r\nk = "2"\r\n');
  });
  it('a key line of another table, or before any table, is not the key', () => {
    const text = 'k = "top"\n[a]\nk = "1"\n[b]\nk = "2"\n';
    assert.throws(() => setCredentialValues(text, 'c.toml', [{ group: 'b', key: 'k', value: 'x' }]), WardenError, 'a top-level value does not parse as credentials');
    const ok = '[a]\nk = "1"\n[b]\nk = "2"\n';
    assert.equal(setCredentialValues(ok, 'c.toml', [{ group: 'b', key: 'k', value: 'x' }]), '[a]\nk = "1"\n[b]\nk = "x"\n');
  });
  const refused = (text: string, value = 'SECRET-NEW') => {
    try { setCredentialValues(text, 'c.toml', [{ group: 'a', key: 'k', value }]); } catch (e) {
      assert.ok(e instanceof WardenError);
      assert.ok(!e.message.includes('SECRET'), e.message);
      return e.message;
    }
    return null;
  };
  it('refuses layouts it does not rewrite, never echoing a value, and changes nothing', () => {
    const hint = "; use 'warden edit c.toml' for this file's layout. Nothing was changed.";
    // A multi-line string is not a value the scanner replaces: a second k would be added.
    assert.equal(refused('[a]\nk = """SECRET\nx"""\n'), `could not place the new values in c.toml safely${hint}`);
    assert.equal(refused("[a]\nk = '''SECRET'''\n"), `could not place the new values in c.toml safely${hint}`);
    // A line inside a multi-line string that looks like the key: the result parses, but a.k is not what was asked.
    assert.equal(refused('[a]\nnote = """\nk = "SECRET"\n"""\n'), `could not place the new values in c.toml safely (the layout is one warden does not rewrite)${hint}`);
    assert.equal(refused('[a]\nk = "SECRET" junk = 1\n'), `c.toml does not parse as a credential file${hint}`);
    assert.equal(refused('[a]\nk = "SECRET" # fine\n'), null);
    assert.equal(refused('[a]\nk = \'SECRET\' # fine\n'), null);
    assert.equal(refused('a = { k = "SECRET" }\n'), `could not place the new values in c.toml safely${hint}`, 'an inline table: [a] would be defined twice');
    assert.equal(refused('[a]\nk = "SEC\\"RET" \n'), null);
    assert.equal(refused('[a]\nk = "ok"\n', ''), 'a.k: an empty value is not a credential; nothing was changed');
  });
  it('refuses when the edit would not parse or would not hold the intended values', () => {
    const hint = "; use 'warden edit c.toml' for this file's layout. Nothing was changed.";
    // A dotted key: the scanner does not see a.k, appends [a] again: a duplicate table.
    assert.equal(refused('a.k = "SECRET"\n'), `could not place the new values in c.toml safely${hint}`);
    // A header the scanner does not read ([a.b]) hides the keys under it.
    assert.equal(refused('[a.b]\nk = "SECRET"\n[a]\nk = "x"\n'), `c.toml does not parse as a credential file${hint}`);
  });
});
