import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { stringify } from 'smol-toml';
import {
  buildPolicy, explain, parseBlock, parseConditions, parseGuests, parseOrg, parseOwner, validatePolicyFile, validatePolicyChange,
  type PolicyKind,
} from '../../src/policy/index.js';
import { BOOKCLUB, CONDITIONS, GUESTS, NSFW_MD, OWNER, WARDEN, rootFiles } from './fixtures.js';

const kinds: [PolicyKind, string][] = [['conditions', 'config/conditions.toml'], ['guests', 'config/guests.toml'], ['org', 'orgs/x.toml'], ['block', 'blocks/conditional/x.md'], ['warden', 'config/warden.toml']];

/** Run every loader on a text; each must return (not throw), and "no usable result" must come with errors. */
function everyLoader(text: string): void {
  const c = parseConditions(text);
  assert.equal(c.conditions === null, c.status !== 'ok');
  if (c.conditions === null) assert.ok(c.errors.length > 0); else assert.deepEqual(c.errors, []);
  const o = parseOrg(text, 'orgs/x.toml');
  if (o.org === null) assert.ok(o.errors.length > 0); else assert.deepEqual(o.errors, []);
  const g = parseGuests(text);
  if (g.guests === null) assert.ok(g.errors.length > 0); else assert.deepEqual(g.errors, []);
  const b = parseBlock(text, 'blocks/conditional/x.md');
  if (b.block === null) assert.ok(b.errors.length > 0); else assert.ok(b.block.description.trim() !== '');
  parseOwner(text);
  for (const [k, p] of kinds) assert.ok(Array.isArray(validatePolicyFile(k, p, text)));
  const files = [
    { path: 'config/conditions.toml', text }, { path: 'config/guests.toml', text }, { path: 'config/warden.toml', text },
    { path: 'orgs/x.toml', text }, { path: 'blocks/conditional/x.md', text },
  ];
  const r = buildPolicy(files);
  for (const e of r.errors) assert.equal(typeof e.message, 'string');
  explain(r.policy, OWNER, { kind: 'dm', channel: '1' }, ['/workspace/a']);
  assert.ok(Array.isArray(validatePolicyChange(rootFiles(), 'orgs/bookclub.toml', text)));
}

test('fuzz: random bytes never make a loader throw', () => {
  fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
    everyLoader(Buffer.from(bytes).toString('latin1'));
    everyLoader(Buffer.from(bytes).toString('utf8'));
  }), { numRuns: 500 });
});

test('fuzz: random strings never make a loader throw', () => {
  fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 200 }), (s) => everyLoader(s)), { numRuns: 500 });
});

const tomlValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' },
    fc.string({ maxLength: 12 }), fc.integer(), fc.boolean(), fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom('discord:dm', '!internal', 'load', 'allow', 'deny', 'or', 'and', '/workspace/a/', '123'),
    fc.array(tie('value'), { maxLength: 3 }), tie('table')),
  table: fc.dictionary(fc.constantFrom('blocks', 'memories', 'workspace', 'when', 'mode', 'action', 'members', 'channels', 'folders', 'commands', 'hourly_cap', 'description', 'owner', 'discord_id', '/a/', 'x'), tie('value'), { maxKeys: 4 }),
})).table;

test('fuzz: random TOML documents never make a loader throw', () => {
  fc.assert(fc.property(tomlValue, (doc) => {
    let text: string;
    try { text = stringify(doc as Record<string, unknown>); } catch { return; } // not every JS value is TOML
    everyLoader(text);
    everyLoader(`+++\n${text}\n+++\nbody`);
  }), { numRuns: 400 });
});

test('fuzz: mutated example files never make a loader throw', () => {
  const seeds = [CONDITIONS, GUESTS, BOOKCLUB, NSFW_MD, WARDEN];
  fc.assert(fc.property(fc.constantFrom(...seeds), fc.array(fc.tuple(fc.nat(), fc.nat(3), fc.string({ maxLength: 3 })), { maxLength: 5 }), (seed, edits) => {
    let s = seed;
    for (const [at, del, ins] of edits) { const i = at % (s.length + 1); s = s.slice(0, i) + ins + s.slice(i + del); }
    everyLoader(s);
  }), { numRuns: 500 });
});
