/**
 * The policy's lookups against their plain definitions: the decision index (rulesMatching)
 * beside a filter, the first folder containing a path below and above the scan threshold, the
 * canonical relative path by segments, the parse cache, and which paths are policy files.
 * Pure: in `npm run mutate -- policy` (scripts/mutate.mjs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyMatches, policyKindOf } from '../../src/policy/index.js';
import { firstFolderContaining, rulesMatching } from '../../src/policy/decide.js';
import { isCanonicalRelative, isCanonicalRelativeBySegments, keySpecificity, splitTarget } from '../../src/policy/paths.js';
import { recentResults } from '../../src/policy/recent.js';

// ---------------------------------------------------------------- decision index

const RULE_KEYS = ['/a/', '/a/b.md', '/a/b/', '/', '/a', '/c/', '/a/b.md/', '/a/', '/ab/', '/a/b/c'];
const rules = RULE_KEYS.flatMap((key, i) => [
  { section: 'workspace' as const, key, i },
  { section: 'memories' as const, key, i },
]).map(({ section, key, i }) => ({ section, key, when: [], mode: 'and' as const, action: 'allow' as const, source: { file: 'c', line: i + 1 } }));
const PATHS = ['/', '/a', '/a/', '/a/b.md', '/a/b.md/', '/a/b', '/a/b/', '/a/b/c', '/a/b/c/', '/ab', '/abc', '/c', '/c/d', '/x'];

test('rulesMatching gives the same rules, in file order, as a filter with keyMatches', () => {
  for (const section of ['workspace', 'memories'] as const) {
    for (const rel of PATHS) {
      const want = rules.filter((r) => r.section === section && keyMatches(r.key, rel));
      assert.deepEqual(rulesMatching(rules as never, section, rel), want, `${section} ${rel}`);
    }
  }
  assert.deepEqual(rulesMatching(rules.filter((r) => r.section === 'workspace') as never, 'memories', '/a'), []);
});

test('rulesMatching: a list that grew in place is indexed again', () => {
  const list = rules.slice(0, 2) as never[];
  assert.equal(rulesMatching(list, 'workspace', '/c/d').length, 0);
  (list as unknown[]).push(...rules.filter((r) => r.key === '/c/'));
  assert.equal(rulesMatching(list, 'workspace', '/c/d').length, 1);
});

test('firstFolderContaining: below and above the scan threshold, the first folder in list order that contains the path', () => {
  const scanOf = (section: string, rel: string) => (f: string) => { const s = splitTarget(f); return s !== null && s.section === section && keyMatches(s.rel, rel); };
  const base = ['/workspace/z/', '/workspace/a/b/', '/workspace/a/', '/memories/a/', '/workspace/a/b.md', 'junk', '/workspace/q'];
  for (let n = 15; n <= 17; n++) {
    const filler = Array.from({ length: Math.max(0, n - base.length) }, (_, i) => `/workspace/f${i}/`);
    const folders = [...base, ...filler].slice(0, n);
    for (const section of ['workspace', 'memories'] as const) {
      for (const rel of [...PATHS, '/z/1', '/f3/x', '/q', '/q/']) {
        const scan = scanOf(section, rel);
        const want = folders.find(scan) ?? null;
        assert.equal(firstFolderContaining(folders, section, rel, scan), want, `${n} ${section} ${rel}`);
      }
    }
  }
  // A section no folder names: nothing, without a scan.
  const many = Array.from({ length: 20 }, (_, i) => `/workspace/f${i}/`);
  assert.equal(firstFolderContaining(many, 'memories', '/f1/x', () => true), null);
  // The index is rebuilt when the list grew in place.
  assert.equal(firstFolderContaining(many, 'workspace', '/new/x', () => true), null);
  many.push('/workspace/new/');
  assert.equal(firstFolderContaining(many, 'workspace', '/new/x', () => false), '/workspace/new/');
});

test('firstFolderContaining: with a prefix folder after an exact one, the earliest index wins', () => {
  const folders = [...Array.from({ length: 16 }, (_, i) => `/workspace/f${i}/`), '/workspace/a/b', '/workspace/a/'];
  assert.equal(firstFolderContaining(folders, 'workspace', '/a/b', () => false), '/workspace/a/b');
  const rev = [...Array.from({ length: 16 }, (_, i) => `/workspace/f${i}/`), '/workspace/a/', '/workspace/a/b'];
  assert.equal(firstFolderContaining(rev, 'workspace', '/a/b', () => false), '/workspace/a/');
});

// ---------------------------------------------------------------- path helpers

test('isCanonicalRelativeBySegments: the segment-by-segment definition', () => {
  const yes = ['/', '/a', '/a/', '/a/b', '/a/b/', '/.a', '/a./b', '/...'];
  const no = ['', 'a', 'ab', 'a/b', 'a/', '//', '/a//b', '/./', '/.', '/..', '/a/..', '/a/./b', '/a/../', '/a\u0000', '/a\u001f', '/a\u007f', '//a'];
  for (const s of yes) assert.equal(isCanonicalRelativeBySegments(s), true, JSON.stringify(s));
  for (const s of no) assert.equal(isCanonicalRelativeBySegments(s), false, JSON.stringify(s));
  assert.equal(keySpecificity('/a/b/'), 5);
  for (const s of ['/a/..', '/a/.', '/..']) assert.equal(isCanonicalRelative(s), false, s);
});

test('recentResults: a repeat of (text, file) is not parsed again, a new one is; each caller gets a copy', () => {
  let calls = 0;
  const parse = recentResults((t: string, f: string) => { calls++; return { v: [`${f}:${t}`] }; }, (r) => ({ v: [...r.v] }), 2);
  const a = parse('x', 'f');
  a.v.push('mine');
  assert.deepEqual(parse('x', 'f'), { v: ['f:x'] });
  assert.equal(calls, 1);
  parse('x', 'g');
  assert.equal(calls, 2);
  parse('x', 'f'); // both still held: a cache of 2 holds 2
  parse('x', 'g');
  assert.equal(calls, 2);
  parse('y', 'f');
  parse('x', 'f'); // evicted by the two newer ones
  assert.equal(calls, 4);
});

// ---------------------------------------------------------------- loader: kinds and health

test('policyKindOf: only the policy paths, spelled exactly', () => {
  const cases: [string, string | null][] = [
    ['config/conditions.toml', 'conditions'], ['config/guests.toml', 'guests'], ['config/warden.toml', 'warden'],
    ['orgs/a.toml', 'org'], ['orgs/a/b.toml', null], ['xorgs/a.toml', null], ['orgs/a.toml.bak', null], ['orgs/.toml', null],
    ['blocks/conditional/a.md', 'block'], ['blocks/conditional/a/b.md', null], ['xblocks/conditional/a.md', null], ['blocks/conditional/a.mdx', null],
    ['config/other.toml', null],
  ];
  for (const [p, k] of cases) assert.equal(policyKindOf(p), k, p);
});
