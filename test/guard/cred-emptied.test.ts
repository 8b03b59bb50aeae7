/**
 * `echo … > credentials.toml`: the shell truncates, then writes. The guard may see the file
 * empty and revert it; the writer's bytes then land in the rejected inode, which is hard-linked
 * into quarantine. The alert must name the keys those bytes changed, not the keys an empty file
 * would drop (seen in a fresh-clone run: the alert listed every approved key as removed).
 */
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, fstatSync, openSync, readFileSync, writeSync } from 'node:fs';
import { makeInitRoot, readAlertsOf, startDaemon, waitFor, type Daemon, type TestRoot } from '../helpers/root.js';

const CRED = 'config/credentials.toml';
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
  const fd = openSync(t.p(CRED), 'w');
  try {
    // A busy look, not a timer: the link lasts only until the revert settles (milliseconds).
    const deadline = Date.now() + 10_000;
    while (fstatSync(fd).nlink < 2) assert.ok(Date.now() < deadline, 'timed out waiting for the guard to link the emptied file into quarantine');
    writeSync(fd, `${approved}\n[extra]\nplanted = "x"\n`);
  } finally { closeSync(fd); }
  const a = await waitFor(() => readAlertsOf(t).find((x) => x.path === CRED), 10_000, 'the credentials alert');
  assert.equal(a.action, 'reverted', JSON.stringify(a));
  assert.match(a.detail ?? '', /seen empty, then written/, JSON.stringify(a));
  assert.deepEqual(a.credential_changes?.map((c) => `${c.group}.${c.key}`), ['extra.planted'], JSON.stringify(a.credential_changes));
  assert.equal(readFileSync(t.p(CRED), 'utf8'), approved, 'the approved bytes are back');
});
