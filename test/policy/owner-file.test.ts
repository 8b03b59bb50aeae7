// The owner from warden.toml (src/policy/load.ts: parseOwner) and what `warden check` says
// of that file: missing, invalid, unreadable, or valid without an owner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPolicy, parseOwner } from '../../src/policy/load.js';

const OWNER = '123456789012345678';

test('no warden.toml: no owner, one warning, no error', () => {
  assert.deepEqual(parseOwner(null), {
    owner: null, source: null, status: 'missing', errors: [],
    warnings: [{ file: 'config/warden.toml', message: 'missing: no owner is configured, so nobody resolves to the owner tier (internal sessions still do)' }],
  });
});

test('an invalid warden.toml: no owner, its errors, no warning', () => {
  const r = parseOwner('[owner]\ndiscord_id = 5\n');
  assert.equal(r.owner, null);
  assert.equal(r.status, 'invalid');
  assert.deepEqual(r.warnings, []);
  assert.deepEqual(r.errors.map((e) => [e.key, e.line]), [['owner.discord_id', 2]]);
});

test('a repeated warden.toml text gets the earlier result: the same frozen source, fresh arrays', () => {
  const text = `# ${process.pid}-${Date.now()}\n[owner]\ndiscord_id = "${OWNER}"\n`;
  const a = parseOwner(text);
  const b = parseOwner(text);
  assert.equal(a.owner, OWNER);
  assert.deepEqual(a.source, { file: 'config/warden.toml', line: 3, column: 1 });
  assert.equal(b.source, a.source);
  assert.ok(Object.isFrozen(a.source));
  assert.notEqual(b.warnings, a.warnings);
});

test('warden.toml\'s health: why it grants no owner, in each case', () => {
  const health = (text: string | null, unreadable?: string) =>
    buildPolicy(text === null && !unreadable ? [] : [{ path: 'config/warden.toml', text, ...(unreadable ? { unreadable } : {}) }]).files.find((f) => f.kind === 'warden');
  assert.deepEqual(health(null), { path: 'config/warden.toml', kind: 'warden', status: 'missing', errors: [], grantsNothing: true, reason: 'missing: no owner' });
  assert.deepEqual(health('approval = "tty"\n')?.reason, 'no owner configured');
  assert.deepEqual(health('[owner]\ndiscord_id = 5\n')?.reason, 'invalid: its [owner] is not used until it is fixed');
  assert.deepEqual(health(null, 'EACCES')?.reason, 'unreadable: its [owner] is not used until it is fixed');
  assert.deepEqual(health(`[owner]\ndiscord_id = "${OWNER}"\n`)?.reason, null);
});
