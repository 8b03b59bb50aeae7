/**
 * The policy validators (validatePolicyFile, validatePolicyChange, validatePolicyState): each
 * kind to its own parser, a change blamed for what it breaks, several changes judged as one
 * state, and a surprise reported as an error on the file, never thrown. Pure: in `npm run
 * mutate -- policy` (scripts/mutate.mjs).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validatePolicyChange, validatePolicyFile, validatePolicyState, type PolicyKind } from '../../src/policy/index.js';
import { BOOKCLUB, BOOK_CH, CONDITIONS, GUESTS, NSFW_MD, WARDEN, org, rootFiles } from './fixtures.js';

// The sandbox plan and its layout: test/runtime/sandbox-layout.test.ts.

// ---------------------------------------------------------------- validators

test('validatePolicyFile: each kind goes to its own parser; a valid file has no error', () => {
  const valid: [PolicyKind, string, string][] = [['conditions', 'config/conditions.toml', CONDITIONS], ['guests', 'config/guests.toml', GUESTS], ['org', 'orgs/bookclub.toml', BOOKCLUB], ['block', 'blocks/conditional/nsfw.md', NSFW_MD], ['warden', 'config/warden.toml', WARDEN]];
  for (const [kind, path, text] of valid) assert.deepEqual(validatePolicyFile(kind, path, text), [], kind);
  // Each kind's own schema: an org file is not a valid guests file, nor the other way round.
  const asGuests = validatePolicyFile('guests', 'config/guests.toml', BOOKCLUB);
  assert.ok(asGuests.length > 0 && asGuests.every((e) => e.file === 'config/guests.toml'));
  assert.ok(validatePolicyFile('org', 'orgs/x.toml', GUESTS).length > 0);
  assert.ok(validatePolicyFile('warden', 'config/warden.toml', 'owner = 3\n').length > 0);
  assert.ok(validatePolicyFile('block', 'blocks/conditional/x.md', 'no front matter').length > 0);
  assert.ok(validatePolicyFile('conditions', 'config/conditions.toml', '[memories."/x/"]\naction = "explode"\n').length > 0);
  assert.deepEqual(validatePolicyFile('nonsense' as PolicyKind, 'x', ''), [{ file: 'x', message: 'unknown policy kind "nonsense"' }]);
});

test('validatePolicyChange: a channel moved into a second org is blamed on the change; old errors and non-policy paths are not', () => {
  const current = rootFiles();
  const clash = org({ members: [], channels: [BOOK_CH], folders: ['/workspace/x/'] });
  const errs = validatePolicyChange(current, 'orgs/chess.toml', clash);
  assert.ok(errs.some((e) => /also bound to org/.test(e.message) && e.file === 'orgs/chess.toml'), JSON.stringify(errs));
  assert.ok(errs.some((e) => /also bound to org/.test(e.message) && e.file === 'orgs/bookclub.toml'), 'the other org\'s new error too');
  assert.deepEqual(validatePolicyChange(current, 'orgs/chess.toml', org({ channels: ['999'] })), []);
  assert.deepEqual(validatePolicyChange(current, 'notes/readme.md', 'anything'), []);
  // Replacing a file: its old version is not part of the new set.
  assert.deepEqual(validatePolicyChange(current, 'orgs/bookclub.toml', BOOKCLUB.replace('hourly_cap = 20', 'hourly_cap = 25')), []);
  // Its own errors once, not again as a set error.
  const bad = validatePolicyChange(current, 'config/guests.toml', 'channels = 3\n');
  assert.ok(bad.length > 0);
  assert.equal(new Set(bad.map((e) => `${e.file}|${e.key}|${e.message}`)).size, bad.length, JSON.stringify(bad));
  // An error the set already had is not blamed on an unrelated change.
  const broken = [...current.filter((f) => f.path !== 'config/guests.toml'), { path: 'config/guests.toml', text: 'channels = 3\n' }];
  assert.deepEqual(validatePolicyChange(broken, 'orgs/chess.toml', org({ channels: ['999'] })), []);
  // ...but a new error in a set that already had one is still blamed.
  assert.ok(validatePolicyChange(broken, 'orgs/chess.toml', clash).some((e) => /also bound to org/.test(e.message)));
  // Removing guests.toml adds its "missing" error; a rule without a block file is left to `warden check`.
  const removed = validatePolicyChange(current, 'config/guests.toml', null);
  assert.ok(removed.length > 0 && removed.every((e) => e.file === 'config/guests.toml'), JSON.stringify(removed));
  assert.deepEqual(validatePolicyChange(current, 'blocks/conditional/nsfw.md', null), []);
});

test('validatePolicyState: several changes judged as one state, block/rule pairing included', () => {
  const current = rootFiles();
  const rule = CONDITIONS + '\n[blocks.book]\nwhen = "discord:guild:1"\naction = "load"\n';
  const both = validatePolicyState(current, [{ path: 'config/conditions.toml', text: rule }, { path: 'blocks/conditional/book.md', text: NSFW_MD }]);
  assert.deepEqual(both, []);
  const ruleOnly = validatePolicyState(current, [{ path: 'config/conditions.toml', text: rule }]);
  assert.ok(ruleOnly.some((e) => /block "book" has a rule but no file/.test(e.message)), JSON.stringify(ruleOnly));
  const fileGone = validatePolicyState(current, [{ path: 'blocks/conditional/nsfw.md', text: null }]);
  assert.ok(fileGone.some((e) => /block "nsfw" has a rule but no file/.test(e.message)), JSON.stringify(fileGone));
  // Own errors once; non-policy paths skipped; an old error is not blamed.
  const own = validatePolicyState(current, [{ path: 'config/guests.toml', text: 'channels = 3\n' }, { path: 'README.md', text: 'x' }]);
  assert.ok(own.length > 0);
  assert.equal(new Set(own.map((e) => `${e.file}|${e.key}|${e.message}`)).size, own.length, JSON.stringify(own));
  const broken = [...current.filter((f) => f.path !== 'config/guests.toml'), { path: 'config/guests.toml', text: 'channels = 3\n' }];
  assert.deepEqual(validatePolicyState(broken, [{ path: 'orgs/chess.toml', text: org({ channels: ['999'] }) }]), []);
  assert.deepEqual(validatePolicyState(current, []), []);
  assert.ok(!own.some((e) => e.file === 'README.md'), JSON.stringify(own));
  assert.ok(validatePolicyState(broken, [{ path: 'orgs/chess.toml', text: org({ channels: [BOOK_CH] }) }]).some((e) => /also bound to org/.test(e.message)));
  // A block removed with its rule: nothing wrong, and the removed file is not validated as blank.
  assert.deepEqual(validatePolicyState(current, [{ path: 'config/conditions.toml', text: CONDITIONS.replace('[blocks.nsfw]\nwhen = "discord:nsfw"\naction = "load"\n', '') }, { path: 'blocks/conditional/nsfw.md', text: null }]), []);
});

test('the validators never throw: a surprise becomes a "cannot validate" error on the file', () => {
  const poison = [{ path: 'config/guests.toml', get text(): string { throw new Error('boom'); } }];
  assert.deepEqual(validatePolicyChange(poison as never, 'config/guests.toml', GUESTS), [{ file: 'config/guests.toml', message: 'cannot validate: Error: boom' }]);
  assert.deepEqual(validatePolicyState(poison as never, [{ path: 'orgs/a.toml', text: BOOKCLUB }]), [{ file: 'orgs/a.toml', message: 'cannot validate: Error: boom' }]);
  assert.deepEqual(validatePolicyState(poison as never, []), [{ file: '.', message: 'cannot validate: Error: boom' }]);
  const weird = { toString(): string { throw new Error('bad text'); } };
  const r = validatePolicyFile('guests', 'config/guests.toml', weird as never);
  assert.equal(r.length, 1);
  assert.match(r[0]?.message ?? '', /^cannot validate: /);
});
