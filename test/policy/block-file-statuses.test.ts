// What `warden check` says of a conditional block file, and what a valid one holds (
// blocks.js's mutants lived because no test read its statuses, messages, positions or body).
// Pure: run per mutant by `npm run mutate -- policy`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { blockNameOf, parseBlock } from '../../src/policy/index.js';

const F = 'blocks/conditional/nsfw.md';

test('blockNameOf: the file name without ".md"; a name without it is kept whole', () => {
  assert.equal(blockNameOf(F), 'nsfw');
  assert.equal(blockNameOf('blocks/conditional/readme'), 'readme');
  assert.equal(blockNameOf('x.md'), 'x');
});

test('parseBlock: missing, empty, no opening "+++", never closed: each its status and its words, at line 1', () => {
  assert.deepEqual(parseBlock(null, F), { block: null, status: 'missing', errors: [{ file: F, message: 'missing' }] });
  assert.deepEqual(parseBlock(' \n\t\n', F), { block: null, status: 'empty', errors: [{ file: F, line: 1, column: 1, message: 'empty: a block needs TOML front matter between "+++" lines with a description' }] });
  const noOpen = { block: null, status: 'invalid', errors: [{ file: F, line: 1, column: 1, message: 'must start with a "+++" line opening the TOML front matter' }] };
  assert.deepEqual(parseBlock('description = "d"\n+++\n', F), noOpen);
  assert.deepEqual(parseBlock('  +++\ndescription = "d"\n+++\n', F), noOpen, 'an indented "+++" does not open');
  assert.deepEqual(parseBlock('+++\ndescription = "d"\n  +++\nbody\n', F), { block: null, status: 'invalid', errors: [{ file: F, line: 1, column: 1, message: 'the front matter opened by "+++" is never closed by a second "+++" line' }] });
});

test('parseBlock: a front matter error is reported at its line in the .md file, with status invalid', () => {
  const bad = parseBlock('+++\n\ndescription = \n+++\n', F);
  assert.equal(bad.status, 'invalid');
  assert.equal(bad.block, null);
  assert.equal(bad.errors.length, 1);
  assert.equal(bad.errors[0]?.line, 3, 'the TOML line 2 is line 3 of the file');
  const empty = parseBlock('+++\n\ndescription = " "\n+++\n', F);
  assert.deepEqual({ ...empty, errors: empty.errors.map((e) => [e.line, e.message]) }, { block: null, status: 'invalid', errors: [[3, 'must not be empty']] });
  const absent = parseBlock('+++\n+++\n', F);
  assert.deepEqual({ ...absent, errors: absent.errors.map((e) => [e.line, e.column, e.key, e.message]) }, { block: null, status: 'invalid', errors: [[1, 1, 'description', 'is required; it must be a string']] });
});

test('parseBlock: a valid block: its name, description, body after the closing line, source at line 1; CRLF and trailing spaces tolerated', () => {
  assert.deepEqual(parseBlock('+++\ndescription = "Mature content"\n+++\n\nYou are in an NSFW context.\n', F), {
    block: { name: 'nsfw', description: 'Mature content', body: '\nYou are in an NSFW context.\n', source: { file: F, line: 1, column: 1 } },
    status: 'ok', errors: [],
  });
  const crlf = parseBlock('+++  \r\ndescription = "d"\r\n+++ \r\na\rb\r\nend', F);
  assert.equal(crlf.status, 'ok');
  assert.equal(crlf.block?.body, 'a\rb\nend', 'only a line\'s final CR is dropped');
});
