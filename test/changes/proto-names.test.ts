/**
 * Names in TOML files are data, never object properties.
 * Every name of Object.prototype (`__proto__` among them) goes through every keyed
 * structure (credential groups and keys, warden.toml's groups, [[protect]] paths, block
 * names, the runtime's credentials) and every command that reads them (cred, diff,
 * apply/approve, check, explain, the guard's revert). Each is an ordinary name or refused
 * with a located error, and no command crashes.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, makeInitRoot, readAlertsOf, startDaemon, waitFor, TEST_WARDEN_TOML, type Daemon, type TestRoot } from '../helpers/root.js';
import { run } from './helpers.js';
import { credentialFingerprintText, diffCredentials, mergeCredentialSet, parseCredentials } from '../../src/credentials/rules.js';
import { parseWardenConfig } from '../../src/config/warden-config.js';
import { quickConfig } from '../../src/config/quick-config.js';
import { parseToml } from '../../src/toml/index.js';
import { protectedSet } from '../../src/config/protected-set.js';
import { parseConditions } from '../../src/policy/conditions.js';
import { buildState, sha256Hex } from '../../src/runtime/state.js';

const NAMES = Object.getOwnPropertyNames(Object.prototype);
const CRED = 'config/credentials.toml';
const crashed = (s: string) => /TypeError|ReferenceError|internal error|at .*\.js:\d+|is not a function/.test(s);

/** One group per name, with one key of the same name (values: not secrets, but never printed either). */
const allGroups = (base: string): string => base + NAMES.map((n, i) => `\n["${n}"]\n"${n}" = "value-${i}-of-${n}"\n`).join('');

const roots: TestRoot[] = [];
const daemons: Daemon[] = [];
after(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  for (const t of roots.splice(0)) t.cleanup();
});
const root = (wardenToml = TEST_WARDEN_TOML): TestRoot => { const t = makeInitRoot({ wardenToml }); roots.push(t); return t; };

describe('every Object.prototype name through every keyed structure', () => {
  it('includes __proto__ and the usual suspects', () => {
    for (const n of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']) assert.ok(NAMES.includes(n));
  });

  it('credential files: each name is a group and a key, in parse, diff, merge and fingerprints', () => {
    const text = allGroups('');
    const p = parseCredentials(text, CRED);
    assert.ok(p.ok, JSON.stringify(!p.ok && p.errors));
    for (const [i, n] of NAMES.entries()) {
      assert.ok(Object.hasOwn(p.tables, n), `group ${n}`);
      assert.ok(Object.hasOwn(p.tables[n]!, n), `key ${n}.${n}`);
      assert.equal(p.tables[n]![n], `value-${i}-of-${n}`);
    }
    assert.equal(Object.keys(p.tables).length, NAMES.length);
    const config = (parseWardenConfig(TEST_WARDEN_TOML) as { ok: true; config: never }).config;
    const d = diffCredentials('', text, config, CRED);
    assert.deepEqual(d.changes.map((c) => `${c.group}.${c.key}`).sort(), NAMES.map((n) => `${n}.${n}`).sort());
    assert.equal(d.halfApplied, false);
    const m = mergeCredentialSet([{ path: CRED, text }, { path: 'config/other.toml', text: '["constructor"]\nextra = "x"\n' }]);
    assert.deepEqual(m.errors, []);
    assert.deepEqual(Object.keys(m.tables.constructor!).sort(), ['constructor', 'extra']);
    assert.equal(Object.keys(m.where).length, NAMES.length + 1);
    const fp = credentialFingerprintText(Buffer.from(text));
    for (const n of NAMES) assert.match(fp, new RegExp(`^${n.replace(/[$]/g, '\\$&')}\\.${n} = [0-9a-f]{12}$`, 'm'));
  });

  it('warden.toml: a group named by any of them is a group (schema and quick path agree); __proto__ is refused, located', () => {
    for (const n of NAMES) {
      const toml = `${TEST_WARDEN_TOML}\n[credentials.groups."${n}"]\nkeys = ["${n}", "b"]\n`;
      const r = parseWardenConfig(toml);
      const raw = parseToml(toml, 'config/warden.toml');
      const quick = raw.ok ? quickConfig(raw.value) : null;
      if (n === '__proto__') {
        assert.ok(!r.ok, 'refused');
        assert.equal(r.errors[0]!.key, 'credentials.groups.__proto__');
        assert.equal(r.errors[0]!.line, 15, 'located at its table');
        assert.equal(quick, null, 'the quick path hands it to the schema');
        continue;
      }
      assert.ok(r.ok, `${n}: ${JSON.stringify(!r.ok && r.errors)}`);
      assert.deepEqual(r.config.credentials.groups[n], { keys: [n, 'b'] }, n);
      assert.deepEqual(quick?.credentials.groups[n], { keys: [n, 'b'] }, `${n} (quick)`);
      assert.deepEqual(Object.keys(r.config.credentials.groups).sort(), ['discord', n].sort());
      // A name not configured is not a group, whatever Object.prototype holds.
      const other = NAMES.find((x) => x !== n)!;
      assert.equal(Object.hasOwn(r.config.credentials.groups, other), false);
      assert.equal(r.config.credentials.groups[other], undefined, `${other} is not inherited`);
    }
  });

  it('[[protect]] paths and block names', () => {
    for (const n of NAMES) {
      const ps = protectedSet({ protect: [{ path: n }, { path: `extra/${n}.txt` }], credentials: { files: [CRED] } });
      assert.equal(ps.kindOf(n), 'text', n);
      assert.equal(ps.kindOf(`extra/${n}.txt`), 'text', n);
      const other = protectedSet({ protect: [], credentials: { files: [CRED] } });
      assert.equal(other.kindOf(n), null, `${n} is not protected unless listed`);
      const c = parseConditions(`[blocks."${n}"]\nwhen = "discord:nsfw"\naction = "load"\n`);
      if (/^[A-Za-z0-9]/.test(n)) {
        assert.deepEqual(c.errors, [], n);
        assert.deepEqual(c.conditions?.rules.map((r) => r.key), [n]);
      } else {
        assert.equal(c.conditions, null, `${n} refused`);
        assert.ok(c.errors.length > 0 && c.errors.every((e) => e.line === 1), `${n}: located: ${JSON.stringify(c.errors)}`);
      }
    }
  });

  it('the runtime view: each group is an own key of its credentials, nothing inherited', () => {
    const bytes = Buffer.from(allGroups(''));
    const s = buildState(1, new Map([[CRED, { kind: 'credentials' as const, sha256: sha256Hex(bytes), size: bytes.length, mode: 0o600, bytes }]]));
    for (const [i, n] of NAMES.entries()) {
      assert.ok(Object.hasOwn(s.credentials, n), n);
      assert.equal(s.credentials[n]![n], `value-${i}-of-${n}`);
    }
    assert.equal(Object.keys(s.credentials).length, NAMES.length);
  });
});

describe('every command that reads them', () => {
  it('the guard reverts a credentials file holding every name, the alert lists each key; diff shows each', async () => {
    const t = root();
    const d = await startDaemon(t, ['--guard']);
    daemons.push(d);
    writeFileSync(t.p(CRED), allGroups(readFileSync(t.p(CRED), 'utf8')));
    const a = await waitFor(() => readAlertsOf(t).find((x) => x.path === CRED), 10_000, 'the credentials alert');
    assert.equal(a.action, 'reverted', JSON.stringify(a));
    assert.ok(!readAlertsOf(t).some((x) => x.action === 'revert-failed'), 'no false revert-failed');
    assert.deepEqual(a.credential_changes?.map((c) => `${c.group}.${c.key}`).sort(), NAMES.map((n) => `${n}.${n}`).sort());
    const diff = cli(t, ['diff', a.id]);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    assert.ok(!crashed(diff.stderr), diff.stderr);
    for (const n of NAMES) assert.ok(diff.stdout.includes(`${n}.${n} = `), `diff shows ${n}.${n}`);
    assert.ok(!diff.stdout.includes('value-'), 'no value on screen');
  });

  it('apply shows every group to the approver; approve lists and answers without crashing', async () => {
    const t = root(TEST_WARDEN_TOML.replace('approval = "none"', 'approval = "tty"'));
    const from = join(t.base, 'proposal.toml');
    writeFileSync(from, allGroups(readFileSync(t.p(CRED), 'utf8')));
    const ap = await run(t, ['apply', CRED, '--from', from]);
    assert.equal(ap.code, 0, ap.stdout + ap.stderr);
    assert.ok(!crashed(ap.stderr), ap.stderr);
    assert.doesNotMatch(ap.stdout, /no value changes/);
    for (const n of NAMES) assert.ok(ap.stdout.includes(`+ ${n}.${n}  (new)`), `the approver sees ${n}.${n}: ${ap.stdout}`);
    const id = /request ([a-z0-9]+)/.exec(ap.stdout)?.[1];
    assert.ok(id);
    const list = await run(t, ['approve']);
    assert.equal(list.code, 0, list.stdout + list.stderr);
    assert.ok(!crashed(list.stderr) && list.stdout.includes(id), list.stdout + list.stderr);
    const one = await run(t, ['approve', id]);
    assert.ok(!crashed(one.stderr), one.stderr);
  });

  it('cred set --new, cred list, check and explain take each name', () => {
    const orgNames = NAMES.filter((n) => /^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(n));
    const groups = NAMES.filter((n) => n !== '__proto__').map((n) => `\n[credentials.groups."${n}"]\nkeys = ["${n}"]\n`).join('');
    const t = root(TEST_WARDEN_TOML + groups);
    const set = cli(t, ['cred', 'set', '--new', ...NAMES.map((n) => `${n}.${n}`)], { input: NAMES.map((n) => `secret-${n}\n`).join('') });
    assert.equal(set.code, 0, set.stdout + set.stderr);
    const list = cli(t, ['cred', 'list', '--json']);
    assert.equal(list.code, 0, list.stderr);
    const rows = JSON.parse(list.stdout) as { group: string; key: string; fingerprint: string | null }[];
    for (const n of NAMES) assert.ok(rows.some((r) => r.group === n && r.key === n && r.fingerprint), `cred list shows ${n}.${n}`);
    // Orgs named by each (a name that is not a plain file stem is refused, located).
    const org = readFileSync(t.p('orgs/bookclub.toml'), 'utf8');
    NAMES.forEach((n, i) => writeFileSync(join(t.base, `org-${i}.toml`), org.replace(/members = \[[^\]]*\]/, `members = ["9000000000000000${String(i).padStart(2, '0')}"]`).replace(/channels = \[[^\]]*\]/, 'channels = []')));
    const ap = cli(t, ['apply', ...orgNames.flatMap((n) => [`orgs/${n}.toml`, '--from', join(t.base, `org-${NAMES.indexOf(n)}.toml`)])]);
    assert.equal(ap.code, 0, ap.stdout + ap.stderr);
    const check = cli(t, ['check', '--json']);
    assert.ok(!crashed(check.stderr), check.stderr);
    assert.equal(check.code, 0, check.stdout);
    for (const n of orgNames) {
      const user = `9000000000000000${String(NAMES.indexOf(n)).padStart(2, '0')}`;
      const ex = cli(t, ['explain', '--user', user, '--dm', '1', '--json']);
      assert.ok(!crashed(ex.stderr), ex.stderr);
      const j = JSON.parse(ex.stdout) as { tier: string; org: string | null };
      assert.equal(j.org, n, `explain puts ${user} in org ${n}: ${ex.stdout.slice(0, 400)}`);
    }
    const refused = NAMES.filter((x) => !orgNames.includes(x));
    const r = cli(t, ['apply', ...refused.flatMap((n) => [`orgs/${n}.toml`, '--from', join(t.base, `org-${NAMES.indexOf(n)}.toml`)])]);
    assert.equal(r.code, 1, `refused: ${r.stdout}${r.stderr}`);
    assert.ok(!crashed(r.stderr), r.stderr);
    for (const n of refused) assert.ok((r.stdout + r.stderr).includes(`orgs/${n}.toml:1:1`), `${n} refused, located: ${r.stdout}${r.stderr}`);
  });
});
