/**
 * Priorities and bounds, against the real daemon: a revert of an approved file is not queued
 * behind a storm of new files, and the quarantine quota's overflow is recorded.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { readAlertsOf, waitFor } from '../helpers/root.js';
import { daemon, fresh } from '../helpers/fresh-guard.js';

const ORG = 'orgs/bookclub.toml';

describe('priorities and bounds', () => {
  it('a revert of an approved file is not queued behind a storm of new files', async () => {
    const t = fresh();
    const d = await daemon(t);
    const orgApproved = readFileSync(t.p(ORG), 'utf8');
    // 3,000 new org files, then one real edit, all queued while the guard is stopped: when it
    // goes on, the kernel hands it the 3,000 creations first and the real edit last.
    d.proc.kill('SIGSTOP');
    try {
      for (let i = 0; i < 3000; i++) writeFileSync(t.p(`orgs/s${i}.toml`), 'members = []\n');
      writeFileSync(t.p(ORG), 'members = ["during-storm"]\n');
    } finally { d.proc.kill('SIGCONT'); }
    const storm = () => readdirSync(t.p('orgs')).filter((n) => /^s\d+\.toml$/.test(n)).length;
    let left = -1;
    await waitFor(() => { left = storm(); return readFileSync(t.p(ORG), 'utf8') === orgApproved; }, 60_000, 'the real edit reverted');
    assert.ok(left > 1500, `the real revert went first (${left} of 3,000 new files still waiting)`);
    await waitFor(() => storm() === 0, 120_000, 'storm removed');
    // Bounded: alerts fold, yet every removal is counted.
    const alerts = readAlertsOf(t).filter((a) => a.reason === 'unexpected-file');
    assert.ok(alerts.length < 600, `alerts fold (${alerts.length} lines for 3,000 removals)`);
    await waitFor(() => readAlertsOf(t).filter((a) => a.reason === 'unexpected-file').reduce((n, a) => n + (a.count ?? 1), 0) === 3000, 20_000, 'every removal counted');
    const q = readdirSync(t.p('snapshots/quarantine')).length;
    assert.ok(q <= 1100, `quarantine bounded (${q} entries)`);
    assert.ok(readAlertsOf(t).some((a) => /quarantine quota/.test(a.detail ?? '')), 'the overflow is recorded');
    assert.equal(d.proc.exitCode, null);
  });
});
