/**
 * The approved state a view hands out, built from verified bytes (src/runtime/state.ts),
 * directly: what a closed view grants (nothing), what an open one holds, and that names from
 * files stay data. Fast (no daemon): `npm run mutate -- runtime` runs this file per mutant.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildState, closedState, policyInputsOf, sha256Hex, usedByView, type Verified } from '../../src/runtime/state.js';
import { FIXTURE } from '../helpers/root.js';
import type { FileKind } from '../../src/config/protected-set.js';

const v = (kind: FileKind, text: string | Buffer): Verified => {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  return { kind, sha256: sha256Hex(bytes), size: bytes.length, mode: 0o600, bytes };
};
const fx = (rel: string) => readFileSync(join(FIXTURE, rel));

describe('runtime approved state', () => {
  it('which files the view uses: policy files and credentials, nothing else', () => {
    assert.equal(usedByView('config/credentials.toml', 'credentials'), true);
    assert.equal(usedByView('secrets/other.toml', 'credentials'), true);
    assert.equal(usedByView('orgs/a.toml', 'org'), true);
    assert.equal(usedByView('config/conditions.toml', 'conditions'), true);
    assert.equal(usedByView('blocks/conditional/x.md', 'block'), true);
    assert.equal(usedByView('config/warden.toml', 'warden'), true);
    assert.equal(usedByView('notes/x.md', 'text'), false);
  });
  it('sha256 in hex', () => {
    assert.equal(sha256Hex(Buffer.from('abc')), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
  it('closed: grants nothing, says why, frozen', () => {
    const s = closedState('no manifest');
    assert.equal(s.ok, false);
    assert.equal(s.reason, 'no manifest');
    assert.equal(s.generation, null);
    assert.deepEqual(s.credentials, {});
    assert.deepEqual(s.files, {});
    assert.equal(s.policy.conditions, null);
    assert.equal(s.policy.owner, null);
    assert.deepEqual(s.policy.orgs, []);
    assert.equal(s.policy.guests, null);
    assert.ok(Object.isFrozen(s) && Object.isFrozen(s.credentials) && Object.isFrozen(s.files));
  });
  it('open: the policy and credentials of the verified bytes, hashes by path', () => {
    const files = new Map<string, Verified>([
      ['orgs/bookclub.toml', v('org', fx('orgs/bookclub.toml'))],
      ['config/warden.toml', v('warden', fx('config/warden.toml'))],
      ['config/conditions.toml', v('conditions', fx('config/conditions.toml'))],
      ['config/credentials.toml', v('credentials', '[discord]\ntoken = "T"\n[__proto__]\nconstructor = "C"\n')],
      ['secrets/more.toml', v('credentials', '[mail]\nuser = "U"\n')],
    ]);
    const s = buildState(7, files);
    assert.equal(s.ok, true);
    assert.equal(s.reason, null);
    assert.equal(s.generation, 7);
    assert.deepEqual(Object.keys(s.files), ['config/conditions.toml', 'config/credentials.toml', 'config/warden.toml', 'orgs/bookclub.toml', 'secrets/more.toml'], 'sorted by path');
    assert.equal(s.files['orgs/bookclub.toml'], files.get('orgs/bookclub.toml')?.sha256);
    assert.equal(s.credentials.discord?.token, 'T');
    assert.equal(s.credentials.mail?.user, 'U');
    assert.equal(Object.getPrototypeOf(s.credentials), null);
    assert.ok(Object.hasOwn(s.credentials, '__proto__'), 'a group named __proto__ is an ordinary name');
    assert.equal(s.credentials['__proto__']?.constructor, 'C');
    assert.ok(Object.isFrozen(s) && Object.isFrozen(s.credentials) && Object.isFrozen(s.credentials.discord) && Object.isFrozen(s.files));
    assert.notEqual(s.policy.conditions, null);
    assert.equal(s.policy.orgs.length, 1);
    assert.notEqual(s.policy.owner, null);
  });
  it('a policy file that is not UTF-8 is unreadable: it grants nothing', () => {
    const s = buildState(1, new Map([['config/conditions.toml', v('conditions', Buffer.from([0xff, 0xfe, 0x00]))]]));
    assert.equal(s.ok, true);
    assert.equal(s.policy.conditions, null);
    const ok = buildState(1, new Map([['config/conditions.toml', v('conditions', fx('config/conditions.toml'))]]));
    assert.notEqual(ok.policy.conditions, null);
    // One invalid byte in a comment of an otherwise valid file: refused whole, never decoded leniently.
    const oneByte = Buffer.concat([Buffer.from('# caf'), Buffer.from([0xe9]), Buffer.from('\n'), fx('config/conditions.toml')]);
    assert.equal(buildState(1, new Map([['config/conditions.toml', v('conditions', oneByte)]])).policy.conditions, null);
  });
  it("the policy builder's input: policy files only, in path order, one not UTF-8 said as such", () => {
    const files = new Map<string, Verified>([
      ['orgs/zeta.toml', v('org', '[z]\n')],
      ['config/credentials.toml', v('credentials', '[g]\nk = "SECRET"\n')],
      ['orgs/alpha.toml', v('org', Buffer.from([0x5b, 0xff, 0x5d]))],
      ['config/conditions.toml', v('conditions', '# c\n')],
    ]);
    assert.deepEqual(policyInputsOf(files), [
      { path: 'config/conditions.toml', text: '# c\n' },
      { path: 'orgs/alpha.toml', text: null, unreadable: 'is not valid UTF-8' },
      { path: 'orgs/zeta.toml', text: '[z]\n' },
    ]);
    assert.ok(!JSON.stringify(policyInputsOf(files)).includes('SECRET'), 'no credential file reaches the policy builder');
  });
  it('credentials come from credential files only, and a key in two files is taken from the first in path order', () => {
    // An org file made of string tables is not a credential file.
    const s = buildState(1, new Map([['orgs/x.toml', v('org', '[meta]\nname = "x"\n')]]));
    assert.deepEqual({ ...s.credentials }, {});
    const two = buildState(1, new Map<string, Verified>([
      ['secrets/b.toml', v('credentials', '[g]\nk = "from b"\n')],
      ['config/a.toml', v('credentials', '[g]\nk = "from a"\n')],
    ]));
    assert.equal(two.credentials.g?.k, 'from a');
  });
});
