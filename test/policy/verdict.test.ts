/**
 * What `warden check` says a file with errors does now (src/policy/verdict.ts), from the
 * health buildPolicy reports for the real files: the same truth `warden explain` acts on.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { buildPolicy } from '../../src/policy/index.js';
import { errorVerdicts } from '../../src/policy/verdict.js';

describe('error verdicts', () => {
  it('grants nothing, never loads, still applies; nothing for a clean file', () => {
    const { files } = buildPolicy([
      { path: 'config/conditions.toml', text: '[memories."/a/"]\nwhen = "discord:dm"\naction = "permit"\n' },
      { path: 'blocks/conditional/orphan.md', text: 'a block no rule loads\n' },
      { path: 'orgs/ok.toml', text: 'members = []\nchannels = []\nfolders = []\ncommands = []\nhourly_cap = 1\n' },
    ]);
    const v = errorVerdicts(files);
    assert.ok(v.includes('config/conditions.toml grants nothing until it is fixed'), JSON.stringify(v));
    assert.ok(v.includes('blocks/conditional/orphan.md grants nothing until it is fixed'), JSON.stringify(v));
    assert.ok(v.includes('config/guests.toml grants nothing until it is fixed'), 'a missing guests.toml: nobody is a guest');
    assert.ok(!v.some((s) => s.startsWith('orgs/ok.toml')), JSON.stringify(v));
  });
  it('a file whose only errors are cross-file still applies', () => {
    assert.deepEqual(errorVerdicts([
      { path: 'config/conditions.toml', kind: 'conditions', status: 'ok', grantsNothing: false, reason: null, errors: [{ file: 'config/conditions.toml', message: 'x' }] },
      { path: 'orgs/a.toml', kind: 'org', status: 'ok', grantsNothing: false, reason: null, errors: [] },
      { path: 'blocks/conditional/b.md', kind: 'block', status: 'ok', grantsNothing: true, reason: null, errors: [{ file: 'b', message: 'y' }] },
      { path: 'blocks/conditional/c.md', kind: 'block', status: 'ok', grantsNothing: false, reason: null, errors: [{ file: 'c', message: 'z' }] },
    ] as never), [
      'config/conditions.toml still applies as it is (warden explain uses it); only what the errors name has no effect',
      'blocks/conditional/b.md grants nothing until it is fixed',
      'blocks/conditional/c.md never loads until it is fixed',
    ]);
  });
  it('warden.toml with errors is refused as a whole, even when it would grant nothing or apply', () => {
    const warden = (grantsNothing: boolean) => ({ path: 'config/warden.toml', kind: 'warden', status: 'invalid', grantsNothing, reason: null, errors: [{ file: 'config/warden.toml', message: 'x' }] });
    const words = "config/warden.toml is refused as a whole until it is fixed (warden's settings: 'warden apply' would not install it, and its [owner] is not used)";
    assert.deepEqual(errorVerdicts([warden(false), warden(true)] as never), [words, words]);
  });
});
