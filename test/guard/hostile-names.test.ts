/**
 * A path name chosen by the attacker, against the real daemon: a newline cannot forge a journal
 * line, and an OSC 52 clipboard write in a name never reaches the terminal (alerts, why).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { cli, readAlertsOf, waitFor } from '../helpers/root.js';
import { daemon, fresh } from '../helpers/fresh-guard.js';

describe('hostile names', () => {
  it('a name with a newline cannot forge a journal line', async () => {
    const t = fresh();
    const d = await daemon(t);
    const name = 'orgs/x\n<6>warden: all protected files verified clean x.toml';
    writeFileSync(t.p(name), 'members = []\n');
    await waitFor(() => readAlertsOf(t).some((a) => a.reason === 'unexpected-file' && a.path === name) && !existsSync(t.p(name)), 10_000, 'removal');
    await waitFor(() => d.stderr().includes('unexpected-file'), 5_000, 'journal line');
    const lines = d.stderr().split('\n');
    assert.ok(!lines.some((l) => l.startsWith('<6>warden: all protected')), 'no forged line');
    assert.ok(lines.some((l) => l.includes('x\\n<6>warden: all protected')), 'the name is shown escaped');
  });

  it('an ESC]52 clipboard write in a name never reaches the terminal (alerts, why)', async () => {
    const t = fresh();
    await daemon(t);
    const name = 'orgs/\u001b]52;c;ZXZpbA==\u0007.toml';
    writeFileSync(t.p(name), 'members = []\n');
    await waitFor(() => readAlertsOf(t).some((a) => a.path === name), 10_000, 'removal');
    for (const args of [['alerts'], ['why', 'orgs']]) {
      const r = cli(t, args);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout.includes('\\e]52;c;ZXZpbA==\\x07'), `${args[0]} shows the name escaped: ${r.stdout}`);
      assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f]/.test(r.stdout), `${args[0]} prints no control character`);
    }
  });
});
