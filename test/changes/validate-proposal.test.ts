/**
 * Validating a proposal by its kind, as visudo does (src/changes/validate.ts): which files may be
 * removed, warden.toml's schema, policy files alone or within the approved set, credential
 * files by group, TOML syntax. Pure: in `npm run mutate -- changes` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { removable, tomlSyntax, validateProposal } from '../../src/changes/validate.js';
import { wardenConfigSchema } from '../../src/config/warden-config.js';
import { FIXTURE } from '../helpers/root.js';

const DISCORD = wardenConfigSchema.parse({ credentials: { files: ['config/credentials.toml'], groups: { discord: { keys: ['token', 'application_id'], check: 'discord-token' } } } });
const read = (rel: string) => readFileSync(join(FIXTURE, rel), 'utf8');
const POLICY = ['config/conditions.toml', 'config/guests.toml', 'config/warden.toml', 'orgs/bookclub.toml', 'blocks/conditional/nsfw.md'].map((path) => ({ path, text: read(path) }));

describe('validate a proposal', () => {
  it('only org, block and extra files can be removed', () => {
    assert.deepEqual(['warden', 'conditions', 'guests', 'credentials', 'org', 'block', 'text'].filter((k) => removable(k as never)), ['org', 'block', 'text']);
    for (const kind of ['warden', 'conditions', 'guests', 'credentials'] as const) {
      assert.deepEqual(validateProposal({ path: 'p', kind, text: null, approvedText: 'x' }, DISCORD), [{ file: 'p', message: `only org, block and extra protected files can be removed; ${kind} files are edited instead` }]);
    }
    for (const kind of ['org', 'block', 'text'] as const) assert.deepEqual(validateProposal({ path: 'p', kind, text: null, approvedText: 'x' }, DISCORD), [], kind);
    assert.deepEqual(validateProposal({ path: 'x.md', kind: 'text', text: null, approvedText: 'x' }, DISCORD, POLICY), [], 'a text file is not policy');
  });
  it('removing a policy file is checked against the approved set', () => {
    assert.deepEqual(validateProposal({ path: 'orgs/bookclub.toml', kind: 'org', text: null, approvedText: 'x' }, DISCORD, POLICY), []);
    assert.deepEqual(validateProposal({ path: 'blocks/conditional/nsfw.md', kind: 'block', text: null, approvedText: 'x' }, DISCORD, POLICY), []);
  });
  it('warden.toml: its own schema, then the policy set', () => {
    const bad = validateProposal({ path: 'config/warden.toml', kind: 'warden', text: 'nope = 1\n', approvedText: null }, DISCORD, POLICY);
    assert.ok(bad.length > 0 && bad.every((x) => x.file === 'config/warden.toml'));
    assert.deepEqual(validateProposal({ path: 'config/warden.toml', kind: 'warden', text: read('config/warden.toml'), approvedText: null }, DISCORD), []);
    assert.deepEqual(validateProposal({ path: 'config/warden.toml', kind: 'warden', text: read('config/warden.toml'), approvedText: null }, DISCORD, POLICY), []);
  });
  it('policy files: alone by their kind, or within the approved set', () => {
    assert.deepEqual(validateProposal({ path: 'config/conditions.toml', kind: 'conditions', text: read('config/conditions.toml'), approvedText: null }, DISCORD), []);
    const broken = '[memories."/a/"]\nwhen = "discord:dm"\naction = "permit"\n';
    assert.ok(validateProposal({ path: 'config/conditions.toml', kind: 'conditions', text: broken, approvedText: null }, DISCORD).length > 0);
    assert.ok(validateProposal({ path: 'config/conditions.toml', kind: 'conditions', text: broken, approvedText: null }, DISCORD, POLICY).length > 0);
    assert.deepEqual(validateProposal({ path: 'orgs/bookclub.toml', kind: 'org', text: read('orgs/bookclub.toml'), approvedText: null }, DISCORD, POLICY), []);
    assert.ok(validateProposal({ path: 'orgs/bookclub.toml', kind: 'org', text: 'x = [', approvedText: null }, DISCORD).length > 0);
    assert.ok(validateProposal({ path: 'config/guests.toml', kind: 'guests', text: 'x = [', approvedText: null }, DISCORD).length > 0);
    assert.deepEqual(validateProposal({ path: 'notes.md', kind: 'text', text: 'anything [', approvedText: null }, DISCORD, POLICY), []);
    // A block is validated as a block, alone and within the set: no front matter is refused.
    const noFront = 'just text, no front matter\n';
    for (const set of [undefined, POLICY]) {
      assert.deepEqual(validateProposal({ path: 'blocks/conditional/nsfw.md', kind: 'block', text: noFront, approvedText: null }, DISCORD, set).map((e) => e.message),
        ['must start with a "+++" line opening the TOML front matter'], set ? 'within the set' : 'alone');
      assert.deepEqual(validateProposal({ path: 'blocks/conditional/nsfw.md', kind: 'block', text: read('blocks/conditional/nsfw.md'), approvedText: null }, DISCORD, set), []);
    }
  });
  it('credentials: parse errors, half-applied groups and failed checks, each located by its group', () => {
    const two = (u: string, p: string) => `[mail]\nuser = "${u}"\npassword = "${p}"\n`;
    assert.deepEqual(validateProposal({ path: 'c.toml', kind: 'credentials', text: two('u', 'p2'), approvedText: two('u', 'p') }, DISCORD), [{
      file: 'c.toml', key: 'mail',
      message: "half-applied: mail.password would change but mail.user would not; keys of group mail change together, so these must come along: mail.user; run 'warden cred rotate mail' or 'warden cred set mail.password mail.user' (cred rotate asks for every key and accepts a value re-entered unchanged)",
    }]);
    const tok = (app: string) => `[discord]\ntoken = "${Buffer.from(app).toString('base64')}.x"\napplication_id = "1"\n`;
    const failed = validateProposal({ path: 'c.toml', kind: 'credentials', text: tok('2'), approvedText: tok('1') }, DISCORD);
    assert.equal(failed.length, 1);
    assert.equal(failed[0]?.key, 'discord');
    assert.match(failed[0]?.message ?? '', /^half-applied: check "discord-token" fails for discord/);
    assert.deepEqual(validateProposal({ path: 'c.toml', kind: 'credentials', text: '[a]\nk = 1\n', approvedText: null }, DISCORD), [{ file: 'c.toml', key: 'a.k', message: 'credential values must be strings' }]);
    assert.deepEqual(validateProposal({ path: 'c.toml', kind: 'credentials', text: two('u2', 'p2'), approvedText: two('u', 'p') }, DISCORD), []);
  });
  it('TOML syntax for .toml files only', () => {
    assert.deepEqual(tomlSyntax('a.md', 'x = ['), []);
    assert.deepEqual(tomlSyntax('a.toml', 'x = 1\n'), []);
    const e = tomlSyntax('a.toml', 'x = [');
    assert.equal(e.length, 1);
    assert.equal(e[0]?.file, 'a.toml');
  });
});
