/**
 * The in-place credential value editor (src/credentials/edit.ts): a value replaced with
 * comments, layout and line ends kept; layouts it does not rewrite refused without echoing
 * a value. Pure: in `npm run mutate -- credentials` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setCredentialValues, tomlString } from '../../src/credentials/edit.js';
import { WardenError } from '../../src/common/errors.js';

describe('credential value editor', () => {
  it('tomlString escapes what TOML requires', () => {
    assert.equal(tomlString('plain'), '"plain"');
    assert.equal(tomlString('a"b\\c\nd\te\rf\u0001g\u007fh\u001fi é'), '"a\\"b\\\\c\\nd\\te\\rf\\u0001g\\u007Fh\\u001Fi é"');
    assert.equal(tomlString(' ~'), '" ~"');
    assert.equal(tomlString(''), '""');
  });
  it('replaces a value in place, comments and layout kept', () => {
    const text = '# my creds\n[discord]   # the bot\ntoken   =  "old" # rotated monthly\napplication_id = \'1\'\n\n[mail]\nuser = "u"\n';
    assert.equal(setCredentialValues(text, 'c.toml', [{ group: 'discord', key: 'token', value: 'n"ew' }, { group: 'discord', key: 'application_id', value: '2' }]),
      '# my creds\n[discord]   # the bot\ntoken   =  "n\\"ew" # rotated monthly\napplication_id = "2"\n\n[mail]\nuser = "u"\n');
  });
  it('a value with escapes, a quoted key, a quoted table name', () => {
    const text = '["my group"]\n"odd key" = "a\\"b"\n[\'lit\']\nk = "x"\n';
    assert.equal(setCredentialValues(text, 'c.toml', [{ group: 'my group', key: 'odd key', value: 'v' }, { group: 'lit', key: 'k', value: 'y' }]),
      '["my group"]\n"odd key" = "v"\n[\'lit\']\nk = "y"\n');
    assert.equal(setCredentialValues("[g]\n'lk' = 'x'\n", 'c.toml', [{ group: 'g', key: 'lk', value: 'y' }]), "[g]\n'lk' = \"y\"\n");
  });
  it('a missing key goes after the group\'s last key; a missing group is appended', () => {
    const text = '[a]\nk = "1"\n\n[b]\nx = "2"\n\n\n';
    assert.equal(setCredentialValues(text, 'c.toml', [{ group: 'a', key: 'new', value: 'n' }, { group: 'a', key: 'new2', value: 'm' }]),
      '[a]\nk = "1"\nnew = "n"\nnew2 = "m"\n\n[b]\nx = "2"\n\n\n');
    assert.equal(setCredentialValues(text, 'c.toml', [{ group: 'c d', key: 'k k', value: 'v' }, { group: 'c d', key: 'j', value: 'w' }]),
      '[a]\nk = "1"\n\n[b]\nx = "2"\n\n["c d"]\n"k k" = "v"\nj = "w"\n');
    assert.equal(setCredentialValues('[empty]\n', 'c.toml', [{ group: 'empty', key: 'k', value: 'v' }]), '[empty]\nk = "v"\n');
    assert.equal(setCredentialValues('', 'c.toml', [{ group: 'g', key: 'k', value: 'v' }]), '\n[g]\nk = "v"\n');
  });
  it('keeps CRLF line ends', () => {
    assert.equal(setCredentialValues('[a]\r\nk = "1"\r\n', 'c.toml', [{ group: 'a', key: 'k', value: '2' }]), '[a]\r\nk = "2"\r\n');
  });
  it('a key line of another table, or before any table, is not the key', () => {
    const text = 'k = "top"\n[a]\nk = "1"\n[b]\nk = "2"\n';
    assert.throws(() => setCredentialValues(text, 'c.toml', [{ group: 'b', key: 'k', value: 'x' }]), WardenError, 'a top-level value does not parse as credentials');
    const ok = '[a]\nk = "1"\n[b]\nk = "2"\n';
    assert.equal(setCredentialValues(ok, 'c.toml', [{ group: 'b', key: 'k', value: 'x' }]), '[a]\nk = "1"\n[b]\nk = "x"\n');
  });
  const refused = (text: string, value = 'SECRET-NEW') => {
    try { setCredentialValues(text, 'c.toml', [{ group: 'a', key: 'k', value }]); } catch (e) {
      assert.ok(e instanceof WardenError);
      assert.ok(!e.message.includes('SECRET'), e.message);
      return e.message;
    }
    return null;
  };
  it('refuses layouts it does not rewrite, never echoing a value, and changes nothing', () => {
    const hint = "; use 'warden edit c.toml' for this file's layout. Nothing was changed.";
    // A multi-line string is not a value the scanner replaces: a second k would be added.
    assert.equal(refused('[a]\nk = """SECRET\nx"""\n'), `could not place the new values in c.toml safely${hint}`);
    assert.equal(refused("[a]\nk = '''SECRET'''\n"), `could not place the new values in c.toml safely${hint}`);
    // A line inside a multi-line string that looks like the key: the result parses, but a.k is not what was asked.
    assert.equal(refused('[a]\nnote = """\nk = "SECRET"\n"""\n'), `could not place the new values in c.toml safely (the layout is one warden does not rewrite)${hint}`);
    assert.equal(refused('[a]\nk = "SECRET" junk = 1\n'), `c.toml does not parse as a credential file${hint}`);
    assert.equal(refused('[a]\nk = "SECRET" # fine\n'), null);
    assert.equal(refused('[a]\nk = \'SECRET\' # fine\n'), null);
    assert.equal(refused('a = { k = "SECRET" }\n'), `could not place the new values in c.toml safely${hint}`, 'an inline table: [a] would be defined twice');
    assert.equal(refused('[a]\nk = "SEC\\"RET" \n'), null);
    assert.equal(refused('[a]\nk = "ok"\n', ''), 'a.k: an empty value is not a credential; nothing was changed');
  });
  it('refuses when the edit would not parse or would not hold the intended values', () => {
    const hint = "; use 'warden edit c.toml' for this file's layout. Nothing was changed.";
    // A dotted key: the scanner does not see a.k, appends [a] again: a duplicate table.
    assert.equal(refused('a.k = "SECRET"\n'), `could not place the new values in c.toml safely${hint}`);
    // A header the scanner does not read ([a.b]) hides the keys under it.
    assert.equal(refused('[a.b]\nk = "SECRET"\n[a]\nk = "x"\n'), `c.toml does not parse as a credential file${hint}`);
  });
});
