/**
 * Names are bytes (docs/CONTRACT.md §Detection): a listed name is carried as a string that maps
 * back to exactly its bytes, is shown escaped, and one that is not UTF-8 is an unexpected
 * file wherever warden lists names. Pure: no disk.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { hasRawBytes, nameFromBytes, nameToBytes } from '../../src/common/names.js';
import { escapeText } from '../../src/common/escape.js';
import { nameProblem } from '../../src/fsx/beneath.js';
import { protectedSet } from '../../src/config/protected-set.js';

describe('names as bytes', () => {
  it('a valid UTF-8 name is itself; any other maps back to its very bytes, one to one', () => {
    for (const s of ['orgs.toml', 'é.toml', 'a\nb\x1b.toml', '日本.toml', '😀']) {
      assert.equal(nameFromBytes(Buffer.from(s)), s);
      assert.equal(hasRawBytes(s), false);
    }
    const seen = new Map<string, string>();
    for (let i = 0; i < 2000; i++) {
      const b = randomBytes(1 + (i % 12));
      const s = nameFromBytes(b);
      assert.ok(nameToBytes(s).equals(b), `round trip of ${b.toString('hex')}`);
      const before = seen.get(s);
      assert.ok(before === undefined || before === b.toString('hex'), 'two byte strings never share a string');
      seen.set(s, b.toString('hex'));
    }
    assert.equal(nameFromBytes(Buffer.of(0xfe, 0x2e, 0x74)), '\udcfe.t');
    // A byte that is not UTF-8 inside a path is found; a surrogate pair (an emoji) is not one.
    assert.equal(hasRawBytes('orgs/\udcfe.toml'), true);
    assert.equal(hasRawBytes('orgs/\ud800\udc80.toml'), false);
  });

  it('shows each byte that is not UTF-8 as \\xNN, and control characters escaped', () => {
    assert.equal(escapeText(nameFromBytes(Buffer.from('orgs/\xfe.toml', 'latin1'))), 'orgs/\\xfe.toml');
    assert.equal(escapeText(nameFromBytes(Buffer.concat([Buffer.from('é'), Buffer.of(0xff)]))), '\\xc3\\xa9\\xff');
    assert.equal(escapeText('orgs/a\nb\x1b[31mc.toml'), 'orgs/a\\nb\\e[31mc.toml');
  });

  it('never approves such a name (nameProblem), nor a lone surrogate a client sent', () => {
    assert.match(nameProblem('orgs/\udcfe.toml') ?? '', /not valid UTF-8/);
    assert.match(nameProblem('orgs/\ud800.toml') ?? '', /not valid UTF-8/);
    assert.equal(nameProblem('orgs/é😀.toml'), null);
  });

  it('is an unexpected file in every protected directory but the root, and below a ** glob', () => {
    const p = protectedSet({ protect: [{ path: 'docs/**/*.md' }, { path: 'README.md' }], credentials: { files: ['config/credentials.toml'] } });
    assert.equal(p.kindOf('orgs/\udcfe.toml'), 'org', 'a glob match keeps its kind');
    assert.equal(p.kindOf('orgs/\udcfe'), 'text', 'matching no glob');
    assert.equal(p.kindOf('config/\udcfe'), 'text');
    assert.equal(p.kindOf('blocks/\udcfe'), 'text');
    assert.equal(p.kindOf('docs/a/b/\udcfe'), 'text', 'below a ** base');
    assert.equal(p.kindOf('\udcfe'), null, 'the root itself is the agent’s (no glob lists it)');
    assert.equal(p.kindOf('other/\udcfe'), null, 'an unprotected directory');
    assert.equal(p.kindOf('orgs/notes.txt'), null, 'a UTF-8 name matching nothing stays unprotected');
    assert.ok(p.listedDirs.includes('config') && p.listedDirs.includes('blocks') && !p.listedDirs.includes(''), JSON.stringify(p.listedDirs));
  });
});
