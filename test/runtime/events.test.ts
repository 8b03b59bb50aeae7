/**
 * What makes the approved view look again, each path on its own: the manifest's own watch
 * event, the retry while it waits for files to match, and nothing at all for a root file's
 * event while the manifest is unchanged. Every view here has the 2-second stamp recheck off
 * (`recheckMs: 0`), so no test passes because the backstop found what the path under test
 * missed.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, mkdirSync, openSync, readFileSync, watch, writeFileSync, writeSync, ftruncateSync } from 'node:fs';
import { setImmediate as turn } from 'node:timers/promises';
import { openApprovedView, type ApprovedView } from '../../src/runtime/index.js';
import { cli, TEST_WARDEN_TOML, testWorld, waitFor, type TestRoot } from '../helpers/root.js';
import { noDeployment } from './helpers.js';

const world = testWorld();
const views: ApprovedView[] = [];
after(async () => { for (const v of views) await v.close(); await world.cleanup(); });

function open(t: TestRoot): ApprovedView {
  const v = openApprovedView(t.root, { deployment: noDeployment(t), recheckMs: 0 });
  views.push(v);
  return v;
}

/**
 * Rewrite a file in place (same inode, no temp file, no rename): the only watch event is the
 * file's own. Not atomic: a reader may see it half-written, which the view must survive.
 */
function rewriteInPlace(path: string, text: string): void {
  const b = Buffer.from(text);
  const fd = openSync(path, 'r+');
  try { writeSync(fd, b, 0, b.length, 0); ftruncateSync(fd, b.length); } finally { closeSync(fd); }
}

/** Resolves once this process's own watch on `dir` saw an event (the view's watch shares the inotify queue). */
function eventIn(dir: string): { seen: Promise<void>; close(): void } {
  let done!: () => void;
  const seen = new Promise<void>((r) => { done = r; });
  const w = watch(dir, () => done());
  return { seen, close: () => w.close() };
}

describe('what makes the approved view look again (recheck off)', () => {
  it('a change no watch event reports: the retry keeps looking (backing off) until the files match', { timeout: 30_000 }, async () => {
    // A credential file may live anywhere in the root; the view watches only the manifest's
    // directory and the policy directories, so an edit under secrets/app/ reports nothing to it.
    const t = world.root({ wardenToml: TEST_WARDEN_TOML.replace('files = ["config/credentials.toml"]', 'files = ["config/credentials.toml", "secrets/app/extra.toml"]') });
    mkdirSync(t.p('secrets/app'), { recursive: true });
    const approved = '[extra]\nkey = "approved-value-1"\n';
    writeFileSync(t.p('secrets/app/extra.toml'), approved, { mode: 0o600 });
    const init = cli(t, ['init']);
    assert.equal(init.code, 0, init.stderr);
    // A direct edit (no daemon runs to revert it): the view waits for the approved bytes.
    rewriteInPlace(t.p('secrets/app/extra.toml'), '[extra]\nkey = "edited-value-22"\n');
    const v = open(t);
    await v.ready();
    assert.equal(v.current().ok, false);
    assert.match(v.current().reason ?? '', /waiting for the files to match the approved manifest \(generation 1\): secrets\/app\/extra\.toml does not hold the approved content/);
    // Let the backoff grow (10 ms doubling, at most 1 s): the retry must still come.
    await waitFor(() => v.stats().checks >= 6, 10_000, 'the view to retry while it waits');
    rewriteInPlace(t.p('secrets/app/extra.toml'), approved);
    await waitFor(() => v.current().ok, 10_000, 'the view to adopt once the approved bytes are back, with no event and no recheck');
    assert.equal(v.current().generation, 1);
    assert.equal(v.current().credentials.extra?.key, 'approved-value-1');
  });

  it("the manifest rewritten in place (its own watch event only) is adopted", { timeout: 30_000 }, async () => {
    const t = world.root({ init: true });
    const v = open(t);
    await v.ready();
    await waitFor(() => v.current().generation === 1, 10_000, 'the view to adopt generation 1');
    // The check ready() scheduled (for anything published while arming) runs first: after it,
    // only the rewrite's own event can make the view look.
    await turn(); await turn();
    const m = t.p('snapshots/manifest.json');
    const text = readFileSync(m, 'utf8');
    assert.match(text, /"generation": 1,/);
    // The same files, another generation: nothing but the manifest changes on disk.
    rewriteInPlace(m, text.replace('"generation": 1,', '"generation": 7,'));
    await waitFor(() => v.current().generation === 7, 10_000, "the view to adopt the manifest on its own event");
    assert.equal(v.current().ok, true);
  });

  it("between changes a root file's event makes the view read nothing, not even the manifest", { timeout: 30_000 }, async () => {
    const t = world.root({ init: true });
    const v = open(t);
    await v.ready();
    await waitFor(() => v.current().generation === 1, 10_000, 'the view to adopt generation 1');
    await turn(); await turn();
    const before = v.stats();
    // A direct edit of a policy file in a watched directory (no daemon: it stays on disk).
    const ev = eventIn(t.p('orgs'));
    try {
      const org = t.p('orgs/bookclub.toml');
      rewriteInPlace(org, readFileSync(org, 'utf8').replace(/hourly_cap = \d+/, 'hourly_cap = 98'));
      await Promise.race([ev.seen, new Promise((_, rej) => setTimeout(() => rej(new Error('no watch event for the edit within 10 s')), 10_000))]);
    } finally { ev.close(); }
    // The view's handler ran in the same inotify read as ours; a check it scheduled runs on the
    // next turns of the loop, before this timer.
    await turn(); await turn();
    await new Promise((r) => setTimeout(r, 100));
    const now = v.stats();
    assert.deepEqual({ checks: now.checks - before.checks, manifestReads: now.manifestReads - before.manifestReads, fileReads: now.fileReads - before.fileReads }, { checks: 0, manifestReads: 0, fileReads: 0 });
    assert.equal(v.current().generation, 1);
    assert.equal(v.current().ok, true, 'the direct edit never reaches the view');
  });
});
