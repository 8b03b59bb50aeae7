// Which rules decide what (src/policy/conditions.ts): only an allow or deny rule decides a
// path, only a `load` rule of [blocks] loads a block. A loaded conditions.toml never holds
// another mix (such a file is invalid as a whole); these policies are built by hand, as a
// library caller may.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluatePath, matchingBlocks } from '../../src/policy/conditions.js';
import type { Action, Rule, Section } from '../../src/policy/types.js';

const rule = (section: Section, key: string, action: Action): Rule =>
  ({ section, key, conditions: [{ text: 'internal', negated: false, fact: 'internal' }], mode: 'or', action, source: { file: `${section}.${key}` } } as Rule);
const facts = new Set(['internal']);

test('a holding rule that is neither allow nor deny does not decide a path', () => {
  const d = evaluatePath({ rules: [rule('workspace', '/a/', 'load')] }, '/workspace/a/x', facts);
  assert.equal(d.decision, 'deny');
  assert.equal(d.step, 3);
});

test('matchingBlocks lists only the [blocks] rules whose action is load, and only those that hold', () => {
  const rules = [rule('blocks', 'kept', 'load'), rule('blocks', 'denied', 'deny'), rule('memories', '/m/', 'load'), rule('workspace', '/w/', 'allow')];
  assert.deepEqual(matchingBlocks({ rules }, facts).map((r) => r.key), ['kept']);
  assert.deepEqual(matchingBlocks({ rules }, new Set()).map((r) => r.key), []);
});
