/**
 * The formats a profile names parse through their own parsers into plain data, and every
 * error says file, line and column (docs/PROFILES.md, "Formats").
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseAs, BODY_KEY, positionAt } from '../../src/formats/index.js';

const ok = (r: ReturnType<typeof parseAs>): unknown => { assert.ok(r.ok, r.ok ? '' : JSON.stringify(r.error)); return r.ok ? r.value : undefined; };
const err = (r: ReturnType<typeof parseAs>) => { assert.ok(!r.ok, 'expected an error'); return r.ok ? undefined! : r.error; };

describe('JSON and JSONC (jsonc-parser)', () => {
  it('parses plain JSON into plain data', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(ok(parseAs('json', '{"a": [1, "x", true, null], "b": {"c": 2}}', 'f.json')))), { a: [1, 'x', true, null], b: { c: 2 } });
  });

  it('plain JSON refuses a comment and a trailing comma, located; JSONC takes both', () => {
    const c = err(parseAs('json', '{\n  "a": 1 // no\n}', 'f.json'));
    assert.deepEqual([c.file, c.line, c.column], ['f.json', 2, 10]);
    assert.match(c.message, /comments are not allowed/);
    const t = err(parseAs('json', '{\n  "a": [1, 2,]\n}', 'f.json'));
    assert.equal(t.line, 2);
    assert.match(t.message, /trailing comma/);
    assert.deepEqual(JSON.parse(JSON.stringify(ok(parseAs('jsonc', '// top\n{\n  "a": [1, 2,], /* x */\n}', 'f.jsonc')))), { a: [1, 2] });
  });

  it('a missing comma is located on its line and column', () => {
    const e = err(parseAs('jsonc', '{\n  "a": 1\n  "b": 2\n}', 'settings.json'));
    assert.deepEqual([e.line, e.column], [3, 3]);
    assert.match(e.message, /","/);
  });

  it('a key given twice in one object is refused with the second one located', () => {
    const e = err(parseAs('json', '{\n  "permissions": {"allow": []},\n  "permissions": {"allow": ["Bash"]}\n}', 'f.json'));
    assert.deepEqual([e.line, e.column, e.key], [3, 3, 'permissions']);
  });

  it('a key named __proto__ is an ordinary key and sets no prototype', () => {
    const v = ok(parseAs('json', '{"__proto__": {"polluted": true}, "x": 1}', 'f.json')) as Record<string, unknown>;
    assert.ok(Object.hasOwn(v, '__proto__'));
    assert.equal(Object.getPrototypeOf(v), null);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('empty content is an error, not an empty object', () => {
    assert.match(err(parseAs('json', '   \n', 'f.json')).message, /value/);
  });
});

describe('JSON5 (json5)', () => {
  it('parses comments, unquoted keys, single quotes and trailing commas', () => {
    const v = ok(parseAs('json5', "// c\n{channels: {discord: {dmPolicy: 'allowlist', allowFrom: ['1',],},},}", 'openclaw.json'));
    assert.deepEqual(JSON.parse(JSON.stringify(v)), { channels: { discord: { dmPolicy: 'allowlist', allowFrom: ['1'] } } });
  });
  it('an error is located by line and column', () => {
    const e = err(parseAs('json5', '{\n  a: 1,\n  b: ?\n}', 'openclaw.json'));
    assert.deepEqual([e.file, e.line, e.column], ['openclaw.json', 3, 6]);
  });
});

describe('TOML (smol-toml)', () => {
  it('parses and locates an error', () => {
    assert.deepEqual(JSON.parse(JSON.stringify(ok(parseAs('toml', 'sandbox_mode = "read-only"\n[mcp_servers.x]\ncommand = "node"\n', 'config.toml')))), { sandbox_mode: 'read-only', mcp_servers: { x: { command: 'node' } } });
    const e = err(parseAs('toml', 'a = 1\nb = \n', 'config.toml'));
    assert.equal(e.line, 2);
  });
});

describe('Markdown with front matter (yaml)', () => {
  it('keys of the front matter, and the body under its own key', () => {
    const v = ok(parseAs('markdown-frontmatter', '---\nname: reviewer\ntools: Read, Grep\n---\nYou review.\n', 'a.md')) as Record<string, unknown>;
    assert.equal(v.name, 'reviewer');
    assert.equal(v.tools, 'Read, Grep');
    assert.equal(v[BODY_KEY], 'You review.\n');
  });
  it('a file without front matter is its body alone', () => {
    assert.deepEqual(Object.keys(ok(parseAs('markdown-frontmatter', '# Title\n', 'a.md')) as object), [BODY_KEY]);
  });
  it('a YAML error is located on the file\'s own line; a duplicate key is refused; an unclosed block too', () => {
    const e = err(parseAs('markdown-frontmatter', '---\nname: a\ntools: [Read\n---\nbody\n', 'a.md'));
    assert.ok(e.line !== undefined && e.line >= 3, JSON.stringify(e));
    assert.match(err(parseAs('markdown-frontmatter', '---\nname: a\nname: b\n---\n', 'a.md')).message, /front matter/);
    assert.match(err(parseAs('markdown-frontmatter', '---\nname: a\n', 'a.md')).message, /never closed/);
  });
});

describe('Starlark rules (Codex)', () => {
  it('one entry per call; comments and layout carry no meaning', () => {
    const a = ok(parseAs('starlark-rules', 'prefix_rule(pattern=["git","status"], decision="allow")\n', 'x.rules'));
    const b = ok(parseAs('starlark-rules', '# allow status\nprefix_rule(\n    pattern = ["git", "status"],  # the command\n    decision = "allow",\n)\n\n', 'x.rules'));
    assert.deepEqual(a, b);
    assert.deepEqual(a, ['prefix_rule(pattern = ["git", "status"], decision = "allow")']);
  });
  it('a "#" inside a string is not a comment; an unclosed string or bracket is located', () => {
    assert.deepEqual(ok(parseAs('starlark-rules', 'prefix_rule(pattern=["echo", "#x"])', 'x.rules')), ['prefix_rule(pattern = ["echo", "#x"])']);
    const s = err(parseAs('starlark-rules', 'a()\nprefix_rule(pattern=["git)\n', 'x.rules'));
    assert.deepEqual([s.line, s.column], [2, 22]);
    const b = err(parseAs('starlark-rules', 'a()\nprefix_rule(\n', 'x.rules'));
    assert.deepEqual([b.line, b.column], [2, 12]);
  });
});

describe('text', () => {
  it('is its content', () => { assert.equal(ok(parseAs('text', 'A=1\n', '.env')), 'A=1\n'); });
});

it('positionAt counts lines and columns from 1', () => {
  assert.deepEqual(positionAt('ab\ncd', 0), { line: 1, column: 1 });
  assert.deepEqual(positionAt('ab\ncd', 4), { line: 2, column: 2 });
});

describe('properties', () => {
  it('no input makes a parser throw: each returns a value or an error with its file', async () => {
    const fc = (await import('fast-check')).default;
    const { FORMATS } = await import('../../src/formats/index.js');
    fc.assert(fc.property(fc.constantFrom(...FORMATS), fc.oneof(fc.string({ maxLength: 200 }), fc.json(), fc.stringMatching(/^[-{}[\]:,"'#\n a-z0-9=()]{0,80}$/)), (format, text) => {
      const r = parseAs(format, text, 'f');
      if (!r.ok) assert.equal(r.error.file, 'f');
    }), { numRuns: 2000 });
  });

  it('Codex rules: whitespace, newlines inside brackets and comments never change the statements', async () => {
    const fc = (await import('fast-check')).default;
    const word = fc.stringMatching(/^[a-z][a-z0-9_-]{0,6}$/);
    const rule = fc.record({ pattern: fc.array(word, { minLength: 1, maxLength: 3 }), decision: fc.constantFrom('allow', 'prompt', 'forbidden') });
    const gap = fc.constantFrom('', ' ', '  ', '\n', ' # note\n', '\n\n');
    fc.assert(fc.property(fc.array(rule, { minLength: 1, maxLength: 4 }), gap, gap, fc.boolean(), (rules, g1, g2, trailing) => {
      const plain = rules.map((r) => `prefix_rule(pattern=[${r.pattern.map((p) => `"${p}"`).join(',')}], decision="${r.decision}")`).join('\n');
      const loose = rules.map((r) => `# rule\nprefix_rule(${g1}pattern${g2.includes('#') ? ' ' : g2.trim() === '' ? g2.replace(/\n/g, ' ') : ''}=${g1}[${r.pattern.map((p) => `"${p}"`).join(`,${g2}`)}${trailing ? ',' : ''}],${g2}decision = "${r.decision}"${trailing ? ',' : ''}${g1})`).join('\n\n');
      const a = parseAs('starlark-rules', plain, 'x.rules');
      const b = parseAs('starlark-rules', loose, 'x.rules');
      assert.ok(a.ok && b.ok, JSON.stringify(b));
      assert.deepEqual(b.ok ? b.value : null, a.ok ? a.value : null, loose);
    }), { numRuns: 500 });
  });
});
