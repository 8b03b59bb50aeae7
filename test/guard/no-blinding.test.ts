/**
 * The guard runs as the root's owner, not as root, and cannot be blinded: a root or protected
 * directory chmodded unreadable is put back and edits made meanwhile reverted; verify and
 * status report an unreadable root instead of crashing. Needs root to make the user.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { readAlertsOf, waitFor } from '../helpers/root.js';
import { freshAsUser } from '../helpers/fresh-guard.js';

const ORG = 'orgs/bookclub.toml';

describe('no blinding (the guard runs as the root\'s owner, not as root)', () => {
  it('chmod 0300 ROOT is put back, and an edit made meanwhile is reverted', async () => {
    const { t, u } = freshAsUser();
    const rootMode = statSync(t.root).mode & 0o7777;
    const org = readFileSync(t.p(ORG), 'utf8');
    await u.daemon();
    chmodSync(t.root, 0o300);
    writeFileSync(t.p(ORG), 'members = ["blinded"]\n');
    await waitFor(() => (statSync(t.root).mode & 0o7777) === rootMode && readFileSync(t.p(ORG), 'utf8') === org, 10_000, 'root mode and the file back');
    await waitFor(() => readAlertsOf(t).some((a) => a.path === '.' && a.reason === 'mode'), 5_000, 'an alert for the root');
  });

  it('chmod 0100 config is put back, and edits below it are reverted', async () => {
    const { t, u } = freshAsUser();
    const mode = statSync(t.p('config')).mode & 0o7777;
    const cond = readFileSync(t.p('config/conditions.toml'), 'utf8');
    await u.daemon();
    writeFileSync(t.p('config/conditions.toml'), '# blinded\n');
    chmodSync(t.p('config'), 0o100);
    await waitFor(() => (statSync(t.p('config')).mode & 0o7777) === mode && readFileSync(t.p('config/conditions.toml'), 'utf8') === cond, 10_000, 'config mode and the file back');
    assert.ok(readAlertsOf(t).some((a) => a.path === 'config' && a.reason === 'mode'));
  });

  it('verify and status report an unreadable root instead of crashing', () => {
    const { t, u } = freshAsUser();
    chmodSync(t.root, 0o300);
    try {
      for (const cmd of ['verify', 'status']) {
        const r = u.cli([cmd]);
        assert.ok(!/internal error|EACCES|at .*\.js:\d+/.test(r.stderr), `${cmd} does not crash: ${r.stderr}`);
        assert.equal(r.code, cmd === 'verify' ? 1 : r.code);
        assert.match(r.stdout, /DRIFT \.:? \(?mode/, `${cmd} names the root's mode`);
      }
    } finally { chmodSync(t.root, 0o755); }
  });
});
