/**
 * Credential files parsed and compared (src/credentials/rules.ts): groups and their units,
 * the discord token check, the diff by fingerprint, sets merged over files, the history
 * mirror; refused by key, never by value. Pure: in `npm run mutate -- credentials` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { missingCompanions } from '../../src/credentials/names.js';
import {
  credentialFingerprintText, diffCredentials, diffCredentialSet, discordTokenHolds, fingerprint, groupUnits, mergeCredentialSet, parseCredentials, unitOf,
} from '../../src/credentials/rules.js';
import { wardenConfigSchema, type WardenConfig } from '../../src/config/warden-config.js';

const cfg = (groups: Record<string, { keys: string[]; check?: 'discord-token' }> = {}): WardenConfig =>
  wardenConfigSchema.parse({ credentials: { files: ['config/credentials.toml'], groups } });
const DISCORD = cfg({ discord: { keys: ['token', 'application_id'], check: 'discord-token' } });
const b64 = (s: string) => Buffer.from(s).toString('base64');
/** Tables are prototype-less dicts: compare their JSON. */
const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

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
