/**
 * The guard's judgement of a runtime's write (docs/PROFILES.md, "The runtime's own writes"):
 * strict and fail closed. Codex refreshing its tokens is its own; anything touching a key
 * outside the rule, a type change, a key renamed, a table in place of a string, a key given
 * twice, a byte-order mark, a huge or deeply nested file, is foreign. Claude Code's "don't
 * ask again" is on the user's behalf. A property: any change of a key outside the rule is
 * never the runtime's own.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { factsFor, fileEntryFor, loadProfiles } from '../../src/profiles/index.js';
import { judgeWrite, JUDGE_MAX_BYTES, JUDGE_MAX_DEPTH } from '../../src/grants/index.js';
import { fingerprintedText, fingerprintedInHistory } from '../../src/grants/redact.js';

const { profiles } = loadProfiles();
const places = { home: '/home/u', project: '/srv/app', root: '/r' };
function factsOf(profile: string, file: string) {
  const p = profiles.find((x) => x.data.name === profile)!.data;
  const e = fileEntryFor(p, file, places)!;
  assert.ok(e, `${profile} has ${file}`);
  return { facts: factsFor(p, e), format: e.format };
}
const AUTH = factsOf('codex', '/home/u/.codex/auth.json');
const LOCAL = factsOf('claude-code', '/srv/app/.claude/settings.local.json');
const SETTINGS = factsOf('claude-code', '/home/u/.claude/settings.json');
const B = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v, null, 2));

const auth = (t: string, extra: Record<string, unknown> = {}) => ({
  auth_mode: 'chatgpt', OPENAI_API_KEY: null,
  tokens: { id_token: `id-${t}`, access_token: `at-${t}`, refresh_token: `rt-${t}`, account_id: 'acct-1' },
  last_refresh: `2026-12-0${t.length}T00:00:00Z`, ...extra,
});
const judge = (a: unknown, b: unknown, f = AUTH) => judgeWrite(f.format, f.facts, B(a), B(b));
/** Set an own key, whatever its name (`__proto__` included: the parsers keep it as a key). */
const put = (o: Record<string, unknown>, k: string, v: unknown) => Object.defineProperty(o, k, { value: v, enumerable: true, configurable: true, writable: true });
const has = (o: Record<string, unknown>, k: string) => Object.hasOwn(o, k);

describe('Codex auth.json: the token fields are Codex\'s own, nothing else', () => {
  it('a token refresh (id, access and refresh tokens, last_refresh) is its own', () => {
    const j = judge(auth('one'), auth('twotwo'));
    assert.equal(j.kind, 'own');
    assert.deepEqual(j.kind === 'own' ? j.keys.sort() : [], ['last_refresh', 'tokens.access_token', 'tokens.id_token', 'tokens.refresh_token']);
  });
  it('the same content written anew (reformatted, keys reordered) is its own', () => {
    const a = auth('one');
    assert.equal(judgeWrite(AUTH.format, AUTH.facts, B(JSON.stringify(a)), B(JSON.stringify({ ...a }, null, 4))).kind, 'own');
  });
  for (const [what, b] of [
    ['an API key switched in', auth('two', { OPENAI_API_KEY: 'sk-evil' })],
    ['the login mode changed', auth('two', { auth_mode: 'apikey' })],
    ['the account changed', { ...auth('two'), tokens: { ...auth('two').tokens, account_id: 'acct-evil' } }],
    ['a base_url added', auth('two', { base_url: 'https://evil.example' })],
    ['a key renamed (last_refresh → lastRefresh)', (() => { const x: Record<string, unknown> = auth('two'); x.lastRefresh = x.last_refresh; delete x.last_refresh; return x; })()],
    ['a table in place of a token', { ...auth('two'), tokens: { ...auth('two').tokens, access_token: { value: 'x' } } }],
    ['a number in place of a token', { ...auth('two'), tokens: { ...auth('two').tokens, access_token: 7 } }],
    ['a list in place of the tokens table', { ...auth('two'), tokens: ['x'] }],
    ['a new key inside tokens', { ...auth('two'), tokens: { ...auth('two').tokens, base_url: 'https://evil' } }],
  ] as const) {
    it(`foreign: ${what}`, () => assert.equal(judge(auth('one'), b).kind, 'foreign'));
  }
  it('foreign: tokens conjured where there were none (a login where the API key was used)', () => {
    const a = { OPENAI_API_KEY: 'sk-mine' };
    assert.equal(judge(a, { OPENAI_API_KEY: 'sk-mine', tokens: { access_token: 'at', id_token: 'i', refresh_token: 'r' } }).kind, 'foreign');
  });
  it('foreign: a key given twice, a byte-order mark, a comment, text that is not UTF-8, nothing at all', () => {
    const ok = JSON.stringify(auth('two'));
    for (const bad of [
      ok.replace('"last_refresh"', '"OPENAI_API_KEY": "sk-evil", "last_refresh"'),
      `\uFEFF${ok}`,
      `// hi\n${ok}`,
      Buffer.concat([Buffer.from(ok.slice(0, -1)), Buffer.from([0xff]), Buffer.from('}')]),
      '',
    ]) {
      const j = judgeWrite(AUTH.format, AUTH.facts, B(auth('one')), typeof bad === 'string' ? Buffer.from(bad) : bad);
      assert.equal(j.kind, 'foreign', String(bad).slice(0, 80));
    }
  });
  it('foreign: a file over the bound, a value nested deeper than the bound', () => {
    const big = auth('two', {});
    (big.tokens as Record<string, unknown>).access_token = 'x'.repeat(JUDGE_MAX_BYTES);
    assert.equal(judge(auth('one'), big).kind, 'foreign');
    const deep = `{"tokens": {"access_token": ${'['.repeat(JUDGE_MAX_DEPTH * 4)}${']'.repeat(JUDGE_MAX_DEPTH * 4)}}}`;
    assert.equal(judgeWrite(AUTH.format, AUTH.facts, B({ tokens: { access_token: [] } }), Buffer.from(deep)).kind, 'foreign');
  });
  it('the reasons name keys, never values', () => {
    const j = judge(auth('one'), auth('two', { OPENAI_API_KEY: 'sk-secret-value' }));
    assert.ok(j.kind === 'foreign' && j.why.includes('OPENAI_API_KEY') && !j.why.includes('sk-secret-value'), JSON.stringify(j));
  });
});

describe("Claude Code settings.local.json: \"don't ask again\" is on the user's behalf", () => {
  it('an allow entry added (the list there or not) is on-behalf; a hook, a mode or a deny removed is foreign', () => {
    assert.equal(judge({ permissions: { allow: ['Read'] } }, { permissions: { allow: ['Read', 'Bash(npm test:*)'] } }, LOCAL).kind, 'on-behalf');
    assert.equal(judge({}, { permissions: { allow: ['Bash(npm test:*)'] } }, LOCAL).kind, 'on-behalf');
    assert.equal(judge({ permissions: { allow: [] } }, { permissions: { allow: [], defaultMode: 'bypassPermissions' } }, LOCAL).kind, 'foreign');
    assert.equal(judge({ permissions: { deny: ['Bash'] } }, { permissions: { deny: [] } }, LOCAL).kind, 'foreign');
    assert.equal(judge({}, { permissions: { allow: ['x'] }, hooks: { Stop: [] } }, LOCAL).kind, 'foreign');
    assert.equal(judge({ permissions: { allow: ['x'] } }, { permissions: { allow: 'x' } }, LOCAL).kind, 'foreign');
    assert.equal(judge({ permissions: { allow: ['x'] } }, { permissions: 'all' }, LOCAL).kind, 'foreign');
  });
  it('a rewrite with no change in meaning is not the runtime\'s own here (it writes only on the user\'s behalf)', () => {
    assert.equal(judgeWrite(LOCAL.format, LOCAL.facts, B('{"a":1}'), B('{\n  "a": 1\n}')).kind, 'foreign');
  });
  it('a file with no runtime-write rule: every change is foreign', () => {
    assert.equal(judge({ permissions: { allow: [] } }, { permissions: { allow: ['Read'] } }, SETTINGS).kind, 'foreign');
  });
});

/** A JSON key that is not one of the rule's (nor `tokens`, the table holding them). */
const otherKey = fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !['tokens', 'last_refresh'].includes(k));
const plain = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean(), fc.constant(null));
const value: fc.Arbitrary<unknown> = fc.oneof(plain, fc.array(plain, { maxLength: 3 }), fc.dictionary(fc.string({ maxLength: 6 }), plain, { maxKeys: 3 }));

describe('property: a change that touches a key outside the rule is never the runtime\'s own', () => {
  it('at the top level (added, removed or changed), with or without a token refresh beside it', () => {
    fc.assert(fc.property(otherKey, fc.option(value, { nil: undefined }), fc.option(value, { nil: undefined }), fc.boolean(), (k, before, after, refresh) => {
      fc.pre(JSON.stringify(before) !== JSON.stringify(after));
      const a: Record<string, unknown> = auth('one');
      const b: Record<string, unknown> = refresh ? auth('twotwo') : auth('one');
      if (before === undefined) delete a[k]; else put(a, k, before);
      if (after === undefined) delete b[k]; else put(b, k, after);
      fc.pre(has(a, k) !== has(b, k) || JSON.stringify(a[k]) !== JSON.stringify(b[k]));
      const j = judge(a, b);
      return j.kind === 'foreign';
    }), { numRuns: 500 });
  });
  it('inside tokens, beside the named token fields', () => {
    fc.assert(fc.property(fc.string({ minLength: 1, maxLength: 12 }).filter((k) => !['id_token', 'access_token', 'refresh_token'].includes(k)), value, (k, v) => {
      const b = auth('twotwo');
      fc.pre(!has(b.tokens, k));
      put(b.tokens, k, v);
      return judge(auth('one'), b).kind === 'foreign';
    }), { numRuns: 300 });
  });
  it('a named token field given any other type is foreign', () => {
    fc.assert(fc.property(fc.constantFrom('id_token', 'access_token', 'refresh_token'), value.filter((v) => typeof v !== 'string'), (k, v) => {
      const b = auth('twotwo');
      (b.tokens as Record<string, unknown>)[k] = v;
      return judge(auth('one'), b).kind === 'foreign';
    }), { numRuns: 300 });
  });
});

describe('a write under way is waited for only where the runtime rewrites credentials by itself', () => {
  it('Codex auth.json: empty, or cut short anywhere, is unfinished; OpenCode\'s opencode.json ($schema its own) and settings.local.json are not', () => {
    const ok = JSON.stringify(auth('two'), null, 2);
    for (const cut of ['', ok.slice(0, 40), ok.slice(0, -2)]) {
      const j = judgeWrite(AUTH.format, AUTH.facts, B(auth('one')), Buffer.from(cut));
      assert.ok(j.kind === 'foreign' && j.unfinished, JSON.stringify(j));
    }
    const dup = judgeWrite(AUTH.format, AUTH.facts, B(auth('one')), Buffer.from(ok.replace('"last_refresh"', '"OPENAI_API_KEY": "sk-evil", "last_refresh"')));
    assert.ok(dup.kind === 'foreign' && !dup.unfinished, 'a key given twice is no write under way (JSON.parse lets the last one win)');
    const after = judgeWrite(AUTH.format, AUTH.facts, B(auth('one')), Buffer.from(`${ok}{`));
    assert.ok(after.kind === 'foreign' && !after.unfinished, 'something after the value is no write under way');
    const bom = judgeWrite(AUTH.format, AUTH.facts, B(auth('one')), Buffer.from(`\uFEFF${ok}`));
    assert.ok(bom.kind === 'foreign' && !bom.unfinished, 'a byte-order mark is no write under way');
    const bad = judgeWrite(AUTH.format, AUTH.facts, B(auth('one')), Buffer.concat([Buffer.from('{"tokens": {"access_token": "'), Buffer.from([0xff]), Buffer.from('"}, "base_url": "x"}')]));
    assert.ok(bad.kind === 'foreign' && !bad.unfinished, 'bytes that are not UTF-8 are no write under way (a lenient reader would read base_url)');
    const oc = factsOf('opencode', '/home/u/.config/opencode/opencode.json');
    for (const f of [oc, LOCAL]) {
      const j = judgeWrite(f.format, f.facts, B({ permission: { bash: 'ask' } }), Buffer.from(''));
      assert.ok(j.kind === 'foreign' && !j.unfinished, JSON.stringify(j));
    }
    assert.equal(judgeWrite(oc.format, oc.facts, B({ permission: { bash: 'ask' } }), B({ $schema: 'https://opencode.ai/config.json', permission: { bash: 'ask' } })).kind, 'own');
    assert.ok(!fingerprintedInHistory(oc.facts), 'opencode.json stays in history as it is');
  });
});

describe('history keeps auth.json with its credential values as fingerprints', () => {
  it('no token text, the other keys as they are', () => {
    assert.ok(fingerprintedInHistory(AUTH.facts));
    assert.ok(!fingerprintedInHistory(LOCAL.facts));
    const t = fingerprintedText(AUTH.format, AUTH.facts, B(auth('secretsecret')));
    assert.ok(!t.includes('secretsecret'), t);
    assert.match(t, /"access_token": "fingerprint:[0-9a-f]{12}"/);
    assert.match(t, /"auth_mode": "chatgpt"/);
    assert.ok(!fingerprintedText(AUTH.format, AUTH.facts, Buffer.from('{"tokens": {"access_token": "secretsecret"')).includes('secretsecret'));
  });
});
