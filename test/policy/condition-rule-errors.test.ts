/**
 * conditions.toml, pure: the exact error a person reads for each malformed shape (message,
 * key, line, column), the fast paths that skip the schema agreeing with it, the id rule's
 * wording, the warnings, the result cache (per file, copies, eviction), ties between rules,
 * and how a rule is named in messages. Run per mutant by `npm run mutate -- policy`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseConditions, plainRule, plainSections, ruleLabel, evaluatePath, parseCondition, ruleSchema, sectionsSchema } from '../../src/policy/conditions.js';
import type { Rule } from '../../src/policy/types.js';

const F = 'f.toml';
const ws = (rule: string): string => `[workspace]\n"/a/" = ${rule}\n`;
const errorsOf = (text: string) => parseConditions(text, F).errors.map((e) => ({ ...e }));

test('each structural error of a rule: its message, key, line and column', () => {
  const at = (key: string, message: string) => [{ file: F, key, message, line: 2, column: 1 }];
  assert.deepEqual(errorsOf(ws('{ when = "internal", mode = "xor", action = "allow" }')), at('workspace./a/.mode', 'must be "or" or "and"'));
  assert.deepEqual(errorsOf(ws('{ when = ["internal", 3], action = "allow" }')), at('workspace./a/.when', 'must be a condition string or a non-empty array of condition strings'));
  assert.deepEqual(errorsOf(ws('{ when = 5, action = "allow" }')), at('workspace./a/.when', 'must be a condition string or a non-empty array of condition strings'));
  assert.deepEqual(errorsOf(ws('{ when = "internal", action = "allow", extra = 1 }')), at('workspace./a/.extra', 'unknown key "extra"'));
  assert.deepEqual(errorsOf(ws('1')), at('workspace./a/', 'must be a table of when, mode and action'));
  assert.deepEqual(errorsOf(ws('[1, 2]')), at('workspace./a/', 'must be a table of when, mode and action'));
  assert.deepEqual(errorsOf(ws('{ when = "internal" }')), at('workspace./a/.action', 'is required; it must be a string: "load", "allow" or "deny"'));
  assert.deepEqual(errorsOf(ws('{ when = "internal", action = 1 }')), at('workspace./a/.action', 'must be a string: "load", "allow" or "deny"'));
  assert.deepEqual(errorsOf(ws('{ when = [], action = "allow" }')), [{ file: F, message: 'must be a condition string or a non-empty array of condition strings', line: 2, column: 1, key: 'workspace./a/.when' }]);
});

test('each structural error of a section: must be a table of rules; an unknown section is named', () => {
  assert.deepEqual(errorsOf('workspace = [1]\n'), [{ file: F, key: 'workspace', message: 'must be a table of rules', line: 1, column: 1 }]);
  assert.deepEqual(errorsOf('blocks = "x"\n'), [{ file: F, key: 'blocks', message: 'must be a table of rules', line: 1, column: 1 }]);
  assert.deepEqual(errorsOf('\nmemories = 3\n'), [{ file: F, key: 'memories', message: 'must be a table of rules', line: 2, column: 1 }]);
  assert.deepEqual(errorsOf('[other]\n"/a/" = { when = "internal", action = "allow" }\n'), [{ file: F, key: 'other', message: 'unknown key "other"', line: 1, column: 1 }]);
  // The other sections' rules are still checked beside a broken one.
  const both = errorsOf('blocks = "x"\n[workspace]\n"/a/" = { when = "nope", action = "allow" }\n');
  assert.equal(both.length, 2, JSON.stringify(both));
  assert.equal(both[0]!.message, 'must be a table of rules');
  assert.match(both[1]!.message, /^unknown condition "nope"/);
});

test('a structural error hides no condition or action error of the same rule', () => {
  const e = errorsOf(ws('{ when = ["internal", "bogus"], mode = "xor", action = "load" }'));
  assert.deepEqual(e.map((x) => x.key).sort(), ['workspace./a/.action', 'workspace./a/.mode', 'workspace./a/.when']);
  assert.ok(e.some((x) => x.message === 'action "load" is not allowed in [workspace]: use "allow" or "deny"'));
  assert.ok(e.some((x) => x.message.startsWith('unknown condition "bogus"')));
  // In [blocks] the legal action is named alone.
  assert.deepEqual(errorsOf('[blocks]\nb = { when = "internal", action = "allow" }\n').map((x) => x.message), ['action "allow" is not allowed in [blocks]: use "load"']);
});

test('an id that breaks the rule says the rule; an unknown condition lists the eight forms', () => {
  for (const [kind, id] of [['guild', '0123'], ['channel', '123456789012345678901'], ['dm', '12a'], ['forum', '']] as const) {
    const w = `discord:${kind}:${id}`;
    const e = errorsOf(ws(`{ when = "${w}", action = "allow" }`));
    assert.deepEqual(e.map((x) => [x.message, x.line, x.column, x.key]), [[`condition "${w}" has an invalid id "${id}": a Discord id is 1 to 20 decimal digits with no leading zero (discord:${kind}:<id>)`, 2, 18, 'workspace./a/.when']]);
  }
  const neg = errorsOf(ws('{ when = "!discord:guild:0", action = "allow" }'));
  assert.equal(neg[0]!.message, 'condition "!discord:guild:0" has an invalid id "0": a Discord id is 1 to 20 decimal digits with no leading zero (discord:guild:<id>)');
  assert.deepEqual(errorsOf(ws('{ when = "discord:server:1", action = "allow" }')).map((x) => x.message), ['unknown condition "discord:server:1": expected discord:nsfw, discord:dm, discord:dm:<id>, discord:guild:<id>, discord:channel:<id>, discord:forum:<id>, internal or tui (optionally with a leading "!"; an id is 1 to 20 decimal digits with no leading zero)']);
  assert.equal(parseCondition('discord:guild:12345678901234567890')?.fact, 'discord:guild:12345678901234567890', '20 digits is an id');
});

test('warnings: exact words and lines; none for a negated tui, none when a condition is invalid', () => {
  const r = parseConditions('[workspace]\n"/a/" = { when = ["internal", "!internal"], mode = "and", action = "allow" }\n"/b/" = { when = ["tui"], action = "allow" }\n"/c/" = { when = "!tui", action = "allow" }\n"/d/" = { when = ["internal", "!internal"], action = "allow" }\n', F);
  assert.equal(r.status, 'ok');
  assert.deepEqual(r.warnings.map((w) => [w.message, w.line, w.key]), [
    ['mode = "and" with both a condition and its negation: this rule never holds', 2, 'workspace./a/.when'],
    ['"tui" never holds in this runtime (it has no TUI sessions)', 3, 'workspace./b/.when'],
  ]);
  const bad = parseConditions(ws('{ when = ["tui", "nope"], mode = "and", action = "allow" }') + '"/e/" = { when = ["internal", "!internal", "x"], mode = "and", action = "allow" }\n', F);
  assert.deepEqual(bad.warnings, [], 'a rule with an invalid condition gets its errors, not warnings');
  assert.equal(bad.errors.length, 2);
});

test('a valid rule: its conditions, mode (default "or"), action and source line', () => {
  const r = parseConditions('[memories]\n"/x/" = { when = ["internal", "!discord:dm"], mode = "and", action = "deny" }\n\n[blocks.b]\nwhen = "discord:nsfw"\naction = "load"\n', F);
  assert.equal(r.status, 'ok');
  const [b, m] = r.conditions!.rules as Rule[]; // in section order: blocks, memories, workspace
  assert.deepEqual({ s: m!.section, k: m!.key, mode: m!.mode, a: m!.action, c: m!.conditions.map((c) => [c.text, c.negated, c.fact]) },
    { s: 'memories', k: '/x/', mode: 'and', a: 'deny', c: [['internal', false, 'internal'], ['!discord:dm', true, 'discord:dm']] });
  assert.deepEqual({ s: b!.section, k: b!.key, mode: b!.mode, a: b!.action }, { s: 'blocks', k: 'b', mode: 'or', a: 'load' });
  assert.equal(m!.source?.file, F);
  assert.equal(m!.source?.line, 2);
  assert.equal(b!.source?.line, 4);
});

test('plainRule and plainSections say "plain" exactly where the schema finds nothing to say', () => {
  const obj = (o: Record<string, unknown>) => Object.assign(Object.create(null) as Record<string, unknown>, o);
  const rules: [unknown, boolean][] = [
    [obj({ when: 'internal', action: 'allow' }), true],
    [obj({ when: ['internal', 'tui'], mode: 'and', action: 'deny' }), true],
    [{ when: 'internal', mode: 'or', action: 'load' }, true],
    [obj({ when: 'internal', mode: 'xor', action: 'allow' }), false],
    [obj({ when: ['internal', 3], action: 'allow' }), false],
    [obj({ when: 3, action: 'allow' }), false],
    [obj({ when: 'internal', action: 1 }), false],
    [obj({ when: 'internal', action: 'allow', extra: 1 }), false],
    [obj({ when: 'internal' }), false],
    [obj({ action: 'allow' }), false],
    [obj({ when: 'internal', mode: 'or' }), false],
    [obj({ mode: 'or', action: 'allow' }), false],
    [obj({}), false],
    [['internal'], false],
    [null, false],
    ['internal', false],
    [new Date(0), false],
  ];
  for (const [v, plain] of rules) {
    assert.equal(plainRule(v), plain, `plainRule(${JSON.stringify(v)})`);
    assert.equal(ruleSchema.safeParse(v).success, plain, `the schema agrees on ${JSON.stringify(v)}`);
  }
  const sections: [Record<string, unknown>, boolean][] = [
    [obj({}), true],
    [obj({ blocks: obj({}), memories: obj({}), workspace: {} }), true],
    [obj({ other: obj({}) }), false],
    [obj({ workspace: [] }), false],
    [obj({ workspace: 'x' }), false],
    [obj({ workspace: null }), false],
    [obj({ memories: new Date(0) }), false],
    [obj({ workspace: JSON.parse('{"__proto__": {"when": "internal", "action": "allow"}}') as Record<string, unknown> }), false],
    [obj({ blocks: obj({}), x: obj({}) }), false],
  ];
  for (const [v, plain] of sections) assert.equal(plainSections(v), plain, `plainSections(${JSON.stringify(v)})`);
  for (const [v, plain] of sections.slice(0, 7)) assert.equal(sectionsSchema.safeParse(v).success, plain, `the schema agrees on ${JSON.stringify(v)}`);
});

test('the result cache: per text and per file, copies every time, and a text evicted is parsed again alike', () => {
  const bad = ws('{ when = "nope", action = "allow" }');
  const a = parseConditions(bad, 'a.toml');
  const b = parseConditions(bad, 'b.toml');
  assert.equal(a.errors[0]!.file, 'a.toml');
  assert.equal(b.errors[0]!.file, 'b.toml', 'the same text in another file names that file');
  a.errors.push({ file: 'junk', message: 'junk' });
  a.warnings.push({ file: 'junk', message: 'junk' });
  assert.equal(parseConditions(bad, 'a.toml').errors.length, 1, 'a caller changing a result changes no later result');
  assert.equal(parseConditions(bad, 'a.toml').warnings.length, 0);
  const ok = ws('{ when = "internal", action = "allow" }');
  const r1 = parseConditions(ok, F);
  (r1.conditions!.rules as Rule[]).length = 0;
  assert.equal(parseConditions(ok, F).conditions!.rules.length, 1, 'the rules array is a copy');
  // Five other texts push it out of the cache; parsed again it says the same.
  for (let i = 0; i < 5; i++) parseConditions(ws(`{ when = "internal", action = "deny" }\n# ${i}`), F);
  const again = parseConditions(bad, 'a.toml');
  assert.deepEqual(again.errors.map((e) => [e.file, e.message]), [['a.toml', a.errors[0]!.message]]);
  assert.equal(again.status, 'invalid');
  assert.deepEqual(parseConditions(null, F).errors.map((e) => e.message), ['missing: conditions.toml grants nothing, so every /memories/ and /workspace/ path is denied and no block loads']);
  assert.deepEqual(parseConditions(' \n# c\n', F).errors.map((e) => [e.line, e.column, e.message]), [[1, 1, 'empty (only whitespace or comments): an empty manifest denies everything, so every /memories/ and /workspace/ path is denied and no block loads']]);
});

test('between two matching rules of the same length the first in file order decides', () => {
  const rule = (key: string, action: 'allow' | 'deny', n: string): Rule => ({ section: 'workspace', key, conditions: [{ text: 'internal', negated: false, fact: 'internal' }], mode: 'or', action, source: { file: n } } as Rule);
  const rules = [rule('/a/', 'allow', 'first'), rule('/a/', 'allow', 'second')];
  const d = evaluatePath({ rules }, '/workspace/a/x', new Set(['internal']));
  assert.equal(d.rule?.source?.file, 'first');
  const none = evaluatePath({ rules }, '/workspace/a/x', new Set());
  assert.equal(none.step, 3);
  assert.equal(none.rule?.source?.file, 'first');
  const longer = evaluatePath({ rules: [rule('/a/', 'allow', 'short'), rule('/a/b/', 'allow', 'long')] }, '/workspace/a/b/c', new Set(['internal']));
  assert.equal(longer.rule?.source?.file, 'long', 'the longer key is the more specific');
});

test('ruleLabel: a plain block name bare, anything else quoted', () => {
  assert.equal(ruleLabel({ section: 'blocks', key: 'nsfw' }), 'blocks.nsfw');
  assert.equal(ruleLabel({ section: 'blocks', key: 'a b' }), 'blocks."a b"');
  assert.equal(ruleLabel({ section: 'memories', key: '/private/' }), 'memories."/private/"');
  assert.equal(ruleLabel({ section: 'workspace', key: 'nsfw' }), 'workspace."nsfw"');
});

test('a missing, blank or unparsable file has its one error and no warning', () => {
  for (const text of [null, '', '# only\n', '[workspace\n']) {
    const r = parseConditions(text, F);
    assert.equal(r.errors.length, 1, String(text));
    assert.deepEqual(r.warnings, [], `no warning for ${JSON.stringify(text)}`);
    assert.equal(r.conditions, null);
  }
});

test('only a condition that starts with discord:<kind>: gets the invalid-id words', () => {
  assert.match(errorsOf(ws('{ when = "xdiscord:guild:1", action = "allow" }'))[0]!.message, /^unknown condition "xdiscord:guild:1": expected/);
});

test('the "and" warnings: only for a real contradiction, among other conditions too; tui among others', () => {
  const warn = (when: string, mode: string) => parseConditions(ws(`{ when = ${when}, mode = "${mode}", action = "allow" }`), F).warnings.map((w) => w.message);
  assert.deepEqual(warn('["internal", "discord:nsfw"]', 'and'), [], 'two different facts: no contradiction');
  assert.deepEqual(warn('["!internal", "!discord:nsfw"]', 'and'), []);
  assert.deepEqual(warn('["internal", "!discord:nsfw"]', 'and'), [], 'a negation of another fact is no contradiction');
  assert.deepEqual(warn('["internal", "!discord:nsfw", "!internal"]', 'and'), ['mode = "and" with both a condition and its negation: this rule never holds']);
  assert.deepEqual(warn('["internal", "!internal"]', 'or'), [], 'under "or" it can hold');
  assert.deepEqual(warn('["internal", "tui"]', 'or'), ['"tui" never holds in this runtime (it has no TUI sessions)']);
});
