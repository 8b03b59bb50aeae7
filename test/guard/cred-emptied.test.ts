/**
 * `echo … > credentials.toml`: the shell truncates, then writes. The guard may see the file
 * empty and revert it; the writer's bytes then land in the rejected inode, which is hard-linked
 * into quarantine. The alert must name the keys those bytes changed, not the keys an empty file
 * would drop (seen in a fresh-clone run: the alert listed every approved key as removed).
 */
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, fstatSync, lstatSync, openSync, readFileSync, writeSync } from 'node:fs';
import { makeInitRoot, readAlertsOf, startDaemon, waitFor, type Daemon, type TestRoot } from '../helpers/root.js';

const CRED = 'config/credentials.toml';
const inodeAt = (p: string): number | null => { try { return lstatSync(p).ino; } catch { return null; } };
const roots: TestRoot[] = [];
const daemons: Daemon[] = [];
after(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  for (const t of roots.splice(0)) t.cleanup();
});

it('seen empty, then written: the alert lists the keys the written bytes changed', async () => {
  const t = makeInitRoot();
  roots.push(t);
  const d = await startDaemon(t, ['--guard']);
  daemons.push(d);
  const approved = readFileSync(t.p(CRED), 'utf8');
  // The shell's `>`: open with O_TRUNC, and write only once the guard has hard-linked this
  // inode into quarantine (its link count goes to 2), i.e. while its revert is under way.
  // The window lasts milliseconds; a loaded machine can deschedule this process across all
  // of it (seen in CI). An attempt counts only when the link was still there after the
  // write (the guard looks at the quarantined size after its rename drops that link);
  // a missed attempt is an ordinary emptied revert: wait for its alert and try again.
  const deadline = Date.now() + 30_000;
  let a: ReturnType<typeof readAlertsOf>[number] | undefined;
  for (let attempt = 1; !a; attempt++) {
    assert.ok(Date.now() < deadline, `no attempt caught the guard mid-revert (${attempt - 1} tried)`);
    const before = readAlertsOf(t).filter((x) => x.path === CRED).length;
    const fd = openSync(t.p(CRED), 'w');
    let counted = false;
    try {
      // A busy look, not a timer: the link lasts only until the revert settles.
      const { ino } = fstatSync(fd);
      for (;;) {
        assert.ok(Date.now() < deadline, 'timed out waiting for the guard to link the emptied file into quarantine');
        if (fstatSync(fd).nlink >= 2) break;
        if (inodeAt(t.p(CRED)) !== ino) break; // reverted before this process looked: missed
      }
      if (fstatSync(fd).nlink >= 2) {
        writeSync(fd, `${approved}\n[extra]\nplanted = "x"\n`);
        counted = fstatSync(fd).nlink >= 2;
      }
    } finally { closeSync(fd); }
    const mine = await waitFor(() => readAlertsOf(t).filter((x) => x.path === CRED)[before], 10_000, `the credentials alert of attempt ${attempt}`);
    await waitFor(() => readFileSync(t.p(CRED), 'utf8') === approved || null, 10_000, 'the approved bytes back');
    if (counted) a = mine;
  }
  assert.equal(a.action, 'reverted', JSON.stringify(a));
  assert.match(a.detail ?? '', /seen empty, then written/, JSON.stringify(a));
  assert.deepEqual(a.credential_changes?.map((c) => `${c.group}.${c.key}`), ['extra.planted'], JSON.stringify(a.credential_changes));
  assert.equal(readFileSync(t.p(CRED), 'utf8'), approved, 'the approved bytes are back');
});
