/**
 * Locating a key in TOML text (src/toml), for errors that name a line: keys, tables and
 * array-of-table items. Pure: in `npm run mutate -- guard` and `-- credentials` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { locateKey } from '../../src/toml/index.js';

describe('locateKey', () => {
  const src = '# c\napproval = "tty"\n\n[notify]\nmin_interval_seconds = 1\n\n[notify.discord]\napi = "x"\n[[protect]]\npath = "a"\n[[protect]]\npath = "b"\n';
  it('finds keys, tables and array-of-table items', () => {
    assert.deepEqual(locateKey(src, ['approval']), { line: 2, column: 1 });
    assert.deepEqual(locateKey(src, ['notify', 'min_interval_seconds']), { line: 5, column: 1 });
    assert.deepEqual(locateKey(src, ['notify', 'discord', 'api']), { line: 8, column: 1 });
    assert.deepEqual(locateKey(src, ['protect', 1, 'path']), { line: 12, column: 1 });
  });
});
