/**
 * A file proposed for a profile's root is checked in the format recorded for its path at
 * init (docs/PROFILES.md, "Sanctioned changes on a profile's root"): the record's globs
 * (with their `{a,b}` groups) choose it, errors are located, bytes that are not text are
 * refused as such.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { profileFormatErrors, recordedFormat } from '../../src/changes/profile-format.js';
import type { ProfileRootRecord } from '../../src/config/profile-root.js';

const CLAUDE: ProfileRootRecord = {
  profile: 'claude-code', level: 'user',
  files: [{ path: 'settings.json', format: 'json' }, { path: '{agents,commands}/**/*.md', format: 'markdown-frontmatter' }],
};

describe('profile-format: a profile root\'s proposed file in its recorded format', () => {
  it('the record\'s path or glob gives the format; a path it does not name has none', () => {
    assert.equal(recordedFormat(CLAUDE, 'settings.json'), 'json');
    assert.equal(recordedFormat(CLAUDE, 'agents/a/reviewer.md'), 'markdown-frontmatter');
    assert.equal(recordedFormat(CLAUDE, 'commands/x.md'), 'markdown-frontmatter');
    assert.equal(recordedFormat(CLAUDE, 'skills/x.md'), undefined);
  });

  it('a JSON syntax error is located by line and column at the root-relative path', () => {
    const e = profileFormatErrors(CLAUDE, 'settings.json', Buffer.from('{\n  "permissions": { "allow": [ }\n}\n'));
    assert.equal(e.length, 1);
    assert.equal(e[0]!.file, 'settings.json');
    assert.equal(e[0]!.line, 2);
    assert.equal(typeof e[0]!.column, 'number');
  });

  it('valid content passes; bytes that are not UTF-8 text are refused as such, whatever the format', () => {
    assert.deepEqual(profileFormatErrors(CLAUDE, 'settings.json', Buffer.from('{ "permissions": { "allow": ["Read"] } }\n')), []);
    const bin = profileFormatErrors(CLAUDE, 'agents/x.md', Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0x00, 0xff]));
    assert.equal(bin.length, 1);
    assert.match(bin[0]!.message, /is not text/);
  });
});
