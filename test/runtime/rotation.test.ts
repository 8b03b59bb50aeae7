/**
 * A credential set kept in two files (docs/CONTRACT.md §Credentials transaction) rotated again and again, the
 * writer (the daemon, or the command under the lock) killed with SIGKILL from outside at
 * a random moment: a view open throughout, sampled on every event-loop turn and on every
 * change, never shows a token of one rotation with the application id of another. A view
 * opened fresh while the set is interrupted shows an approved pair or nothing.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { openApprovedView, type ApprovedState, type ApprovedView } from '../../src/runtime/index.js';
import { cli, makeRoot, startDaemon, waitFor, type Daemon, type TestRoot } from '../helpers/root.js';
import { newCredSet, TWO_FILE_CRED_WARDEN_TOML, type CredSet } from '../helpers/cred-set.js';
import { cliAsync, cliSpawn, noDeployment, sampleEveryTurn } from './helpers.js';

const TRIALS = 8;

type Pair = CredSet;
const newPair = newCredSet;

let t: TestRoot;
let view: ApprovedView;
let daemon: Daemon | null = null;

before(() => {
  t = makeRoot({ wardenToml: TWO_FILE_CRED_WARDEN_TOML });
});
after(async () => {
  await view?.close();
  await daemon?.stop();
  t.cleanup();
});

it(`${TRIALS} two-file rotations killed at random moments: the view never shows a mixed set`, { timeout: 240_000 }, async () => {
  let cur = newPair();
  writeFileSync(t.p('config/credentials.toml'), `[discord]\ntoken = "${cur.token}"\n\n[anthropic]\napi_key = "sk-ant-EXAMPLE-not-a-real-key"\n`, { mode: 0o600 });
  writeFileSync(t.p('config/discord-app.toml'), `[discord]\napplication_id = "${cur.application_id}"\n`, { mode: 0o600 });
  assert.equal(cli(t, ['init']).code, 0);
  daemon = await startDaemon(t);
  view = openApprovedView(t.root, { deployment: noDeployment(t) });
  await view.ready();

  const approved: Pair[] = [cur];
  const key = (p: Partial<Pair>) => `${p.token}|${p.application_id}`;
  const mixed: string[] = [];
  let closed = 0;
  const see = (s: ApprovedState) => {
    if (!s.ok) { closed++; if (Object.keys(s.credentials).length) mixed.push('closed with credentials'); return; }
    const d = s.credentials.discord ?? {};
    if (!approved.some((p) => key(p) === key(d))) mixed.push(`generation ${s.generation}: token and application_id from different rotations`);
  };
  see(view.current());
  assert.equal(view.current().credentials.discord?.token, cur.token);
  view.on('change', see);
  const sampler = sampleEveryTurn(() => view.current(), see);

  const stats = { interrupted: 0, rolledForward: 0, rolledBack: 0, completed: 0, freshViews: 0, freshClosed: 0 };
  for (let i = 0; i < TRIALS; i++) {
    const next = newPair();
    approved.push(next);
    const input = `${next.token}\n${next.application_id}\n`;
    // The kill lands at a random moment: counted from the start of the command, or (every
    // other trial) from the moment the transaction began writing its journal, so that
    // most trials die inside the transaction (7 steps of 40 ms).
    const fromJournal = i % 4 >= 2;
    const delay = fromJournal ? randomInt(0, 320) : randomInt(200, 1600);
    const killAt = async (kill: () => void, done: Promise<unknown>) => {
      let finished = false;
      void done.then(() => { finished = true; });
      // (The journal directory stays between transactions; its files do not.)
      if (fromJournal) await waitFor(() => finished || (existsSync(t.p('snapshots/journal')) && readdirSync(t.p('snapshots/journal')).length > 0), 20_000, 'the transaction to start');
      await new Promise((r) => setTimeout(r, delay));
      kill();
    };
    await daemon!.stop();
    daemon = null;
    if (i % 2 === 0) {
      // The daemon applies (slowed down at every step) and is killed from outside.
      const d = await startDaemon(t, ['--guard'], { WARDEN_TEST_STEP_DELAY_MS: '40' });
      const rotating = cliAsync(t, ['cred', 'rotate', 'discord'], input);
      await killAt(() => { void d.kill9(); }, rotating);
      await d.kill9();
      await rotating;
    } else {
      // No daemon: the command applies under the lock, and is killed from outside.
      const rotating = cliSpawn(t, ['cred', 'rotate', 'discord'], input, { WARDEN_TEST_STEP_DELAY_MS: '40' });
      await killAt(() => { try { rotating.proc.kill('SIGKILL'); } catch { /* gone */ } }, rotating.done);
      await rotating.done;
    }
    const interrupted = existsSync(t.p('snapshots/journal/intent'));
    if (interrupted) stats.interrupted++;
    // A runtime starting now (nothing running, maybe half a rotation on disk).
    const fresh = openApprovedView(t.root, { deployment: noDeployment(t), recheckMs: 0 });
    see(fresh.current());
    stats.freshViews++;
    if (!fresh.current().ok) stats.freshClosed++;
    await fresh.close();
    // Restart: recovery rolls the set back or forward; the view follows the manifest.
    daemon = await startDaemon(t);
    const gen = (): number => JSON.parse(readFileSync(t.p('snapshots/manifest.json'), 'utf8')).generation;
    await waitFor(() => view.current().ok && view.current().generation === gen(), 10_000, 'the view to follow the manifest after the restart');
    const d = view.current().credentials.discord;
    const isNew = d?.token === next.token && d?.application_id === next.application_id;
    const isOld = d?.token === cur.token && d?.application_id === cur.application_id;
    assert.ok(isNew || isOld, `trial ${i + 1}: the view holds the old or the new set`);
    if (interrupted) { if (isNew) stats.rolledForward++; else stats.rolledBack++; } else if (isNew) stats.completed++;
    if (isNew) cur = next;
  }
  const samples = sampler.stop();
  process.stderr.write(`# rotation: ${TRIALS} trials, ${JSON.stringify(stats)}, ${samples} view samples, ${closed} closed samples, ${mixed.length} mixed\n`);
  assert.deepEqual(mixed.slice(0, 5), [], 'never a mixed credential set');
  assert.ok(samples > 1000, `sampled often (${samples})`);
});
