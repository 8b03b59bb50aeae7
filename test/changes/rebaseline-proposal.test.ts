/**
 * `init --force` on an authentic baseline (fast tier): the differences between the disk and
 * the approved state, proposed as one sanctioned change.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { diskDifferences } from '../../src/changes/rebaseline.js';
import type { PendingView } from '../../src/changes/protocol.js';
import { op, roots, text, tomlWith, writer } from './in-process-root.js';
import type { TestRoot } from '../helpers/root.js';

const R = roots();
after(() => R.cleanup());

const ORG = 'orgs/bookclub.toml';
const diffs = (t: TestRoot) => { const w = writer(t, { prepare: false }); try { return diskDifferences(w.env.ctx); } finally { w.close(); } };

describe('rebaseline', () => {
  it('nothing differs: nothing proposed', async () => {
    const t = await R.init();
    assert.deepEqual(diffs(t), []);
    assert.deepEqual((await op(t, { action: 'rebaseline' })).reply, { ok: true, nothing: true, generation: 1 });
  });

  it('content, mode, a new file and a removed file: one change each, in path order', async () => {
    const t = await R.init();
    const org = text(t.p(ORG)).replace('hourly_cap = 20', 'hourly_cap = 40');
    writeFileSync(t.p(ORG), org);
    chmodSync(t.p('config/guests.toml'), 0o600);
    const fresh = 'members = []\nchannels = []\nfolders = []\ncommands = []\nhourly_cap = 1\n';
    writeFileSync(t.p('orgs/added.toml'), fresh);
    chmodSync(t.p('orgs/added.toml'), 0o640);
    rmSync(t.p('blocks/conditional/nsfw.md'));
    const d = diffs(t);
    assert.deepEqual(d.map((c) => ({ ...c, content: c.content?.toString() ?? null })), [
      { path: 'blocks/conditional/nsfw.md', content: null },
      { path: 'config/guests.toml', content: null, keep: true, mode: 0o600 },
      { path: 'orgs/added.toml', content: fresh, mode: 0o640 },
      { path: ORG, content: org, mode: 0o644 },
    ]);
  });

  it('approval none: applied as "init --force" by the user given', async () => {
    const t = await R.init();
    const org = text(t.p(ORG)).replace('hourly_cap = 20', 'hourly_cap = 41');
    writeFileSync(t.p(ORG), org);
    const { reply } = await op(t, { action: 'rebaseline', user: 'owner' });
    assert.equal(reply.ok, true, JSON.stringify(reply));
    assert.deepEqual(reply.applied?.paths, [ORG]);
    assert.equal(reply.applied?.generation, 2);
    const w = writer(t, { prepare: false });
    try { assert.deepEqual(w.loaded.state.bytesOf(w.loaded.store.fd, ORG), readFileSync(t.p(ORG))); } finally { w.close(); }
  });

  it('approval tty: a pending request for the differences', async () => {
    const t = await R.init({ wardenToml: tomlWith('tty') });
    chmodSync(t.p(ORG), 0o600);
    const { reply } = await op(t, { action: 'rebaseline' });
    const v = reply.pending as PendingView;
    assert.equal(v.command, 'init --force');
    assert.equal(v.user, 'unknown');
    assert.deepEqual(v.paths, [ORG]);
  });
});
