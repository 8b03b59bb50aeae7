import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  parseCondition, parseConditions, contextFacts, ruleHolds, evaluatePath, keyMatches, splitTarget, matchingBlocks, isCanonicalRelative, isSnowflake,
  type SessionContext,
} from '../../src/policy/index.js';
import { CONDITIONS } from './fixtures.js';

test('parseCondition accepts exactly the eight forms, with optional "!"', () => {
  const valid = ['discord:nsfw', 'discord:dm', 'discord:dm:123', 'discord:guild:123456789', 'discord:channel:987654321',
    'discord:forum:42', 'internal', 'tui', '!internal', '!discord:dm:5', '!tui', 'discord:channel:18446744073709551615'];
  for (const v of valid) {
    const c = parseCondition(v);
    assert.ok(c, v);
    assert.equal(c.negated, v.startsWith('!'), v);
    assert.equal(c.fact, v.replace(/^!/, ''), v);
  }
  const invalid = ['', 'nsfw', 'discord', 'discord:', 'discord:dm:', 'discord:dm:abc', 'discord:guild', 'discord:guild:0123',
    'discord:nsfw:1', 'internal:1', '!!internal', ' internal', 'internal ', 'Internal', 'discord:thread:1',
    'discord:channel:123456789012345678901', 'discord:guild:-1', 'discord:dm:1.5', '!'];
  for (const v of invalid) assert.equal(parseCondition(v), null, JSON.stringify(v));
});

test('the seed example parses into rules with their lines', () => {
  const r = parseConditions(CONDITIONS);
  assert.equal(r.status, 'ok');
  assert.deepEqual(r.errors, []);
  const rules = r.conditions?.rules ?? [];
  assert.deepEqual(rules.map((x) => [x.section, x.key, x.action, x.mode, x.source.line]), [
    ['blocks', 'nsfw', 'load', 'or', 1],
    ['memories', '/private/', 'allow', 'or', 5],
    ['workspace', '/deploy/', 'allow', 'or', 9],
    ['workspace', '/deploy/keys/', 'deny', 'or', 14],
    ['workspace', '/secrets/', 'allow', 'or', 18],
  ]);
  assert.deepEqual(rules[2]?.conditions.map((c) => c.text), ['discord:guild:123456789', 'discord:channel:987654321']);
});

// Each invalid document: the located error must name the right line, column and key.
const invalidDocs: { name: string; doc: string; line: number; key: RegExp; msg: RegExp }[] = [
  { name: 'unknown section', doc: '[blocks.a]\nwhen = "tui"\naction = "load"\n\n[files."/x"]\nwhen = "tui"\naction = "allow"\n', line: 5, key: /^files$/, msg: /unknown key/ },
  { name: 'unknown key in a rule', doc: '[memories."/a/"]\nwhen = "discord:dm"\naction = "allow"\npriority = 1\n', line: 4, key: /priority/, msg: /unknown key/ },
  { name: 'unknown action', doc: '[memories."/a/"]\nwhen = "discord:dm"\naction = "permit"\n', line: 3, key: /action/, msg: /not allowed/ },
  { name: 'load in memories', doc: '[memories."/a/"]\nwhen = "discord:dm"\naction = "load"\n', line: 3, key: /action/, msg: /not allowed in \[memories\]/ },
  { name: 'allow in blocks', doc: '[blocks.x]\nwhen = "discord:dm"\naction = "allow"\n', line: 3, key: /action/, msg: /not allowed in \[blocks\]/ },
  { name: 'deny in blocks', doc: '[blocks.x]\nwhen = "discord:dm"\naction = "deny"\n', line: 3, key: /action/, msg: /not allowed in \[blocks\]/ },
  { name: 'unknown condition', doc: '[workspace."/a/"]\nwhen = ["discord:dm", "discord:thread:5"]\naction = "allow"\n', line: 2, key: /when/, msg: /unknown condition "discord:thread:5"/ },
  { name: 'condition on a later line of an array', doc: '[workspace."/a/"]\nwhen = [\n  "discord:dm",\n  "discord:guild:abc",\n]\naction = "allow"\n', line: 4, key: /when/, msg: /discord:guild:abc/ },
  { name: 'empty when array', doc: '[workspace."/a/"]\nwhen = []\naction = "allow"\n', line: 2, key: /when/, msg: /non-empty array/ },
  { name: 'when is a number', doc: '[workspace."/a/"]\nwhen = 5\naction = "allow"\n', line: 2, key: /when/, msg: /condition/ },
  { name: 'bad mode', doc: '[workspace."/a/"]\nwhen = "discord:dm"\nmode = "xor"\naction = "allow"\n', line: 3, key: /mode/, msg: /"or" or "and"/ },
  { name: 'missing action', doc: '[workspace."/a/"]\nwhen = "discord:dm"\n', line: 1, key: /^workspace\.\/a\/\.action$/, msg: /^is required; it must be a string: "load", "allow" or "deny"$/ },
  { name: 'missing when', doc: '[workspace."/a/"]\naction = "allow"\n', line: 1, key: /^workspace\.\/a\/\.when$/, msg: /^is required; it must be a condition string/ },
  { name: 'relative path key', doc: '[workspace."a/"]\nwhen = "discord:dm"\naction = "allow"\n', line: 1, key: /workspace/, msg: /must start with "\/"/ },
  { name: 'dot-dot path key', doc: '[workspace."/a/../b"]\nwhen = "discord:dm"\naction = "allow"\n', line: 1, key: /workspace/, msg: /"\.\."/ },
  { name: 'bad block name', doc: '[blocks."../x"]\nwhen = "discord:dm"\naction = "load"\n', line: 1, key: /blocks/, msg: /plain file stem/ },
  { name: 'top-level key', doc: 'debug = true\n', line: 1, key: /debug/, msg: /unknown key/ },
  { name: 'TOML syntax error', doc: '[blocks.a]\nwhen = "tui\naction = "load"\n', line: 2, key: /^$/, msg: /control characters are not allowed in strings/ },
];

for (const c of invalidDocs) {
  test(`conditions.toml invalid: ${c.name} → located error, deny-all`, () => {
    const r = parseConditions(c.doc);
    assert.equal(r.status, 'invalid');
    assert.equal(r.conditions, null, 'an invalid file grants nothing');
    assert.ok(r.errors.length > 0);
    const e = r.errors.find((x) => x.line === c.line);
    assert.ok(e, `an error on line ${c.line}: ${JSON.stringify(r.errors)}`);
    assert.equal(e.file, 'config/conditions.toml');
    assert.ok(typeof e.column === 'number' && e.column >= 1);
    assert.match(e.key ?? '', c.key);
    assert.match(e.message, c.msg);
  });
}

test('missing, empty, whitespace-only and comment-only conditions.toml grant nothing', () => {
  for (const [text, status] of [[null, 'missing'], ['', 'empty'], ['  \n\t\n', 'empty'], ['# nothing\n  # here\n', 'empty']] as const) {
    const r = parseConditions(text);
    assert.equal(r.status, status);
    assert.equal(r.conditions, null);
    assert.ok(r.errors.length === 1 && /grants nothing|denies everything/.test(r.errors[0]?.message ?? ''));
    const d = evaluatePath(r.conditions, '/workspace/anything', contextFacts({ kind: 'internal' }));
    assert.equal(d.decision, 'deny');
    assert.equal(d.step, 0);
  }
});

test('warnings: contradictory "and", tui', () => {
  const r = parseConditions('[memories."/a/"]\nwhen = ["discord:dm", "!discord:dm"]\nmode = "and"\naction = "allow"\n[blocks.t]\nwhen = "tui"\naction = "load"\n');
  assert.equal(r.status, 'ok');
  assert.equal(r.warnings.length, 2);
  assert.ok(r.warnings.some((w) => w.line === 2 && /never holds/.test(w.message)), JSON.stringify(r.warnings));
  assert.ok(r.warnings.some((w) => w.line === 6 && /tui/.test(w.message)), JSON.stringify(r.warnings));
});

const contexts: { ctx: SessionContext; facts: string[] }[] = [
  { ctx: { kind: 'dm', channel: '11' }, facts: ['discord:dm', 'discord:dm:11'] },
  { ctx: { kind: 'guild', guild: '1', channel: '2' }, facts: ['discord:channel:2', 'discord:guild:1'] },
  { ctx: { kind: 'guild', guild: '1', channel: '2', nsfw: true }, facts: ['discord:channel:2', 'discord:guild:1', 'discord:nsfw'] },
  { ctx: { kind: 'guild', guild: '1', channel: '2', forum: '3' }, facts: ['discord:channel:2', 'discord:forum:3', 'discord:guild:1'] },
  { ctx: { kind: 'guild', guild: '1', channel: '2', nsfw: false }, facts: ['discord:channel:2', 'discord:guild:1'] },
  { ctx: { kind: 'internal' }, facts: ['internal'] },
];
for (const c of contexts) {
  test(`context facts: ${JSON.stringify(c.ctx)}`, () => {
    assert.deepEqual([...contextFacts(c.ctx)].sort(), c.facts);
  });
}

test('ruleHolds: or, and, negation', () => {
  const cond = (t: string) => parseCondition(t) ?? assert.fail(t);
  const facts = new Set(['discord:dm', 'discord:dm:11']);
  const table: [string[], 'or' | 'and', boolean][] = [
    [['discord:dm'], 'or', true],
    [['!discord:dm'], 'or', false],
    [['discord:nsfw'], 'or', false],
    [['!discord:nsfw'], 'or', true],
    [['discord:nsfw', 'discord:dm:11'], 'or', true],
    [['discord:nsfw', 'discord:dm:11'], 'and', false],
    [['discord:dm', 'discord:dm:11'], 'and', true],
    [['discord:dm', '!discord:dm:12'], 'and', true],
    [['discord:dm', '!discord:dm:11'], 'and', false],
    [['tui'], 'or', false],
    [['!tui'], 'or', true],
    [['internal'], 'or', false],
  ];
  for (const [when, mode, expected] of table) {
    assert.equal(ruleHolds({ conditions: when.map(cond), mode }, facts), expected, `${mode} ${when.join(',')}`);
  }
  assert.equal(ruleHolds({ conditions: [], mode: 'and' }, facts), false, 'an empty rule never holds (no vacuous truth)');
});

test('keyMatches: prefix on whole segments, exact otherwise', () => {
  const table: [string, string, boolean][] = [
    ['/private/', '/private/a.md', true],
    ['/private/', '/private/deep/er/a.md', true],
    ['/private/', '/private/', true],
    ['/private/', '/private', true],
    ['/private/', '/privateer/a.md', false],
    ['/private/', '/privat', false],
    ['/private/', '/x/private/a', false],
    ['/notes.md', '/notes.md', true],
    ['/notes.md', '/notes.md/', true],
    ['/notes.md', '/notes.md.bak', false],
    ['/notes.md', '/notes', false],
    ['/dir', '/dir/file', false],
    ['/', '/anything/at/all', true],
    ['/', '/', true],
  ];
  for (const [key, rel, expected] of table) assert.equal(keyMatches(key, rel), expected, `${key} vs ${rel}`);
});

test('splitTarget accepts only canonical paths under /memories/ and /workspace/', () => {
  assert.deepEqual(splitTarget('/memories/private/a'), { section: 'memories', rel: '/private/a' });
  assert.deepEqual(splitTarget('/workspace/'), { section: 'workspace', rel: '/' });
  assert.deepEqual(splitTarget('/workspace'), { section: 'workspace', rel: '/' });
  for (const bad of ['/etc/passwd', 'memories/a', '/memories/../etc', '/workspace/a//b', '/workspace/./a', '/memoriesx/a', '', '/workspace/a\u0000b', 'x/memories/a', '/x/workspace/a']) {
    assert.equal(splitTarget(bad), null, bad);
  }
});

test('canonical keys start with "/"; a snowflake is a decimal id without a leading zero', () => {
  for (const ok of ['/', '/a', '/a/', '/a/b.md']) assert.equal(isCanonicalRelative(ok), true, ok);
  for (const bad of ['a', 'a/b', '', 'a/', '.', '..', 'xa', 'ab/c', 'ab/c/']) assert.equal(isCanonicalRelative(bad), false, bad);
  for (const ok of ['1', '123456789012345678', '9'.repeat(20)]) assert.equal(isSnowflake(ok), true, ok);
  for (const bad of ['', '0', '0123', '1'.repeat(21), '12a', ' 12', '-1', '1.5']) assert.equal(isSnowflake(bad), false, bad);
});

// The four steps, on the example file. Each row: target, context, decision, step, deciding key.
const dm: SessionContext = { kind: 'dm', channel: '11' };
const deployGuild: SessionContext = { kind: 'guild', guild: '123456789', channel: '5' };
const deployChannel: SessionContext = { kind: 'guild', guild: '9', channel: '987654321' };
const otherGuild: SessionContext = { kind: 'guild', guild: '9', channel: '5' };
const internal: SessionContext = { kind: 'internal' };
const steps: [string, SessionContext, 'allow' | 'deny', number, string | null][] = [
  ['/memories/private/diary.md', dm, 'allow', 2, '/private/'],
  ['/memories/private/diary.md', otherGuild, 'deny', 3, '/private/'],
  ['/memories/private/diary.md', internal, 'deny', 3, '/private/'],
  ['/memories/privateer.md', otherGuild, 'allow', 4, null],
  ['/memories/public/x', otherGuild, 'allow', 4, null],
  ['/workspace/deploy/run.sh', deployGuild, 'allow', 2, '/deploy/'],
  ['/workspace/deploy/run.sh', deployChannel, 'allow', 2, '/deploy/'],
  ['/workspace/deploy/run.sh', otherGuild, 'deny', 3, '/deploy/'],
  ['/workspace/deploy/run.sh', dm, 'deny', 3, '/deploy/'],
  ['/workspace/deploy/keys/id_ed25519', deployGuild, 'deny', 1, '/deploy/keys/'],
  ['/workspace/deploy/keys/id_ed25519', otherGuild, 'deny', 3, '/deploy/keys/'],
  ['/workspace/secrets/token', internal, 'allow', 2, '/secrets/'],
  ['/workspace/secrets/token', dm, 'deny', 3, '/secrets/'],
  ['/workspace/private/x', otherGuild, 'allow', 4, null], // memories rules never govern workspace paths
];
for (const [target, ctx, decision, step, key] of steps) {
  test(`evaluatePath ${target} in ${ctx.kind}${ctx.kind === 'guild' ? ` ${ctx.guild}/${ctx.channel}` : ''} → ${decision} (step ${step})`, () => {
    const conditions = parseConditions(CONDITIONS).conditions;
    const d = evaluatePath(conditions, target, contextFacts(ctx));
    assert.equal(d.decision, decision);
    assert.equal(d.step, step);
    assert.equal(d.rule?.key ?? null, key);
  });
}

test('step 1 beats step 2: a holding deny wins over a holding allow on the same path', () => {
  const doc = '[memories."/a/"]\nwhen = "discord:dm"\naction = "allow"\n[memories."/a/b"]\nwhen = "discord:dm"\naction = "deny"\n';
  const c = parseConditions(doc).conditions;
  assert.equal(evaluatePath(c, '/memories/a/b', contextFacts(dm)).decision, 'deny');
  assert.equal(evaluatePath(c, '/memories/a/c', contextFacts(dm)).decision, 'allow');
  // A deny that does not hold still counts as a matching rule: with no allow holding, step 3 blocks.
  const denyOnly = parseConditions('[memories."/x/"]\nwhen = "discord:nsfw"\naction = "deny"\n').conditions;
  const d = evaluatePath(denyOnly, '/memories/x/1', contextFacts(dm));
  assert.deepEqual([d.decision, d.step], ['deny', 3]);
});

test('block loading follows the block rules', () => {
  const c = parseConditions(CONDITIONS).conditions;
  assert.deepEqual(matchingBlocks(c, contextFacts({ kind: 'guild', guild: '1', channel: '2', nsfw: true })).map((r) => r.key), ['nsfw']);
  assert.deepEqual(matchingBlocks(c, contextFacts({ kind: 'guild', guild: '1', channel: '2' })).map((r) => r.key), []);
  assert.deepEqual(matchingBlocks(null, contextFacts({ kind: 'guild', guild: '1', channel: '2', nsfw: true })), []);
});

test('evaluatePath gives each step its reason, and the most specific rule', () => {
  const c = parseConditions(`[memories."/a/"]
when = "discord:dm"
action = "allow"

[memories."/a/b/"]
when = "discord:dm"
action = "allow"

[memories."/a/b/c/"]
when = "internal"
action = "deny"

[memories."/a/b/d/"]
when = "discord:dm"
action = "deny"

[memories."/a/b/d/e/"]
when = "discord:dm"
action = "deny"
`).conditions;
  assert.ok(c);
  const dm = contextFacts({ kind: 'dm', channel: '1' });
  const guild = contextFacts({ kind: 'guild', guild: '1', channel: '2' });
  assert.deepEqual(evaluatePath(c, 'memories/x', dm), { decision: 'deny', step: 0, rule: null, matched: [], reason: 'not a canonical path under /memories/ or /workspace/' });
  assert.deepEqual(evaluatePath(null, '/memories/x', dm), { decision: 'deny', step: 0, rule: null, matched: [], reason: 'conditions.toml is missing, empty or invalid: it grants nothing' });
  const allow = evaluatePath(c, '/memories/a/b/c/x', dm);
  assert.equal(allow.decision, 'allow');
  assert.equal(allow.step, 2);
  assert.equal(allow.rule?.key, '/a/b/', 'the most specific allow that holds (the deny for internal does not)');
  assert.equal(allow.reason, 'an allow rule matches the path and the context');
  assert.deepEqual(allow.matched.map((r) => r.key), ['/a/', '/a/b/', '/a/b/c/']);
  const deny = evaluatePath(c, '/memories/a/b/d/e/x', dm);
  assert.deepEqual([deny.decision, deny.step, deny.rule?.key, deny.reason], ['deny', 1, '/a/b/d/e/', 'a deny rule matches the path and the context']);
  const none = evaluatePath(c, '/memories/a/b/c/x', guild);
  assert.deepEqual([none.decision, none.step, none.rule?.key, none.reason], ['deny', 3, '/a/b/c/', 'rules match the path, but none of their conditions hold in this context']);
  const base = evaluatePath(c, '/memories/z', dm);
  assert.deepEqual(base, { decision: 'allow', step: 4, rule: null, matched: [], reason: 'no rule matches the path (baseline: allowed)' });
  // Of two rules as specific, the first in the file decides.
  const two = parseConditions(`[memories."/p/"]
when = "discord:dm"
action = "allow"

[memories."/p"]
when = "discord:dm"
action = "allow"
`).conditions;
  assert.ok(two);
  assert.equal(evaluatePath(two, '/memories/p/x', dm).rule?.key, '/p/');
});

test('matchingBlocks lists only block rules; a holding memories rule is not a block', () => {
  const c = parseConditions(`[blocks.a]
when = "discord:dm"
action = "load"

[memories."/m/"]
when = "discord:dm"
action = "allow"
`).conditions;
  assert.ok(c);
  assert.deepEqual(matchingBlocks(c, contextFacts({ kind: 'dm', channel: '1' })).map((r) => `${r.section}:${r.key}`), ['blocks:a']);
});
