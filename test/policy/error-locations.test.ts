// Where a policy error points, and what it says when no key can be found (locate.js's
// mutants lived because no test read the line and column a person is sent to). Pure: run per
// mutant by `npm run mutate -- policy`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ensureLocated, errAt, lazyProperty, locateValue, shiftLines } from '../../src/policy/locate.js';

test('locateValue: the quoted value on the key\'s line, after the key, in double or single quotes', () => {
  assert.deepEqual(locateValue('channels = ["a", "b"]\n', ['channels'], 'b'), { line: 1, column: 18 });
  assert.deepEqual(locateValue("channels = ['a', 'b']\n", ['channels'], 'b'), { line: 1, column: 18 });
  // The key itself is quoted like the value: the value after it is meant, found from the key on.
  assert.deepEqual(locateValue('x = 1\n"v" = "v"\n', ['v'], 'v'), { line: 2, column: 1 }, 'the match at the key\'s own column counts');
});

test('locateValue: an array over several lines: the value\'s own line and column, even at column 1', () => {
  assert.deepEqual(locateValue('k = [\n"v"]\n', ['k'], 'v'), { line: 2, column: 1 });
  assert.deepEqual(locateValue('k = [\n  "a",\n  "v",\n]\n', ['k'], 'v'), { line: 3, column: 3 });
  // The key is indented in its table; a later line is searched from its start.
  assert.deepEqual(locateValue('[t]\n  k = [\n"v"]\n', ['t', 'k'], 'v'), { line: 3, column: 1 });
  // The first occurrence from the key on, a comment's included (best effort, for pointing).
  assert.deepEqual(locateValue('[t] # "v"\nk = ["v"]\n', ['t'], 'v'), { line: 1, column: 7 });
  assert.deepEqual(locateValue('a = "v"; \nb = "w"\n', ['b'], 'v'), { line: 2, column: 1 }, 'a value only on an earlier line: the key');
});

test('locateValue: looks 200 lines from the key, no further; a value not found leaves the key\'s position; an unknown key gives nothing', () => {
  const within = `k = [\n${'"x",\n'.repeat(198)}"v"]\n`; // "v" on the key's line + 199
  assert.deepEqual(locateValue(within, ['k'], 'v'), { line: 200, column: 1 });
  const past = `k = [\n${'"x",\n'.repeat(199)}"v"]\n`; // on line + 200: outside the window
  assert.deepEqual(locateValue(past, ['k'], 'v'), { line: 1, column: 1 });
  const far = `k = [\n${'"x",\n'.repeat(400)}"v"]\n`;
  assert.deepEqual(locateValue(far, ['k'], 'v'), { line: 1, column: 1 });
  // The key on a later line: the window starts there (line 3), so line 202 is still in it.
  const later = `a = 1\nb = 2\nk = [\n${'"x",\n'.repeat(198)}"v"]\n`;
  assert.deepEqual(locateValue(later, ['k'], 'v'), { line: 202, column: 1 });
  assert.deepEqual(locateValue('k = ["a"]\n', ['k'], 'v'), { line: 1, column: 1 });
  assert.deepEqual(locateValue('k = ["a"]', ['k'], 'Stryker was here!'), { line: 1, column: 1 });
  assert.equal(locateValue('k = 1\n', ['j'], 'v'), undefined);
});

test('errAt: at the key (or its value), shifted by the front matter\'s offset, with the dotted key; nothing invented when not found', () => {
  assert.deepEqual(errAt('orgs/a.toml', 'x = 1\nk = "undefined"\n', ['k'], 'bad'), { file: 'orgs/a.toml', message: 'bad', line: 2, column: 1, key: 'k' });
  assert.deepEqual(errAt('orgs/a.toml', 'k = ["a", "b"]\n', ['k'], 'bad', 'b'), { file: 'orgs/a.toml', message: 'bad', line: 1, column: 11, key: 'k' });
  assert.deepEqual(errAt('b.md', '[a]\nb = [1, 2]\n', ['a', 'b', 1], 'bad', undefined, 3), { file: 'b.md', message: 'bad', line: 5, column: 1, key: 'a.b.1' });
  assert.deepEqual(errAt('f', 'k = 1\n', ['j'], 'bad'), { file: 'f', message: 'bad', key: 'j' });
  const top = errAt('f', 'k = 1\n', [], 'bad');
  assert.deepEqual(top, { file: 'f', message: 'bad' });
  assert.ok(!('key' in top) && !('line' in top), 'no empty key, no line');
});

test('shiftLines: a located error moves by the offset, one without a line stays as it is', () => {
  assert.deepEqual(shiftLines([{ file: 'f', message: 'm', line: 2, column: 4 }, { file: 'f', message: 'n' }], 1), [{ file: 'f', message: 'm', line: 3, column: 4 }, { file: 'f', message: 'n' }]);
});

test('ensureLocated: an absent key reads "is required" at the document\'s start; other errors keep their words', () => {
  const at = (message: string, line?: number) => ensureLocated([{ file: 'f', message }], line)[0];
  assert.deepEqual(at('Invalid input: expected string, received undefined'), { file: 'f', message: 'is required', line: 1, column: 1 });
  assert.deepEqual(at('must be a string', 2), { file: 'f', message: 'is required; it must be a string', line: 2, column: 1 });
  assert.deepEqual(at('received undefined, then more'), { file: 'f', message: 'received undefined, then more', line: 1, column: 1 });
  assert.deepEqual(at('it must be a string'), { file: 'f', message: 'it must be a string', line: 1, column: 1 });
  assert.deepEqual(at('x must be set, received undefined'), { file: 'f', message: 'is required', line: 1, column: 1 });
  const kept = { file: 'f', message: 'must be a string', line: 4, column: 2 };
  assert.deepEqual(ensureLocated([kept]), [kept], 'a located error is left alone');
});

test('lazyProperty: computed once on first read, enumerable (a spread sees it), replaceable by assignment and by a new definition', () => {
  let calls = 0;
  const o = lazyProperty({ a: 1 } as { a: number; b?: number }, 'b', () => { calls++; return 7; });
  assert.equal(calls, 0, 'not computed before it is read');
  assert.deepEqual({ ...o }, { a: 1, b: 7 });
  assert.deepEqual(Object.keys(o), ['a', 'b']);
  assert.equal(o.b, 7);
  assert.equal(calls, 1, 'computed once');
  const s = lazyProperty({} as { b?: number }, 'b', () => { calls++; return 7; });
  s.b = 9;
  assert.equal(s.b, 9);
  assert.equal(calls, 1, 'an assigned value is never computed over');
  Object.defineProperty(o, 'b', { value: 3 });
  assert.equal(o.b, 3, 'configurable: a later definition replaces it');
});
