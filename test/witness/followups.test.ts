/**
 * The in-process witness of `warden run` follows the guard: an approved change of
 * `[witness] enforce` takes effect without a restart, and after a swap of the root path its
 * marks are on the directory the guard now holds (they were on the old inodes).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cli, fileSha, readAlertsOf, testWorld, waitFor, TEST_WARDEN_TOML } from '../helpers/root.js';
import type { Alert, Writer } from '../../src/store/alert-types.js';

const ROOT_ONLY = process.getuid?.() !== 0 ? 'needs root (fanotify needs CAP_SYS_ADMIN)' : false;
const B = 'orgs/bookclub.toml';
const world = testWorld();
after(() => world.cleanup());
const isWriter = (by: Alert['by']): by is Writer => typeof by === 'object' && by !== null && 'pid' in by;

function sh(cwd: string, script: string): Promise<{ code: number | null; err: string; pid: number }> {
  const p = spawn('sh', ['-c', script], { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  p.stderr!.on('data', (d) => { err += String(d); });
  return new Promise((r) => p.once('exit', (code) => r({ code, err, pid: p.pid! })));
}

describe('the in-process witness follows the guard', { skip: ROOT_ONLY }, () => {
  it('an approved [witness] enforce takes effect without a restart, and so does turning it off', async () => {
    const t = world.root({ init: true });
    const d = await world.daemon(t, []);
    assert.match(d.stderr(), /witness running: recording/);
    const on = `${TEST_WARDEN_TOML}\n[witness]\nenforce = true\n`;
    const next = join(t.base, 'next.toml');
    writeFileSync(next, on);
    const a = cli(t, ['apply', 'config/warden.toml', '--from', next]);
    assert.equal(a.code, 0, a.stderr);
    const before = fileSha(t.p(B));
    // The daemon applied it; the witness takes it before its next event (no restart, no SIGHUP).
    const r = await waitFor(async () => {
      const x = await sh(t.root, `printf 'tampered = 1\\n' >> ${B}`);
      return x.code !== 0 ? x : null;
    }, 5000, 'an open for writing refused after the approved change');
    assert.match(r.err, /Operation not permitted/);
    assert.match(cli(t, ['status']).stdout, /witness: running in the daemon, refusing/);
    await waitFor(() => (fileSha(t.p(B)) === before ? true : null), 5000, 'the file is the approved one');
    writeFileSync(next, TEST_WARDEN_TOML);
    assert.equal(cli(t, ['apply', 'config/warden.toml', '--from', next]).code, 0);
    await waitFor(async () => ((await sh(t.root, `printf '# ok\\n' >> ${B}`)).code === 0 ? true : null), 5000, 'opens go through again');
  });

  it('after a swap of the root path, the witness marks the directory the guard now holds', async () => {
    const t = world.root({ init: true });
    await world.daemon(t, []);
    // A copy of the tree put at the root path in one step (RENAME_EXCHANGE), as the agent could.
    const evil = join(t.base, 'evil');
    mkdirSync(evil);
    assert.equal((await sh(t.base, `cp -a root/. evil/ && python3 -c "import ctypes,sys; l=ctypes.CDLL(None, use_errno=True); sys.exit(0 if l.renameat2(-100, b'evil', -100, b'root', 2) == 0 else ctypes.get_errno())"`)).code, 0);
    await waitFor(() => (readAlertsOf(t).some((x) => x.reason === 'root-replaced') ? true : null), 5000, 'root-replaced');
    // The copy is moved aside whole; the approved tree is written into a directory warden makes.
    await waitFor(() => existsSync(t.p(B)), 5000, 'the approved tree back at the path');
    const approved = readFileSync(t.p(B), 'utf8');
    // An edit in the root now at the path: the open is seen (the permission marks moved), and so is a chmod (the name marks).
    await new Promise((r) => setTimeout(r, 300));
    let seen = readAlertsOf(t).length;
    const w = await sh(t.root, `printf 'hourly_cap = 778\\n' >> ${B}`);
    const al = await waitFor(() => readAlertsOf(t).slice(seen).find((x) => x.path === B), 5000, 'the edit reverted');
    assert.ok(isWriter(al.by) && al.by.pid === w.pid, `the edit's alert names the shell: ${JSON.stringify(al.by)}`);
    await waitFor(() => (readFileSync(t.p(B), 'utf8') === approved ? true : null), 5000, 'reverted');
    seen = readAlertsOf(t).length;
    const p = spawn('perl', ['-e', 'chmod 0600, $ARGV[0] or die; select(undef, undef, undef, 0.4)', t.p(B)], { stdio: 'ignore' });
    await new Promise((r) => p.once('exit', r));
    const m = await waitFor(() => readAlertsOf(t).slice(seen).find((x) => x.path === B && x.reason === 'mode'), 5000, 'the chmod put right');
    assert.ok(isWriter(m.by) && m.by.pid === p.pid, `the chmod's alert names perl: ${JSON.stringify(m.by)}`);
  });

  it('a separate witness (run --witness) sees a swap of the root path itself and marks the directory now there', async () => {
    const t = world.root({ init: true });
    const g = await world.daemon(t, ['--guard']);
    const w = await world.daemon(t, ['--witness', '--writer-pid', String(g.proc.pid)]);
    mkdirSync(join(t.base, 'evil'));
    assert.equal((await sh(t.base, `cp -a root/. evil/ && python3 -c "import ctypes,sys; l=ctypes.CDLL(None, use_errno=True); sys.exit(0 if l.renameat2(-100, b'evil', -100, b'root', 2) == 0 else ctypes.get_errno())"`)).code, 0);
    await waitFor(() => (/names another directory now; marked that one/.test(w.stderr()) ? true : null), 5000, 'the witness re-marked');
    await waitFor(() => (readAlertsOf(t).some((x) => x.reason === 'root-replaced') ? true : null), 5000, 'root-replaced');
    await waitFor(() => existsSync(t.p(B)), 5000, 'the approved tree back at the path');
    const approved = readFileSync(t.p(B), 'utf8');
    // The swapped-in copy is moved aside and a new directory made at once: the witness's
    // once-a-second check may have marked the copy first; it marks the new one at its next tick.
    const bys: string[] = [];
    await waitFor(async () => {
      const seen = readAlertsOf(t).length;
      const e = await sh(t.root, `printf 'hourly_cap = 779\\n' >> ${B}`);
      const al = await waitFor(() => readAlertsOf(t).slice(seen).find((x) => x.path === B), 5000, 'the edit reverted');
      await waitFor(() => (readFileSync(t.p(B), 'utf8') === approved ? true : null), 5000, 'reverted');
      bys.push(JSON.stringify(al.by));
      return isWriter(al.by) && al.by.pid === e.pid;
    }, 4000, 'the separate witness sees the edit in the new root', 100).catch((err: Error) => { throw new Error(`${err.message}: ${bys.join(', ')}`); });
  });
});
