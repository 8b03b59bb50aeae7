/**
 * The diff a person is shown before approving (src/changes/diff.ts): a line diff with context,
 * line endings said as such, a size bound, the headers, and credential files by key and
 * fingerprint only, never a value. Pure: in `npm run mutate -- changes` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeChanges, lineDiff } from '../../src/changes/diff.js';
import { wardenConfigSchema } from '../../src/config/warden-config.js';
import { fingerprint } from '../../src/credentials/rules.js';

const DISCORD = wardenConfigSchema.parse({ credentials: { files: ['config/credentials.toml'], groups: { discord: { keys: ['token', 'application_id'], check: 'discord-token' } } } });

describe('the diff shown for approval', () => {
  it('a line diff with one line of context, removals before additions', () => {
    assert.equal(lineDiff('a\nb\nc\nd\ne\n', 'a\nb\nC\nd\ne\n'), '  @@ line 2\n    b\n  - c\n  + C\n    d');
    assert.equal(lineDiff('1\n2\n3\n4\n5\n6\n7\n', '1\nX\n3\n4\n5\n6\nY\n'), '  @@ line 1\n    1\n  - 2\n  + X\n    3\n  @@ line 6\n    6\n  - 7\n  + Y');
    assert.equal(lineDiff('a\n', 'a\nb\n'), '  @@ line 1\n    a\n  + b');
    assert.equal(lineDiff('a\nb\n', 'b\n'), '  @@ line 1\n  - a\n    b');
    assert.equal(lineDiff('same', 'same'), '  (no changes)');
    assert.equal(lineDiff('', 'x'), '  @@ line 1\n  + x');
    // The newline that ends both texts is no line; when only one has it, the empty line says so.
    assert.equal(lineDiff('a\n', 'a'), '  @@ line 1\n    a\n  - ');
  });
  it('line endings: said as such, not every line rewritten', () => {
    assert.equal(lineDiff('a\nb\n', 'a\r\nb\r\n'), '  line endings only: LF → CRLF, 2 line(s); the text is the same');
    assert.equal(lineDiff('a\r\nb', 'a\nb'), '  line endings only: CRLF → LF, 2 line(s); the text is the same');
    assert.equal(lineDiff('a\r\nb\n', 'a\nb\n'), '  line endings only: mixed → LF, 2 line(s); the text is the same');
    assert.equal(lineDiff('a\nb\nc\n', 'a\r\nB\r\nc\r\n'), '  (line endings LF → CRLF)\n  @@ line 1\n    a\n  - b\n  + B\n    c');
    assert.equal(lineDiff('a', 'b\r\n'), '  (line endings none → CRLF)\n  @@ line 1\n  - a\n  + b\n  + ');
    assert.equal(lineDiff('a\r\nb\r\n', 'a\r\nc\r\n'), '  @@ line 1\n    a\r\n  - b\r\n  + c\r', 'the same endings on both sides: a plain diff');
  });
  it('too large to diff line by line: only when the lines that differ (between the shared head and tail) exceed the table', () => {
    // Every line differs: the whole file is the middle.
    assert.equal(lineDiff('x\n'.repeat(2001), 'y\n'.repeat(2001)), '  (2001 → 2001 lines; too large to diff line by line)');
    assert.notEqual(lineDiff('x\n'.repeat(1999), 'y\n'.repeat(1999)), '  (2000 → 2000 lines; too large to diff line by line)');
    // One line changed at the end of a large file: the shared head is context, the change is shown.
    const big = 'x\n'.repeat(2001);
    assert.equal(lineDiff(big, `${big}y`), '  @@ line 2001\n    x\n  - \n  + y');
  });
  it('headers: new, removed, edited, mode only, mode with content', () => {
    const B = (s: string) => Buffer.from(s);
    assert.equal(describeChanges([{ path: 'n.md', kind: 'text', before: null, after: B('hi\n'), afterMode: 0o600 }], DISCORD), '+++ new file n.md (3 bytes, mode 0600)\n  @@ line 1\n  + hi');
    assert.equal(describeChanges([{ path: 'n.md', kind: 'text', before: null, after: B('hi') }], DISCORD).split('\n')[0], '+++ new file n.md (2 bytes)');
    assert.equal(describeChanges([{ path: 'o.toml', kind: 'org', before: B('a'), after: null }], DISCORD), '--- remove o.toml');
    assert.equal(describeChanges([{ path: 'o.md', kind: 'text', before: B('a'), after: B('a'), beforeMode: 0o644, afterMode: 0o600 }], DISCORD), '--- o.md (approved)\n+++ o.md (proposed)\n  mode 0644 → 0600 (content unchanged)');
    assert.equal(describeChanges([{ path: 'o.md', kind: 'text', before: B('a'), after: B('b'), beforeMode: 0o644, afterMode: 0o600 }], DISCORD), '--- o.md (approved)\n+++ o.md (proposed)\n  mode 0644 → 0600\n  @@ line 1\n  - a\n  + b');
    assert.equal(describeChanges([{ path: 'o.md', kind: 'text', before: B('a'), after: B('b'), beforeMode: 0o644, afterMode: 0o644 }], DISCORD), '--- o.md (approved)\n+++ o.md (proposed)\n  @@ line 1\n  - a\n  + b');
    assert.equal(describeChanges([{ path: 'o.md', kind: 'text', before: B('a'), after: B('b'), beforeMode: null, afterMode: 0o600 }], DISCORD), '--- o.md (approved)\n+++ o.md (proposed)\n  @@ line 1\n  - a\n  + b');
    assert.equal(describeChanges([{ path: 'o.md', kind: 'text', before: B('a'), after: B('b'), beforeMode: 0o644 }], DISCORD), '--- o.md (approved)\n+++ o.md (proposed)\n  @@ line 1\n  - a\n  + b');
    assert.equal(describeChanges([{ path: 'a', kind: 'text', before: null, after: B('') }, { path: 'b', kind: 'org', before: B(''), after: null }], DISCORD), '+++ new file a (0 bytes)\n  (no changes)\n--- remove b');
  });
  it('credential files: keys and fingerprints only, never a value', () => {
    const before = Buffer.from('[g]\nk = "SECRET1"\ngone = "SECRET2"\n');
    const after = Buffer.from('# c\n[g]\nk = "SECRET3"\nnew = "SECRET4"\n');
    const out = describeChanges([{ path: 'c.toml', kind: 'credentials', before, after }], DISCORD);
    assert.equal(out, '--- c.toml (approved)\n+++ c.toml (proposed)\n  credential values are shown as fingerprints (first 12 hex digits of sha256)\n'
      + `  - g.gone  ${fingerprint('SECRET2')} (removed)\n  ~ g.k  ${fingerprint('SECRET1')} → ${fingerprint('SECRET3')}\n  + g.new  (new) ${fingerprint('SECRET4')}`);
    assert.ok(!out.includes('SECRET'));
    assert.equal(describeChanges([{ path: 'c.toml', kind: 'credentials', before, after: Buffer.from(`# only a comment\n${before.toString()}`) }], DISCORD),
      '--- c.toml (approved)\n+++ c.toml (proposed)\n  credential values are shown as fingerprints (first 12 hex digits of sha256)\n  (no value changes; comments or layout only)');
    assert.match(describeChanges([{ path: 'c.toml', kind: 'credentials', before: null, after: Buffer.from('[g]\nk = "SECRET"\n') }], DISCORD), /^\+\+\+ new file c\.toml \(17 bytes\)\n {2}credential values[^\n]*\n {2}\+ g\.k {2}\(new\) [0-9a-f]{12}$/);
  });
});
