// parseConditions keeps the results of the last four texts (src/policy/conditions.ts): a
// repeated text gets the earlier result, whose rules are shared and frozen; a plainly valid
// file skips the sections schema. Seen through the identity of the rules and through
// sectionsSchema.safeParse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConditions, plainRule, plainSections, sectionsSchema } from '../../src/policy/conditions.js';

const tag = `${process.pid}-${Date.now()}`; // texts no earlier test parsed
const text = (n: string): string => `# ${tag} ${n}\n[memories."/${n}/"]\nwhen = "discord:dm"\naction = "deny"\n`;
const firstRule = (n: string): unknown => parseConditions(text(n)).conditions?.rules[0];

test('a repeated conditions.toml text gets the earlier result: the same frozen rules, fresh arrays', () => {
  const a = parseConditions(text('same'));
  const b = parseConditions(text('same'));
  assert.ok(a.conditions && b.conditions);
  assert.equal(b.conditions.rules[0], a.conditions.rules[0]);
  assert.ok(Object.isFrozen(a.conditions.rules[0]));
  assert.notEqual(b.conditions.rules, a.conditions.rules);
  assert.notEqual(b.errors, a.errors);
  // The same text under another file name is another result.
  assert.notEqual(parseConditions(text('same'), 'other/conditions.toml').conditions?.rules[0], a.conditions.rules[0]);
});

test('the last four texts are kept; a fifth new one drops the oldest', () => {
  const a = firstRule('a');
  firstRule('b'); firstRule('c'); firstRule('d');
  assert.equal(firstRule('a'), a, 'four texts: the first is still kept');
  firstRule('e');
  assert.notEqual(firstRule('a'), a, 'a fifth: the first was dropped and is parsed again');
});

test('a plainly valid conditions.toml never reaches the sections schema; any other top level does', () => {
  const own = Object.getOwnPropertyDescriptor(sectionsSchema, 'safeParse');
  const original = sectionsSchema.safeParse.bind(sectionsSchema);
  let calls = 0;
  Object.defineProperty(sectionsSchema, 'safeParse', { configurable: true, writable: true, value: (...a: Parameters<typeof original>) => { calls++; return original(...a); } });
  try {
    assert.equal(parseConditions(text('plain')).status, 'ok');
    assert.equal(calls, 0, 'the plain file never reached the schema');
    const bad = parseConditions(`# ${tag}\n[other."/x/"]\nwhen = "discord:dm"\naction = "deny"\n`);
    assert.equal(bad.status, 'invalid');
    assert.equal(calls, 1, 'an unknown section is decided by the schema');
  } finally {
    if (own) Object.defineProperty(sectionsSchema, 'safeParse', own); else delete (sectionsSchema as unknown as Record<string, unknown>).safeParse;
  }
});

test('plainRule and plainSections answer false for null, never throw', () => {
  assert.equal(plainRule(null), false);
  assert.equal(plainSections({ blocks: null }), false);
});
