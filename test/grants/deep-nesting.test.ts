/**
 * A grant next to a deeply nested value (docs/PROFILES.md, "Grants in alerts, diffs and
 * prompts"): a 10 kB settings.json whose unrelated key holds 5,000 nested arrays must not make
 * the comparison vanish. The alert, `warden diff` and the approval prompt all take grantsAt's
 * answer, and each dropped an exception to "no grants": the owner saw no word of the grant.
 * The answer is the comparison, or says plainly that the file was not compared key by key.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { levelRootProfile, loadProfiles } from '../../src/profiles/index.js';
import { grantsAt } from '../../src/grants/index.js';

const claude = loadProfiles().profiles.find((p) => p.data.name === 'claude-code')!.data;
const rp = levelRootProfile(claude, 'user', '/home/u/.claude', '.claude')!;
const APPROVED = Buffer.from('{\n  "permissions": { "allow": ["Read"] }\n}\n');

describe('grants next to a deeply nested value', () => {
  for (const depth of [5_000, 100_000]) {
    it(`a settings.json with ${depth} nested arrays beside a grant says it was not compared key by key (never no word at all)`, () => {
      const rejected = Buffer.from(`{"permissions":{"allow":["Read","Bash"]},"x":${'['.repeat(depth)}${']'.repeat(depth)}}`);
      let g: ReturnType<typeof grantsAt>;
      assert.doesNotThrow(() => { g = grantsAt(rp, 'settings.json', APPROVED, rejected); });
      assert.ok(g!, 'an answer');
      assert.match(g!.summary, /^not compared key by key: /);
      assert.deepEqual(g!.grants, []);
    });
  }

  it('a shallow grant beside a moderately nested value is still compared key by key', () => {
    const rejected = Buffer.from(`{"permissions":{"allow":["Read","Bash"]},"x":${'['.repeat(100)}${']'.repeat(100)}}`);
    const g = grantsAt(rp, 'settings.json', APPROVED, rejected)!;
    assert.ok(g.grants.some((x) => x.grant && x.key === 'permissions.allow'), JSON.stringify(g));
  });
});
