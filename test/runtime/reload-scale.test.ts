/**
 * A hot reload of the seed's 468-rule conditions.toml through warden/runtime. The
 * view verifies the files on its loop and builds the large policy on its builder thread, so
 * the runtime's event loop is not held by the parse (the stall is measured by npm run bench,
 * bench/policy-scale.ts; never timed here). What is asserted: the reload is adopted, it was
 * built off the loop, and every state seen on every turn meanwhile is approved and whole
 * (generation 1's policy or generation 2's, never a mix, never closed).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { canRead, openApprovedView, type ApprovedView, type SessionContext } from '../../src/runtime/index.js';
import { CLI, testWorld, waitFor } from '../helpers/root.js';
import { SCALE_GUEST_CH, scaleConditions, scaleGuests } from '../helpers/policy-scale.js';
import { noDeployment } from './helpers.js';

const world = testWorld();
const views: ApprovedView[] = [];
after(async () => { for (const v of views) await v.close(); await world.cleanup(); });

const GUEST: [string, SessionContext] = ['999999999999999999', { kind: 'guild', guild: '5', channel: SCALE_GUEST_CH }];
const TARGET = '/workspace/guest-1/n.md';

test('a 468-rule conditions.toml applied while a view is open: built off the loop, adopted whole, never a mixed or closed state', { timeout: 60_000 }, async () => {
  const t = world.root();
  writeFileSync(t.p('config/conditions.toml'), scaleConditions(468));
  writeFileSync(t.p('config/guests.toml'), scaleGuests(600));
  const init = await promisify(execFile)(process.execPath, [CLI, 'init', '--root', t.root], { env: t.env });
  assert.match(init.stdout + init.stderr, /.+/);
  const v = openApprovedView(t.root, { deployment: noDeployment(t) });
  views.push(v);
  await v.ready();
  const first = v.current();
  assert.equal(first.ok, true, first.reason ?? '');
  assert.equal(first.generation, 1);
  assert.equal(first.policy.conditions?.rules.length, 469);
  assert.equal(canRead(first.policy, ...GUEST, TARGET), true, 'generation 1 lets the guest read its folder');

  // Generation 2: a rule that holds only for internal sessions now governs the guest's folder (step 3 blocks it for the guest).
  const next = `${scaleConditions(468)}\n[workspace."/guest-1/"]\nwhen = "internal"\naction = "allow"\n`;
  const from = join(t.base, 'next.toml');
  writeFileSync(from, next);
  let samples = 0; let bad: string | null = null; let sampling = true;
  const see = () => {
    const s = v.current();
    samples++;
    if (!s.ok) bad ??= `closed: ${s.reason}`;
    else if (s.generation === 1 && (s.policy.conditions?.rules.length !== 469 || !canRead(s.policy, ...GUEST, TARGET))) bad ??= 'generation 1 with another policy';
    else if (s.generation === 2 && (s.policy.conditions?.rules.length !== 470 || canRead(s.policy, ...GUEST, TARGET))) bad ??= 'generation 2 with another policy';
    else if (s.generation !== 1 && s.generation !== 2) bad ??= `generation ${s.generation}`;
  };
  const turn = () => { if (!sampling) return; see(); setImmediate(turn); };
  setImmediate(turn);
  v.on('change', see);
  await promisify(execFile)(process.execPath, [CLI, 'apply', 'config/conditions.toml', '--from', from, '--root', t.root], { env: t.env });
  await waitFor(() => v.current().generation === 2, 20_000, 'the view to adopt generation 2');
  sampling = false;
  assert.equal(bad, null);
  assert.ok(samples > 10, `sampled ${samples} turns`);
  const s = v.current();
  assert.equal(s.policy.conditions?.rules.length, 470);
  assert.equal(canRead(s.policy, ...GUEST, TARGET), false);
  assert.equal(canRead(s.policy, GUEST[0], { kind: 'internal' }, TARGET), true);
  assert.ok(v.stats().builtOffLoop >= 1, `built off the loop: ${JSON.stringify(v.stats())}`);
});
