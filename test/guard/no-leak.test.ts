/**
 * No credential value leaks, against the real daemon: a text file later listed as a credential
 * is re-stored out of blobs/ and git; a killed `warden edit` leaves no private copy; history
 * records the OS user warden sees, not the one the client claims.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { CLI, cli, makeRoot, readAlertsOf, waitFor, TEST_WARDEN_TOML } from '../helpers/root.js';
import { own } from '../helpers/children.js';
import { cleanups, daemon, fresh, roots } from '../helpers/fresh-guard.js';
import { parseBody } from '../../src/store/baseline.js';

const ORG = 'orgs/bookclub.toml';

describe('no leak', () => {
  it('a text file later listed in credentials.files is re-stored as a credential: out of blobs/, out of git', async () => {
    const toml = TEST_WARDEN_TOML + '\n[[protect]]\npath = "config/api.toml"\n';
    const t = makeRoot({ wardenToml: toml });
    roots.push(t);
    const SECRET = 'first-secret-value-0123456789';
    writeFileSync(t.p('config/api.toml'), `[svc]\nkey = "${SECRET}"\n`);
    assert.equal(cli(t, ['init']).code, 0);
    const sha = createHash('sha256').update(readFileSync(t.p('config/api.toml'))).digest('hex');
    assert.ok(existsSync(t.p(`snapshots/blobs/${sha}`)), 'as text it is a blob (the finding)');
    const next = toml.replace('files = ["config/credentials.toml"]', 'files = ["config/credentials.toml", "config/api.toml"]')
      + '\n[credentials.groups.svc]\nkeys = ["key"]\n';
    writeFileSync(join(t.base, 'next.toml'), next);
    const r = cli(t, ['apply', 'config/warden.toml', '--from', join(t.base, 'next.toml')]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr + r.stdout, /config\/api\.toml.*credential.*history/i, 'the owner is told its earlier history is in git');
    const raw = readFileSync(t.p('snapshots/baseline/index'));
    const index = parseBody(raw.subarray(raw.indexOf(0x0a) + 1));
    assert.equal(index.files['config/api.toml']?.kind, 'credentials');
    assert.ok(!existsSync(t.p(`snapshots/blobs/${sha}`)), 'out of blobs/');
    assert.ok(existsSync(t.p(`snapshots/secrets/${sha}`)), 'into secrets/');
    await waitFor(() => spawnSync('git', ['-C', t.p('snapshots/history'), 'ls-files'], { encoding: 'utf8' }).stdout.includes('config/api.toml.fingerprints'), 10_000, 'history commit');
    const tree = spawnSync('git', ['-C', t.p('snapshots/history'), 'show', 'HEAD:config/api.toml'], { encoding: 'utf8' });
    assert.notEqual(tree.status, 0, 'the plain copy is no longer in the current tree');
    // A later edit is treated as a credential change: keys and fingerprints only.
    const d = await daemon(t);
    const NEW = 'second-secret-value-9876543210';
    writeFileSync(t.p('config/api.toml.x'), `[svc]\nkey = "${NEW}"\n`);
    renameSync(t.p('config/api.toml.x'), t.p('config/api.toml'));
    await waitFor(() => readAlertsOf(t).some((a) => a.path === 'config/api.toml' && a.credential_changes?.length), 10_000, 'credential alert');
    assert.ok(!d.stderr().includes(NEW) && !readFileSync(t.p('snapshots/alerts.jsonl'), 'utf8').includes(NEW));
  });

  it('re-stored as a credential while another protected text file holds the same bytes: that file keeps its blob and is still reverted', async () => {
    const toml = TEST_WARDEN_TOML + '\n[[protect]]\npath = "config/api.toml"\n\n[[protect]]\npath = "config/api-copy.toml"\n';
    const t = makeRoot({ wardenToml: toml });
    roots.push(t);
    const body = '[svc]\nkey = "shared-bytes-0123456789"\n';
    writeFileSync(t.p('config/api.toml'), body);
    writeFileSync(t.p('config/api-copy.toml'), body);
    assert.equal(cli(t, ['init']).code, 0);
    const sha = createHash('sha256').update(body).digest('hex');
    const next = toml.replace('files = ["config/credentials.toml"]', 'files = ["config/credentials.toml", "config/api.toml"]')
      + '\n[credentials.groups.svc]\nkeys = ["key"]\n';
    writeFileSync(join(t.base, 'next.toml'), next);
    const r = cli(t, ['apply', 'config/warden.toml', '--from', join(t.base, 'next.toml')]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(t.p(`snapshots/blobs/${sha}`)), 'the blob stays: config/api-copy.toml is still text with these bytes');
    await daemon(t);
    writeFileSync(t.p('config/api-copy.toml'), '[svc]\nkey = "planted"\n');
    const a = await waitFor(() => readAlertsOf(t).find((x) => x.path === 'config/api-copy.toml'), 10_000, 'the revert of the copy');
    assert.equal(a.action, 'reverted', JSON.stringify(a));
    assert.equal(readFileSync(t.p('config/api-copy.toml'), 'utf8'), body, 'the approved bytes are back');
  });
});

/** The processes started below `pid` (by id: we end only what we started). */
function descendants(pid: number): number[] {
  const kids = spawnSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).stdout.split('\n').filter(Boolean).map(Number);
  return kids.flatMap((k) => [k, ...descendants(k)]);
}

describe('no leak: edit copies and who asked', () => {
  it('kill -9 of warden edit: the private copy is gone by the next edit', async () => {
    const t = fresh();
    const tmp = join(t.base, 'tmp');
    mkdirSync(tmp, { mode: 0o700 });
    const editor = join(t.base, 'slow-editor');
    writeFileSync(editor, '#!/bin/sh\nexec sleep 61\n', { mode: 0o755 });
    const env = { ...t.env, TMPDIR: tmp, EDITOR: editor };
    const p = own(spawn(process.execPath, [CLI, 'edit', 'config/credentials.toml', '--root', t.root], { env, stdio: 'ignore' }), 'a child of this test');
    cleanups.push(() => { if (p.exitCode === null) p.kill('SIGKILL'); });
    await waitFor(() => readdirSync(tmp).some((n) => n.startsWith('warden-edit-') && readdirSync(join(tmp, n)).length > 0), 10_000, 'the private copy exists');
    // The copy is written before the editor starts: wait for the editor (its sleep) to be among the children.
    const cmdline = (pid: number) => { try { return readFileSync(`/proc/${pid}/cmdline`, 'latin1'); } catch { return ''; } };
    await waitFor(() => descendants(p.pid!).some((pid) => cmdline(pid).includes('sleep')), 10_000, 'the editor runs');
    const editorPids = descendants(p.pid!);
    p.kill('SIGKILL');
    await waitFor(() => p.exitCode !== null || p.signalCode !== null, 5_000, 'edit killed');
    for (const pid of editorPids) { try { process.kill(pid, 'SIGKILL'); } catch { /* gone */ } } // its editor, orphaned
    assert.ok(readdirSync(tmp).length > 0, 'kill -9 left the copy (the finding)');
    const r = cli(t, ['edit', ORG], { env: { TMPDIR: tmp, EDITOR: 'true' } });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(readdirSync(tmp), [], 'no copy with credential values left');
  });

  it('history records the OS user warden sees, not the one the client claims', async () => {
    const t = fresh();
    await daemon(t);
    const { callDaemon } = await import('../../src/daemon/control.js');
    const { Store } = await import('../../src/store/store.js');
    const store = Store.open(t.root);
    try {
      const res = await callDaemon(store, { op: 'change', change: { action: 'propose', command: `apply ${ORG}`, user: 'the-owner-honest',
        changes: [{ path: ORG, content_b64: Buffer.from(readFileSync(t.p(ORG), 'utf8').replace(/hourly_cap = \d+/, 'hourly_cap = 21')).toString('base64') }] } });
      assert.ok(res.kind === 'ok' && res.res.ok, JSON.stringify(res));
    } finally { store.close(); }
    await waitFor(() => /members|apply/.test(spawnSync('git', ['-C', t.p('snapshots/history'), 'log', '-1', '--format=%B'], { encoding: 'utf8' }).stdout), 10_000, 'history commit');
    const msg = spawnSync('git', ['-C', t.p('snapshots/history'), 'log', '-1', '--format=%B'], { encoding: 'utf8' }).stdout;
    const me = execFileSync('id', ['-un'], { encoding: 'utf8' }).trim();
    assert.match(msg, new RegExp(`user: ${me} \\(client said "the-owner-honest"\\)`), msg);
  });
});
