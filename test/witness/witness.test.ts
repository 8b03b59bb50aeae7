/**
 * The witness (docs/CONTRACT.md §Who did it), for real: `warden run` as root runs a fanotify listener; every
 * alert of a direct edit names the process that opened the file for writing, joined by
 * device + inode (two writers racing on two files are never swapped); `enforce = true`
 * refuses the open (EPERM) and says who; a killed witness lets opens through and the guard
 * still reverts; without CAP_SYS_ADMIN everything works as before and alerts say why they
 * do not name a writer.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cli, fileSha, readAlertsOf, testWorld, waitFor, CLI, TEST_WARDEN_TOML } from '../helpers/root.js';
import type { Alert, Writer } from '../../src/store/alert-types.js';
import { recordDirOf } from '../../src/witness/record.js';
import { join } from 'node:path';

const ROOT_ONLY = process.getuid?.() !== 0 ? 'needs root (fanotify permission events need CAP_SYS_ADMIN)' : false;
const A = 'config/conditions.toml';
const B = 'orgs/bookclub.toml';
const world = testWorld();
after(() => world.cleanup());

/** openat2(AT_FDCWD, argv[1], {O_WRONLY|O_APPEND}) through libc's syscall(): prints "ok" and writes, or the errno's name. */
const OPENAT2 = `import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class How(ctypes.Structure):
    _fields_ = [('flags', ctypes.c_uint64), ('mode', ctypes.c_uint64), ('resolve', ctypes.c_uint64)]
how = How(os.O_WRONLY | os.O_APPEND, 0, 0)
libc.syscall.restype = ctypes.c_long
fd = libc.syscall(437, -100, sys.argv[1].encode(), ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
if fd < 0:
    print(errno.errorcode[ctypes.get_errno()])
else:
    os.write(fd, b'tampered through openat2\\n'); print('ok')
`;

const ENFORCE_TOML = (base: string) => `${base}\n[witness]\nenforce = true\n`;

/** A writer that appends one line to FILE through its own shell redirection: the shell is the process that opens it. */
function writer(root: string, rel: string, text: string): { pid: number; done: Promise<{ code: number | null; err: string }> } {
  const p = spawn('sh', ['-c', `printf '%s\\n' '${text}' >> ${rel}`], { cwd: root, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  p.stderr!.on('data', (d) => { err += String(d); });
  return { pid: p.pid!, done: new Promise((r) => p.once('exit', (code) => r({ code, err }))) };
}

const isWriter = (by: Alert['by']): by is Writer => typeof by === 'object' && by !== null && 'pid' in by;

describe('the witness', { skip: ROOT_ONLY }, () => {
  it('names the writer of each direct edit; two writers racing on two files are never swapped', async () => {
    const t = world.root({ init: true });
    const d = await world.daemon(t, []);
    assert.match(d.stderr(), /witness running/);
    for (let round = 0; round < 6; round++) {
      const seen = readAlertsOf(t).length;
      const a = writer(t.root, A, `# a ${round}`);
      const b = writer(t.root, B, `# b ${round}`);
      await Promise.all([a.done, b.done]);
      const fresh = await waitFor(() => {
        const n = readAlertsOf(t).slice(seen);
        return n.some((x) => x.path === A) && n.some((x) => x.path === B) ? n : null;
      }, 10_000, `round ${round}: both edits reverted`);
      const byA = fresh.find((x) => x.path === A)!.by;
      const byB = fresh.find((x) => x.path === B)!.by;
      assert.ok(isWriter(byA) && isWriter(byB), `round ${round}: both alerts name a writer: ${JSON.stringify([byA, byB])}`);
      assert.equal(byA.pid, a.pid, `round ${round}: ${A} was written by pid ${a.pid}`);
      assert.equal(byB.pid, b.pid, `round ${round}: ${B} was written by pid ${b.pid}`);
      assert.equal(byA.comm, 'sh');
      assert.equal(byA.user, 'root');
      assert.match(byA.exe ?? '', /\/(dash|bash|sh)$/);
    }
    assert.match(cli(t, ['status']).stdout, /witness: running in the daemon, recording who opens protected files for writing; \d+ director\(ies\) and \d+ file\(s\) marked, (1[2-9]|[2-9]\d) write\(s\) seen/);
    // In plain words, in `warden why` and the journal line.
    const why = cli(t, ['why', B]);
    assert.match(why.stdout, /by user root \(uid 0\), (no login session|unit [^,]+\.(service|scope)|in .* login session)[^:]*: process "sh"/);
    assert.match(d.stderr(), /reverted orgs\/bookclub\.toml: content; alert \S+\. by user root \(uid 0\)[^:]*: process "sh"/);
    // No argument list, no content: the record and the alert hold neither the text written nor the command line.
    const alerts = JSON.stringify(readAlertsOf(t).map((x) => x.by));
    assert.doesNotMatch(alerts, /printf|# a 0/);
  });

  it('enforce = true: an open for writing is refused at once (EPERM) and the alert says who; warden\'s own writes go through', async () => {
    const t = world.root({ init: true, wardenToml: ENFORCE_TOML(TEST_WARDEN_TOML) });
    const d = await world.daemon(t, []);
    assert.match(d.stderr(), /witness running: refusing/);
    const before = fileSha(t.p(B));
    const w = writer(t.root, B, 'tampered = true');
    const r = await w.done;
    assert.notEqual(r.code, 0, 'the shell could not open the file');
    assert.match(r.err, /Operation not permitted/);
    assert.equal(fileSha(t.p(B)), before, 'nothing was written');
    // openat2 (no flags in /proc/TID/syscall, only a pointer to them): refused too, not a way around.
    const o2 = spawnSync('python3', ['-c', OPENAT2, t.p(B)], { encoding: 'utf8', timeout: 10_000 });
    assert.equal(o2.stdout.trim(), 'EPERM', `openat2 for writing is refused: ${o2.stdout}${o2.stderr}`);
    assert.equal(fileSha(t.p(B)), before, 'nothing was written through openat2');
    const refused = await waitFor(() => readAlertsOf(t).find((x) => x.reason === 'refused' && x.path === B), 5000, 'a refused alert');
    assert.ok(isWriter(refused.by) && refused.by.pid === w.pid && refused.by.refused === true, JSON.stringify(refused.by));
    assert.ok(!readAlertsOf(t).some((x) => x.action === 'reverted'), 'no revert was needed');
    // The sanctioned path (the daemon writes): not refused.
    const wanted = readFileSync(t.p(B), 'utf8').replace('hourly_cap = 20', 'hourly_cap = 12');
    const ap = cli(t, ['apply', B, '--from', '-'], { input: wanted });
    assert.equal(ap.code, 0, ap.stderr);
    assert.equal(readFileSync(t.p(B), 'utf8'), wanted);
  });

  it('a new file made in a protected directory, and a rename-over-save, name their writer; two racing writers are never swapped', async () => {
    const t = world.root({ init: true });
    await world.daemon(t, []);
    const pidOf = (path: string, since: number): number | null => {
      const a = readAlertsOf(t).slice(since).find((x) => x.path === path);
      return a && isWriter(a.by) ? a.by.pid : a ? -1 : null;
    };
    for (let round = 0; round < 4; round++) {
      // A new file where only approved ones belong (orgs/*.toml, blocks/conditional/*.md), by two shells at once.
      let seen = readAlertsOf(t).length;
      const na = `orgs/stray-${round}.toml`;
      const nb = `blocks/conditional/stray-${round}.md`;
      const a = writer(t.root, na, 'x = 1');
      const b = writer(t.root, nb, 'y = 2');
      await Promise.all([a.done, b.done]);
      await waitFor(() => (pidOf(na, seen) !== null && pidOf(nb, seen) !== null ? true : null), 10_000, `round ${round}: both strays removed`);
      assert.equal(pidOf(na, seen), a.pid, `round ${round}: ${na} was made by pid ${a.pid}: ${JSON.stringify(readAlertsOf(t).slice(seen))}`);
      assert.equal(pidOf(nb, seen), b.pid, `round ${round}: ${nb} was made by pid ${b.pid}`);
      assert.equal(readAlertsOf(t).slice(seen).find((x) => x.path === na)!.action, 'removed');
      // A rename-over-save, as editors do: the new content in a temp file beside it, then mv over.
      seen = readAlertsOf(t).length;
      const save = (rel: string, text: string) => {
        const p = spawn('sh', ['-c', `{ cat ${rel}; printf '%s\\n' '${text}'; } > ${rel}.swp && mv -f ${rel}.swp ${rel}`], { cwd: t.root, stdio: 'ignore' });
        return { pid: p.pid!, done: new Promise((r) => p.once('exit', r)) };
      };
      const sa = save(A, `# saved a ${round}`);
      const sb = save(B, `# saved b ${round}`);
      await Promise.all([sa.done, sb.done]);
      // The guard may catch the temp file before the mv, or the saved file after it: either
      // alert names the shell that wrote it, and never the other one.
      const sideOf = (rel: string) => (x: Alert) => x.path === rel || x.path === `${rel}.swp`;
      const fresh = await waitFor(() => {
        const n = readAlertsOf(t).slice(seen);
        return n.some(sideOf(A)) && n.some(sideOf(B)) ? n : null;
      }, 10_000, `round ${round}: both saves undone`);
      for (const [rel, pid, other] of [[A, sa.pid, sb.pid], [B, sb.pid, sa.pid]] as const) {
        const mine = fresh.filter(sideOf(rel));
        assert.ok(mine.every((x) => isWriter(x.by)), `round ${round}: every alert for ${rel} names a writer: ${JSON.stringify(mine.map((x) => x.by))}`);
        assert.ok(mine.every((x) => (x.by as Writer).pid === pid), `round ${round}: ${rel} saved by pid ${pid}, never ${other}: ${JSON.stringify(mine.map((x) => [x.path, (x.by as Writer).pid]))}`);
      }
      await waitFor(() => (!existsSync(t.p(`${A}.swp`)) && !existsSync(t.p(`${B}.swp`)) ? true : null), 5000, 'no temp file left');
    }
  });

  it('a separate witness acts on the APPROVED warden.toml: an edit of the live [witness] section changes nothing', async () => {
    // Approved: enforce off. The agent turns it on in the live file (no guard running to revert it).
    const t = world.root({ init: true });
    writeFileSync(t.p('config/warden.toml'), ENFORCE_TOML(TEST_WARDEN_TOML));
    const w = await world.daemon(t, ['--witness']);
    assert.match(w.stderr(), /witness recording opens for writing.*approved warden\.toml/);
    const r1 = await writer(t.root, B, 'allowed = 1').done;
    assert.equal(r1.code, 0, `not refused: the approved copy says enforce is off (${r1.err})`);
    w.proc.kill('SIGHUP');
    await waitFor(() => (/re-read the approved warden\.toml \(SIGHUP\): recording/.test(w.stderr()) ? true : null), 5000, 'SIGHUP re-read');
    const r2 = await writer(t.root, B, 'allowed = 2').done;
    assert.equal(r2.code, 0, `still not refused after SIGHUP (${r2.err})`);
    // Approved: enforce on. The agent turns it off, and then the whole [witness] section, in the live file.
    const u = world.root({ init: true, wardenToml: ENFORCE_TOML(TEST_WARDEN_TOML) });
    writeFileSync(u.p('config/warden.toml'), `${TEST_WARDEN_TOML}\n[witness]\nenforce = false\nenabled = false\n`);
    const v = await world.daemon(u, ['--witness']);
    assert.match(v.stderr(), /witness refusing opens for writing/);
    const before = fileSha(u.p(B));
    const r3 = await writer(u.root, B, 'tampered = 1').done;
    assert.match(r3.err, /Operation not permitted/, 'refused: the approved copy says enforce = true');
    assert.equal(fileSha(u.p(B)), before);
    v.proc.kill('SIGHUP');
    await waitFor(() => (/re-read the approved warden\.toml \(SIGHUP\): refusing/.test(v.stderr()) ? true : null), 5000, 'SIGHUP re-read');
    const r4 = await writer(u.root, B, 'tampered = 2').done;
    assert.match(r4.err, /Operation not permitted/, 'still refused after SIGHUP');
  });

  it('a killed witness lets opens through at once, and the guard still reverts', async () => {
    const t = world.root({ init: true, wardenToml: ENFORCE_TOML(TEST_WARDEN_TOML) });
    const g = await world.daemon(t, ['--guard']);
    const w = await world.daemon(t, ['--witness', '--writer-pid', String(g.proc.pid)]);
    const before = fileSha(t.p(B));
    const first = await writer(t.root, B, 'tampered = 1').done;
    const record = () => { try { return readFileSync(join(recordDirOf(t.root, t.env), 'record.jsonl'), 'utf8').slice(-1500); } catch (e) { return String(e); } };
    assert.match(first.err, /Operation not permitted/, `the separate witness refuses (its log: ${w.stderr().slice(-1500)}; its record: ${record()}; the guard's log: ${g.stderr().slice(-1500)})`);
    // Its refusal reaches the guard's alerts through the witness's record (another process).
    const refused = await waitFor(() => readAlertsOf(t).find((x) => x.reason === 'refused'), 5000, 'the guard raised the refusal');
    assert.ok(isWriter(refused.by));
    // `warden status` (through the guard) says what the separate witness says of itself.
    assert.match(cli(t, ['status']).stdout, /witness: running \(warden-witness\), refusing opens for writing \(enforce = true\); [1-9]\d* director\(ies\) and [1-9]\d* file\(s\) marked, last heartbeat /);
    await w.kill9();
    const r = spawnSync('sh', ['-c', `printf 'tampered = 2\\n' >> ${B}`], { cwd: t.root, timeout: 5000 });
    assert.equal(r.status, 0, 'the open went through (not held, not refused)');
    await waitFor(() => fileSha(t.p(B)) === before, 5000, 'the guard reverted the edit');
  });
});


describe('without a witness', () => {
  it('no CAP_SYS_ADMIN: the guard reverts as before, and the alert says why it names no writer', async () => {
    const t = world.root({ init: true });
    // Drop the capability for real when we have it; as another user we never had it.
    const useSetpriv = process.getuid?.() === 0;
    const p = useSetpriv
      ? spawn('setpriv', ['--bounding-set', '-sys_admin', '--inh-caps', '-sys_admin', process.execPath, CLI, 'run', '--root', t.root], { env: t.env, stdio: ['ignore', 'pipe', 'pipe'] })
      : spawn(process.execPath, [CLI, 'run', '--root', t.root], { env: t.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout!.on('data', (c) => { out += String(c); });
    try {
      await waitFor(() => out.includes('ready\n'), 20_000, 'daemon ready');
      const before = fileSha(t.p(B));
      await writer(t.root, B, 'tampered = true').done;
      const a = await waitFor(() => readAlertsOf(t).find((x) => x.path === B), 5000, 'reverted');
      assert.equal(fileSha(t.p(B)), before);
      assert.ok(a.by && !isWriter(a.by), JSON.stringify(a.by));
      assert.match((a.by as { unknown: string }).unknown, /no witness running/);
      assert.match(cli(t, ['why', B]).stdout, /who: not known \(no witness running/);
      assert.match(cli(t, ['status']).stdout, /witness: not running — alerts will not say who wrote \(no witness running \(this process lacks CAP_SYS_ADMIN/);
    } finally {
      p.kill('SIGTERM');
      await new Promise((r) => (p.exitCode !== null ? r(null) : p.once('exit', r)));
    }
  });
});
