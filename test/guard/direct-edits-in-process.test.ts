/**
 * The guard in this process (runDaemon, as `warden run --guard` calls it) on a real root made
 * by `warden init`: the agent's usual edits, each put back to the approved bytes and mode,
 * with the alert a person reads, the rejected bytes kept in quarantine, the journal line, and
 * nothing of a credential value anywhere. Fast (one daemon start, ~40 ms; each revert a few
 * ms): `npm run mutate -- guard --sample N` runs it first for every mutant of the guard's
 * I/O files, before the daemon tests.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, linkSync, lstatSync, mkdirSync, readFileSync, readdirSync, renameSync, statSync, symlinkSync, truncateSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { makeInitRoot, readAlertsOf, sha, waitFor, type TestRoot } from '../helpers/root.js';
import { runDaemon, type Daemon } from '../../src/daemon/run.js';
import { callDaemon } from '../../src/daemon/control.js';
import { Store } from '../../src/store/store.js';
import type { Alert } from '../../src/store/alert-types.js';

let t: TestRoot;
let d: Daemon | null = null;
const logs: string[] = [];
const out: string[] = [];
/** The approved bytes and mode of every protected file, read before the guard started. */
const approved = new Map<string, { bytes: Buffer; mode: number }>();
const PROTECTED = ['blocks/conditional/nsfw.md', 'config/conditions.toml', 'config/credentials.toml', 'config/guests.toml', 'config/warden.toml', 'orgs/bookclub.toml'];
const SECRET = 'SECRETSECRETSECRET.value';
let seen = 0;

before(async () => {
  t = makeInitRoot();
  for (const p of PROTECTED) approved.set(p, { bytes: readFileSync(t.p(p)), mode: statSync(t.p(p)).mode & 0o7777 });
  process.env.XDG_STATE_HOME = t.env.XDG_STATE_HOME;
  d = await runDaemon({ root: t.root, guard: true, notifier: false, initIfNeeded: false, witness: false, stdout: (l) => out.push(l), log: (l) => logs.push(l) });
});
after(async () => {
  try { await d?.stop(); } finally { t?.cleanup(); }
});

/** Do `edit`, then wait for the alerts it raises (at least `count`); returns them. */
async function edit(what: string, f: () => void, count = 1): Promise<Alert[]> {
  f();
  const all = await waitFor(() => { const a = readAlertsOf(t); return a.length >= seen + count ? a : null; }, 10_000, `the alert for: ${what}`);
  const mine = all.slice(seen);
  seen = all.length;
  return mine;
}

/** The protected file is back: its approved bytes and mode, a regular file of its own. */
async function restored(path: string): Promise<void> {
  const a = approved.get(path)!;
  await waitFor(() => {
    const st = lstatSync(t.p(path));
    return st.isFile() && st.nlink === 1 && (st.mode & 0o7777) === a.mode && readFileSync(t.p(path)).equals(a.bytes);
  }, 10_000, `${path} put back to its approved bytes and mode`);
}

const quarantined = (a: Alert): Buffer => { assert.ok(a.quarantine, `alert ${a.id} keeps what it rejected`); return readFileSync(t.p(a.quarantine)); };

describe('the guard puts every direct edit back, and says so', () => {
  it('starts on the initialised root: "ready", and the control socket answers a ping with the baseline', async () => {
    assert.deepEqual(out, ['ready']);
    const s = Store.open(t.root);
    try {
      const c = await callDaemon(s, { op: 'ping' });
      assert.equal(c.kind, 'ok');
      const r = (c as { res: Record<string, unknown> }).res;
      assert.equal(r.ok, true);
      assert.equal(r.pid, process.pid);
      assert.equal(r.generation, 1);
      assert.equal(r.files, PROTECTED.length);
      assert.deepEqual(r.failing, []);
    } finally { s.close(); }
  });

  it('echo > file: reverted for its content; the alert has both hashes; quarantine holds the rejected bytes', async () => {
    const bad = 'name = "evil"\nfolders = ["/workspace/"]\n';
    const [a] = await edit('content', () => writeFileSync(t.p('orgs/bookclub.toml'), bad));
    assert.equal(a!.path, 'orgs/bookclub.toml');
    assert.equal(a!.action, 'reverted');
    assert.equal(a!.reason, 'content');
    const ok = approved.get('orgs/bookclub.toml')!;
    assert.deepEqual(a!.before, { sha256: sha(ok.bytes), size: ok.bytes.length, mode: ok.mode });
    assert.deepEqual({ sha256: a!.after?.sha256, size: a!.after?.size }, { sha256: sha(bad), size: bad.length });
    assert.equal(quarantined(a!).toString(), bad);
    assert.match(a!.quarantine!, new RegExp(`^snapshots/quarantine/${a!.id}/bookclub\\.toml$`));
    assert.match(a!.advice ?? '', /warden edit orgs\/bookclub\.toml/);
    await restored('orgs/bookclub.toml');
    await waitFor(() => logs.some((l) => l.includes(`reverted orgs/bookclub.toml: content; alert ${a!.id}`)), 5000, 'the journal line');
  });

  it('an edit that keeps the size and puts the mtime back is still caught', async () => {
    const p = t.p('config/guests.toml');
    const st = statSync(p);
    const orig = readFileSync(p);
    const same = Buffer.from(orig); same[same.length - 2] = same[same.length - 2] === 0x41 ? 0x42 : 0x41;
    const [a] = await edit('same size', () => { writeFileSync(p, same); utimesSync(p, st.atime, st.mtime); });
    assert.equal(a!.reason, 'content');
    assert.equal(a!.after?.size, orig.length);
    assert.ok(quarantined(a!).equals(same));
    await restored('config/guests.toml');
  });

  it('chmod 0666: reverted for its mode, content untouched', async () => {
    const [a] = await edit('mode', () => chmodSync(t.p('config/guests.toml'), 0o666));
    assert.equal(a!.reason, 'mode');
    assert.equal(a!.after?.mode, 0o666);
    assert.equal(a!.after?.sha256, a!.before?.sha256, 'the same bytes');
    await restored('config/guests.toml');
  });

  it('rm: put back (nothing to keep)', async () => {
    const [a] = await edit('deleted', () => unlinkSync(t.p('config/guests.toml')));
    assert.equal(a!.reason, 'deleted');
    assert.equal(a!.after, null);
    assert.equal(a!.quarantine, null);
    await restored('config/guests.toml');
  });

  it('truncated to nothing: reverted as emptied', async () => {
    const [a] = await edit('emptied', () => truncateSync(t.p('config/guests.toml'), 0));
    assert.equal(a!.reason, 'emptied');
    assert.equal(a!.after?.size, 0);
    assert.equal(quarantined(a!).length, 0);
    await restored('config/guests.toml');
  });

  it('replaced by a symlink to a file outside: the link is set aside, never written through', async () => {
    const target = join(t.outside, 'target.txt');
    const before = readFileSync(target, 'utf8');
    const [a] = await edit('symlink', () => { unlinkSync(t.p('orgs/bookclub.toml')); symlinkSync(target, t.p('orgs/bookclub.toml')); });
    assert.equal(a!.reason, 'symlink');
    assert.equal(a!.after?.sha256, null, 'a link has no content of its own to hash');
    assert.equal(readFileSync(target, 'utf8'), before, 'the file outside is untouched');
    assert.equal(lstatSync(t.p(a!.quarantine!)).isSymbolicLink(), true, 'the link itself is kept');
    await restored('orgs/bookclub.toml');
  });

  it('mv of another file over it: reverted for its content', async () => {
    const [a] = await edit('rename over', () => { writeFileSync(join(t.root, 'x.tmp'), 'name = "evil"\n', { mode: 0o600 }); renameSync(join(t.root, 'x.tmp'), t.p('orgs/bookclub.toml')); });
    assert.equal(a!.reason, 'content');
    assert.equal(a!.after?.mode, 0o600);
    assert.equal(quarantined(a!).toString(), 'name = "evil"\n');
    await restored('orgs/bookclub.toml');
  });

  it('a write through a hard link made outside the root: reverted; the root keeps a file of its own', async () => {
    const hl = join(t.outside, 'hl');
    const [a] = await edit('hard link', () => { linkSync(t.p('config/conditions.toml'), hl); writeFileSync(hl, 'evil = 1\n'); });
    assert.equal(a!.reason, 'content');
    assert.equal(quarantined(a!).toString(), 'evil = 1\n');
    await restored('config/conditions.toml');
    assert.notEqual(statSync(hl).ino, statSync(t.p('config/conditions.toml')).ino, 'the agent\'s link no longer reaches the protected file');
  });

  it('a FIFO in its place is never opened: set aside as not a regular file', async () => {
    const [a] = await edit('fifo', () => { unlinkSync(t.p('config/guests.toml')); execFileSync('mkfifo', [t.p('config/guests.toml')]); });
    assert.equal(a!.reason, 'not-regular');
    assert.equal(lstatSync(t.p(a!.quarantine!)).isFIFO(), true);
    await restored('config/guests.toml');
  });

  it('a new file in a protected directory is removed and kept', async () => {
    const [a] = await edit('unexpected', () => writeFileSync(t.p('orgs/evil.toml'), 'name = "evil"\n'));
    assert.equal(a!.action, 'removed');
    assert.equal(a!.reason, 'unexpected-file');
    assert.equal(a!.path, 'orgs/evil.toml');
    assert.equal(quarantined(a!).toString(), 'name = "evil"\n');
    await waitFor(() => !readdirSync(t.p('orgs')).includes('evil.toml'), 5000, 'orgs/evil.toml gone');
  });

  it('a protected directory moved away: its file is put back in a new directory', async () => {
    const alerts = await edit('dir moved', () => renameSync(t.p('blocks/conditional'), join(t.outside, 'cond')));
    assert.ok(alerts.some((a) => a.path === 'blocks/conditional/nsfw.md' && a.reason === 'deleted'), JSON.stringify(alerts.map((a) => [a.path, a.reason])));
    await restored('blocks/conditional/nsfw.md');
    assert.ok(readdirSync(join(t.outside, 'cond')).includes('nsfw.md'), 'the moved directory is not touched');
  });

  it('half of a credential group changed: reverted, and the value is nowhere in the alert or the journal', async () => {
    const p = t.p('config/credentials.toml');
    const text = readFileSync(p, 'utf8');
    assert.match(text, /token = "/);
    const [a] = await edit('credential', () => writeFileSync(p, text.replace(/token = "[^"]*"/, `token = "${SECRET}"`)));
    assert.equal(a!.reason, 'half-applied');
    await restored('config/credentials.toml');
    assert.ok(!JSON.stringify(readAlertsOf(t)).includes(SECRET), 'no alert holds the value');
    assert.ok(!logs.join('\n').includes(SECRET), 'no journal line holds the value');
    // The quarantined copy is the one place the rejected bytes live: 0600, in the store.
    assert.equal(statSync(t.p(a!.quarantine!)).mode & 0o777, 0o600);
  });

  it('after all of it: every protected file approved, the ping counts what it did, no path failing', async () => {
    for (const p of PROTECTED) await restored(p);
    const s = Store.open(t.root);
    try {
      const c = await callDaemon(s, { op: 'ping' });
      const r = (c as { res: { counters: Record<string, number>; failing: string[]; generation: number } }).res;
      assert.deepEqual(r.failing, []);
      assert.equal(r.generation, 1, 'no revert changes the approved generation');
      const total = Object.values(r.counters).reduce((x, y) => x + y, 0);
      assert.ok(total >= seen, `counters ${JSON.stringify(r.counters)} account for ${seen} alerts`);
    } finally { s.close(); }
    mkdirSync(join(t.outside, 'end'));
  });
});
