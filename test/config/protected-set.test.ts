/**
 * The protected set (src/config/protected-set.ts): the kind of each path, warden's temporary
 * files and the store never protected, the directories parents first. Pure: in `npm run
 * mutate -- guard` and `-- credentials` (scripts/mutate.mjs).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { protectedSet } from '../../src/config/protected-set.js';
import { parseWardenConfig, wardenConfigSchema } from '../../src/config/warden-config.js';

describe('protected set', () => {
  const r = parseWardenConfig('[[protect]]\npath = "data/**/*.json"\nkind = "text"\n');
  assert.ok(r.ok);
  const p = protectedSet(r.ok ? r.config : wardenConfigSchema.parse({}));
  it('kinds by path', () => {
    assert.equal(p.kindOf('config/warden.toml'), 'warden');
    assert.equal(p.kindOf('config/credentials.toml'), 'credentials');
    assert.equal(p.kindOf('orgs/a.toml'), 'org');
    assert.equal(p.kindOf('orgs/a.txt'), null);
    assert.equal(p.kindOf('orgs/sub/a.toml'), null);
    assert.equal(p.kindOf('blocks/conditional/x.md'), 'block');
    assert.equal(p.kindOf('data/x/y/z.json'), 'text');
  });
  it('warden temp files and the store are never protected paths', () => {
    assert.equal(p.kindOf('orgs/.a.toml.warden-1-abcd.tmp'), null);
    assert.equal(p.kindOf('orgs/.hidden.toml'), null);
    assert.equal(p.kindOf('snapshots/alerts.jsonl'), null);
  });
  it('directories, parents first', () => {
    // '' is the root itself: its mode and owner are approved too (chmod 0300 ROOT).
    assert.deepEqual(p.dirs, ['', 'blocks', 'config', 'data', 'orgs', 'blocks/conditional']);
  });
});
