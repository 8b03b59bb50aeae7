/**
 * docs/CONTRACT.md §Runtime view under attack: while a writer storms widened org and guest files, a planted
 * org, a chmod and half-switched credentials against a real running daemon, a view
 * sampled on every turn of the event loop and on every 'change' never returns a state
 * warden did not approve. Then a sanctioned `warden apply` reaches the view.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { openApprovedView, canRead, type ApprovedState, type ApprovedView } from '../../src/runtime/index.js';
import { cli, makeRoot, sha, startDaemon, waitFor, type Daemon, type TestRoot } from '../helpers/root.js';
import { approvedNow, cliAsync, judge, MEMBER, MEMBER_CTX, noDeployment, sampleEveryTurn, type Approved } from './helpers.js';

const STORM_MS = 3000;

// The attacker: a separate process writing as fast as it can, several ways.
const WRITER = `
const fs = require('node:fs'); const path = require('node:path');
const [root, ms] = [process.argv[1], Number(process.argv[2])];
const p = (r) => path.join(root, r);
const org = fs.readFileSync(p('orgs/bookclub.toml'), 'utf8').replace(/^folders = \\[/m, 'folders = ["/memories/widened/", ');
const guests = 'channels = ["555555555555555555"]\\nfolders = ["/workspace/public/", "/workspace/widened/"]\\n';
const creds = fs.readFileSync(p('config/credentials.toml'), 'utf8').replace(/token = "[^"]*"/, 'token = "MTExMTExMTExMTExMTExMTEx.HALF00.switched-token"');
const evil = 'members = ["999999999999999999"]\\nchannels = ["555555555555555555"]\\nfolders = ["/workspace/"]\\ncommands = ["sh"]\\nhourly_cap = 1000\\n';
const end = Date.now() + ms; let writes = 0, i = 0;
while (Date.now() < end) {
  try {
    switch (i++ % 6) {
      case 0: fs.writeFileSync(p('orgs/bookclub.toml'), org); break;
      case 1: fs.writeFileSync(p('config/.g.tmp'), guests); fs.renameSync(p('config/.g.tmp'), p('config/guests.toml')); break;
      case 2: fs.writeFileSync(p('config/credentials.toml'), creds); break;
      case 3: fs.writeFileSync(p('orgs/evil.toml'), evil); break;
      case 4: fs.chmodSync(p('config/guests.toml'), 0o666); break;
      case 5: { const fd = fs.openSync(p('orgs/bookclub.toml'), 'r+'); fs.ftruncateSync(fd, 10); fs.closeSync(fd); break; }
    }
    writes++;
  } catch { /* the guard got there first */ }
}
process.stdout.write(String(writes));
`;

let t: TestRoot;
let daemon: Daemon;
let view: ApprovedView;

before(async () => {
  t = makeRoot();
  const r = cli(t, ['init']);
  assert.equal(r.code, 0, r.stderr);
  daemon = await startDaemon(t);
});

after(async () => {
  await view?.close();
  await daemon?.stop();
  t.cleanup();
});

it('a storm of direct edits never reaches the view; a sanctioned apply does', { timeout: 120_000 }, async () => {
  const g0: Approved = approvedNow(t);
  const creds = { discord: { token: 'MTExMTExMTExMTExMTExMTEx.FAKE00.example-not-a-real-token', application_id: '111111111111111111' }, anthropic: { api_key: 'sk-ant-EXAMPLE-not-a-real-key' } };
  view = openApprovedView(t.root, { deployment: noDeployment(t) });
  await view.ready();
  const first = view.current();
  assert.equal(judge(first, [g0], creds), null, `the view starts at the approved state: ${first.reason ?? ''}`);
  const gen0 = first.generation as number;

  const bad: string[] = [];
  let closed = 0;
  let changes = 0;
  const approvedStates = [g0];
  const see = (s: ApprovedState) => {
    const why = judge(s, approvedStates, creds);
    if (why === 'closed') closed++;
    else if (why) bad.push(why);
  };
  view.on('change', (s) => { changes++; see(s); });
  const sampler = sampleEveryTurn(() => view.current(), see);
  const stats0 = view.stats();

  const writer = spawn(process.execPath, ['-e', WRITER, t.root, String(STORM_MS)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  writer.stdout!.on('data', (d) => { out += String(d); });
  await new Promise((r) => writer.once('exit', r));
  const writes = Number(out);
  // The guard puts everything back; the view never moved.
  await waitFor(() => Object.entries(g0).every(([p, h]) => sha(readFileSync(t.p(p))) === h), 20_000, 'the guard to restore every file');
  const duringStorm = sampler.stop();
  const stats1 = view.stats();
  const cost = { checks: stats1.checks - stats0.checks, manifestReads: stats1.manifestReads - stats0.manifestReads, fileReads: stats1.fileReads - stats0.fileReads };
  process.stderr.write(`# the view's own work during the storm: ${JSON.stringify(cost)}\n`);
  assert.equal(cost.fileReads, 0, 'with the manifest unchanged, no direct edit makes the view read a file');
  process.stderr.write(`# storm: ${writes} attacker writes in ${STORM_MS} ms, ${duringStorm} view samples (every event-loop turn), ${changes} change events, ${bad.length} unapproved, ${closed} closed\n`);
  assert.ok(writes > 100, `the storm wrote (${writes})`);
  assert.ok(duringStorm > 1000, `the view was sampled often (${duringStorm})`);
  assert.deepEqual(bad.slice(0, 5), [], 'no sample was an unapproved state');
  assert.equal(closed, 0, 'the view never failed closed during the storm (the manifest stayed good)');
  assert.equal(view.current().generation, gen0);

  // A sanctioned change: the view moves to it, and only to it.
  const newOrg = readFileSync(t.p('orgs/bookclub.toml'), 'utf8').replace(/^folders = \[/m, 'folders = ["/workspace/newly-approved/", ');
  const g1: Approved = { ...g0, 'orgs/bookclub.toml': sha(newOrg) };
  approvedStates.push(g1);
  const sampler2 = sampleEveryTurn(() => view.current(), see);
  const t0 = performance.now();
  let seenAt = -1;
  let sinceCommit = -1;
  const moved = new Promise<void>((res) => view.on('change', (s) => {
    if (s.generation !== gen0 + 1 || seenAt >= 0) return;
    seenAt = performance.now() - t0;
    // The manifest's `updated` is the baseline commit's time (ms resolution).
    sinceCommit = Date.now() - Date.parse(JSON.parse(readFileSync(t.p('snapshots/manifest.json'), 'utf8')).updated);
    res();
  }));
  const applied = cliAsync(t, ['apply', 'orgs/bookclub.toml', '--from', '-'], newOrg);
  const r = await applied;
  assert.equal(r.code, 0, r.stderr);
  await Promise.race([moved, new Promise((_, rej) => setTimeout(() => rej(new Error('the sanctioned apply did not reach the view within 10 s')), 10_000))]);
  const samples2 = sampler2.stop();
  process.stderr.write(`# sanctioned apply → view change: ${sinceCommit} ms after the baseline commit, ${seenAt.toFixed(1)} ms after spawning 'warden apply' (the CLI itself took ${r.ms.toFixed(1)} ms, including node start-up); ${samples2} samples meanwhile\n`);
  assert.deepEqual(bad, [], 'no unapproved state during the apply either');
  const s = view.current();
  assert.equal(judge(s, [g1], creds), null);
  assert.equal(canRead(s.policy, MEMBER, MEMBER_CTX, '/workspace/newly-approved/a.md'), true, 'the new approved grant is in force');
});
