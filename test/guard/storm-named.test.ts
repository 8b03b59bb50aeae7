/**
 * The path-hardening attacks, as the agent (deployment A: the agent owns the root and its parent, the
 * guard's store is outside the root): 150 new org files in one burst. Past the first 100
 * alerts of a window, alerts fold; every quarantine folder must still be named by an alert
 * line (docs/CONTRACT.md §Revert), and `warden alerts` and `warden diff` must reach each one.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { agentWorld, type AgentWorld } from '../helpers/agent-world.js';
import { readAlertsFile, waitFor } from '../helpers/root.js';
import type { Alert } from '../../src/store/alert-types.js';

const worlds: AgentWorld[] = [];
after(async () => { for (const w of worlds.splice(0)) await w.cleanup(); });

const alertsOf = (w: AgentWorld): Alert[] => readAlertsFile(join(w.store, 'alerts.jsonl'));

const BURST = String.raw`
import sys
for i in range(int(sys.argv[2])):
    with open('%s/orgs/burst-%03d.toml' % (sys.argv[1], i), 'w') as f: f.write('members = ["burst-%d"]\n' % i)
`;

describe('a burst of 150 new org files', () => {
  it('every quarantine folder is named by an alert line, and alerts and diff reach each one', async () => {
    const w = agentWorld();
    worlds.push(w);
    await w.guard();
    const burst = w.agent(BURST, [w.t.root, '150']);
    assert.equal(burst.code, 0, burst.out);
    await waitFor(() => readdirSync(w.t.p('orgs')).every((n) => !n.startsWith('burst-')), 30_000, 'every new file removed');
    const folders = () => readdirSync(join(w.store, 'quarantine'));
    await waitFor(() => folders().length === 150, 10_000, '150 quarantine folders');
    // The folded alert is written when its window closes (10 s).
    await waitFor(() => alertsOf(w).filter((a) => a.reason === 'unexpected-file').reduce((n, a) => n + (a.count ?? 1), 0) === 150, 20_000, 'every removal counted');
    const alerts = alertsOf(w);
    const named = new Map<string, string>();
    for (const a of alerts) {
      if (a.quarantine) named.set(a.id, a.quarantine);
      for (const m of a.folded ?? []) named.set(m.id, m.quarantine);
    }
    const unnamed = folders().filter((f) => !named.has(f));
    assert.deepEqual(unnamed, [], `${unnamed.length} of 150 quarantine folders named by no alert line`);
    for (const [id, q] of named) assert.ok(q.startsWith(join(w.store, 'quarantine', id) + '/'), `alert ${id} names its own folder: ${q}`);
    const folded = alerts.filter((a) => a.count);
    assert.ok(folded.length >= 1, 'the burst folded');
    for (const a of folded) assert.ok(!/accept [0-9a-z]+-[0-9a-f]{4}/.test(a.advice) || (a.folded ?? []).length === 0, `a folded alert's advice names no id without a line: ${a.advice}`);
    // warden alerts names every folder; warden diff and accept's lookup reach a folded one.
    const text = w.cli(['alerts']);
    assert.equal(text.code, 0, text.stderr);
    const missing = folders().filter((f) => !text.stdout.includes(f));
    assert.deepEqual(missing, [], 'warden alerts names every quarantine folder');
    const member = folded.flatMap((a) => a.folded ?? [])[0]!;
    const d = w.cli(['diff', member.id]);
    assert.equal(d.code, 0, d.stdout + d.stderr);
    assert.match(d.stdout, new RegExp(`alert ${member.id}: removed ${member.path}`));
    assert.match(d.stdout, /\+ members = \["burst-\d+"\]/, 'the rejected content is shown');
  });
});
