/**
 * verify reads max_bytes, the [[protect]] paths and credentials.files without zod
 * (settings-read.ts). It must agree with the full schema wherever it answers, and give up
 * (null: the caller validates in full, which names the problem) on anything not plainly valid.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readSettings } from '../../src/config/settings-read.js';
import { parseWardenConfig } from '../../src/config/warden-config.js';
import { FIXTURE, REPO, TEST_WARDEN_TOML } from '../helpers/root.js';

const VALID = [
  '',
  TEST_WARDEN_TOML,
  readFileSync(join(FIXTURE, 'config', 'warden.toml'), 'utf8'),
  readFileSync(join(REPO, 'config', 'warden.toml'), 'utf8'),
  'max_bytes = 4096\n[[protect]]\npath = "data/*.txt"\n[[protect]]\npath = "notes/**/*.md"\nkind = "text"\n',
  'approval = "tty"\n[credentials]\nfiles = ["config/credentials.toml", "config/more.toml"]\n[credentials.groups.a]\nkeys = ["k"]\n',
  'rescan_seconds = 5\n[notify]\nmin_interval_seconds = 0\n[notify.desktop]\nenabled = false\n',
];

it('agrees with the full schema on every valid warden.toml it is given', () => {
  for (const text of VALID) {
    const full = parseWardenConfig(text);
    assert.ok(full.ok, `valid for the schema: ${text}`);
    const quick = readSettings(Buffer.from(text));
    assert.ok(quick, `read without the schema: ${text}`);
    assert.deepEqual(quick, { max_bytes: full.config.max_bytes, protect: full.config.protect.map((p) => ({ path: p.path })), credentials: { files: full.config.credentials.files } });
  }
  const none = readSettings(null);
  const defaults = parseWardenConfig('');
  assert.ok(defaults.ok);
  assert.deepEqual(none, { max_bytes: defaults.config.max_bytes, protect: [], credentials: { files: defaults.config.credentials.files } });
});

it('gives up on what the schema rejects in the keys it reads, and on unknown top-level keys', () => {
  for (const text of [
    'max_bytes = -1\n', 'max_bytes = 1.5\n', 'max_bytes = "big"\n', 'surprise = 1\n', 'max_byte = 10\n',
    '[[protect]]\npath = "../outside"\n', '[[protect]]\npath = "/etc/passwd"\n', '[[protect]]\npath = ""\n',
    '[[protect]]\npath = "a.txt"\nkind = "org"\n', '[[protect]]\npath = "a.txt"\nextra = 1\n', 'protect = "a.txt"\n',
    '[credentials]\nfiles = []\n', '[credentials]\nfiles = ["config/creds.json"]\n', 'credentials = 3\n',
    'not toml at all = = =\n',
  ]) {
    assert.equal(readSettings(Buffer.from(text)), null, text);
    assert.equal(parseWardenConfig(text).ok, false, `the schema rejects it too: ${text}`);
  }
});
