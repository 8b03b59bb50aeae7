/**
 * `warden apply` of a name past the file system's limit is refused before anything changes.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli } from '../helpers/root.js';
import { fresh } from '../helpers/fresh-guard.js';

const ORG = 'orgs/bookclub.toml';

describe('robust edges', () => {
  it('apply of a name past the file system limit is refused before anything changes', () => {
    const t = fresh();
    const before = readFileSync(t.p('snapshots/baseline/index'));
    const name = `orgs/${'n'.repeat(240)}.toml`;
    const src = join(t.base, 'org.toml');
    writeFileSync(src, readFileSync(t.p(ORG)));
    const r = cli(t, ['apply', name, '--from', src]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /at most \d+ bytes/);
    assert.doesNotMatch(r.stderr, /ENAMETOOLONG/);
    assert.ok(readFileSync(t.p('snapshots/baseline/index')).equals(before), 'the baseline did not move');
    assert.equal(cli(t, ['verify']).code, 0, 'no drift left behind');
  });
});
