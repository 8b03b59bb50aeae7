/**
 * The path-hardening attacks, as the agent (deployment A: the agent owns the root and its parent, the
 * guard's store is outside the root): names are bytes. `orgs/$'\xfe'.toml` is a name that
 * is not UTF-8; Node lists it as `\uFFFD.toml` unless told otherwise, a name that opens
 * nothing, so the guard, `verify` and `init` never saw it, while a runtime that lists names
 * as bytes (Python, a shell glob) loads it as an extra org. A name with a newline and a
 * terminal escape in it is valid UTF-8 and always was seen; it must be shown escaped
 * wherever it is printed (a raw newline forges a line, ESC drives the owner's terminal).
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { agentWorld, type AgentWorld } from '../helpers/agent-world.js';
import { readAlertsFile, waitFor } from '../helpers/root.js';
import { loadPolicyFromRoot } from '../../src/policy/index.js';
import { openApprovedView, type ApprovedView } from '../../src/runtime/index.js';
import type { Alert } from '../../src/store/alert-types.js';

const worlds: AgentWorld[] = [];
const views: ApprovedView[] = [];
after(async () => {
  for (const v of views.splice(0)) await v.close();
  for (const w of worlds.splice(0)) await w.cleanup();
});

/** The names as the kernel has them. */
const RAW = Buffer.concat([Buffer.of(0xfe), Buffer.from('.toml')]);
const CTRL = Buffer.from('a\nb\x1b[31mc.toml');
/** How each is carried in a string (alerts.jsonl, --json): the raw byte as a lone surrogate. */
const RAW_PATH = 'orgs/\udcfe.toml';
const CTRL_PATH = `orgs/${CTRL.toString()}`;
/** How each is shown. */
const RAW_SHOWN = 'orgs/\\xfe.toml';
const CTRL_SHOWN = 'orgs/a\\nb\\e[31mc.toml';

const ORG = 'members = ["999999999999999999"]\nchannels = ["555555555555555556"]\nfolders = ["/workspace/"]\ncommands = ["sh"]\nhourly_cap = 1000\n';

/** As the agent: create orgs/<bytes> for each hex-encoded name (Python, names as bytes). */
const PLANT = String.raw`
import os, sys
root = os.fsencode(sys.argv[1])
for h in sys.argv[3:]:
    with open(os.path.join(root, b'orgs', bytes.fromhex(h)), 'wb') as f: f.write(sys.argv[2].encode())
`;
const plant = (w: AgentWorld, ...names: Buffer[]) => {
  const r = w.agent(PLANT, [w.t.root, ORG, ...names.map((n) => n.toString('hex'))]);
  assert.equal(r.code, 0, r.out);
};
const REMOVE = String.raw`
import os, sys
os.unlink(os.path.join(os.fsencode(sys.argv[1]), b'orgs', bytes.fromhex(sys.argv[2])))
`;

const namesIn = (dir: string): Buffer[] => readdirSync(dir, { encoding: 'buffer' });
const holds = (dir: string, name: Buffer): boolean => namesIn(dir).some((n) => n.equals(name));

/** Missing file: no alert yet; a torn or unreadable file throws (waitFor retries it). */
const alertsOf = (w: AgentWorld): Alert[] => readAlertsFile(join(w.store, 'alerts.jsonl'));

/** Printed text holds no raw control byte, no mangled name, and no line forged by a name's newline. */
function assertEscaped(text: string, what: string): void {
  assert.ok(!text.includes('\x1b'), `${what}: no raw ESC`);
  assert.ok(!text.includes('\uFFFD'), `${what}: no name mangled into U+FFFD`);
  assert.ok(!/^b\\e\[31mc\.toml/m.test(text) && !/^b\x1b/m.test(text), `${what}: the name's newline starts no line of its own`);
}

describe('names as bytes', () => {
  it('a running guard quarantines a non-UTF-8 name and a name with a newline and ESC, and shows both escaped', async () => {
    const w = agentWorld();
    worlds.push(w);
    const d = await w.guard();
    plant(w, RAW, CTRL);
    await waitFor(() => !holds(w.t.p('orgs'), RAW) && !holds(w.t.p('orgs'), CTRL), 5_000, 'both names removed from orgs/');
    // Each alert is recorded just after its removal: wait for both in one complete read.
    const alerts = await waitFor(() => { const all = alertsOf(w); return [RAW_PATH, CTRL_PATH].every((p) => all.some((x) => x.path === p)) ? all : null; }, 5_000, 'an alert for each name');
    for (const [path, name] of [[RAW_PATH, RAW], [CTRL_PATH, CTRL]] as const) {
      const a = alerts.find((x) => x.path === path);
      assert.ok(a, `an alert names ${JSON.stringify(path)}: ${JSON.stringify(alerts.map((x) => x.path))}`);
      assert.equal(a.reason, 'unexpected-file');
      assert.equal(a.action, 'removed');
      assert.ok(a.quarantine, 'kept in quarantine');
      // The quarantine holds the content, kept flat as the alert's id (the alert names the file, escaped).
      const q = join(w.store, 'quarantine', a.id);
      assert.ok(name.length > 0 && lstatSync(q).isFile(), 'the rejected file is kept as quarantine/<alert id>');
      assert.equal(readFileSync(q).toString(), ORG);
    }
    // The journal lines (the guard's stderr) show both names escaped.
    await waitFor(() => d.stderr().includes(RAW_SHOWN) && d.stderr().includes(CTRL_SHOWN), 5_000, 'journal lines naming both files escaped');
    assertEscaped(d.stderr(), 'journal');
    // warden alerts, warden why, warden diff: escaped.
    const list = w.cli(['alerts']);
    assert.equal(list.code, 0, list.stderr);
    assert.ok(list.stdout.includes(RAW_SHOWN) && list.stdout.includes(CTRL_SHOWN), list.stdout);
    assertEscaped(list.stdout, 'warden alerts');
    const raw = alerts.find((x) => x.path === RAW_PATH)!;
    const diff = w.cli(['diff', raw.id]);
    assert.equal(diff.code, 0, diff.stdout + diff.stderr);
    assert.ok(diff.stdout.includes(`removed ${RAW_SHOWN}`), diff.stdout);
    assert.match(diff.stdout, /\+ members = \["999999999999999999"\]/, 'the rejected content is shown');
    assertEscaped(diff.stdout, 'warden diff');
    const ctrl = w.cli(['diff', alerts.find((x) => x.path === CTRL_PATH)!.id]);
    assert.ok(ctrl.stdout.includes(`removed ${CTRL_SHOWN}`), ctrl.stdout);
    assertEscaped(ctrl.stdout, 'warden diff (control characters)');
    // accept: a name that is not UTF-8 can never become approved (it would be a name no
    // reader agrees on); refused, naming it escaped, and nothing changes.
    const acc = w.cli(['accept', raw.id]);
    assert.notEqual(acc.code, 0, acc.stdout + acc.stderr);
    assert.ok((acc.stdout + acc.stderr).includes(RAW_SHOWN), acc.stdout + acc.stderr);
    assert.ok(!holds(w.t.p('orgs'), RAW), 'nothing was put back');
    // The same name in config/ (a protected directory of exact paths: no glob lists it, and
    // as a `text` file no org-name rule refuses it): quarantined, and accept refused by name.
    const cfg = w.agent(String.raw`
import os, sys
with open(os.path.join(os.fsencode(sys.argv[1]), b'config', b'\xfe'), 'wb') as f: f.write(b'x = 1\n')
`, [w.t.root]);
    assert.equal(cfg.code, 0, cfg.out);
    await waitFor(() => alertsOf(w).some((x) => x.path === 'config/\udcfe' && x.quarantine), 5_000, 'config/\\xfe quarantined');
    assert.ok(!holds(w.t.p('config'), Buffer.of(0xfe)));
    const cfgAlert = alertsOf(w).find((x) => x.path === 'config/\udcfe')!;
    const acc2 = w.cli(['accept', cfgAlert.id]);
    assert.notEqual(acc2.code, 0, acc2.stdout + acc2.stderr);
    assert.match(acc2.stdout + acc2.stderr, /config\/\\xfe.*not valid UTF-8/);
    assert.ok(!holds(w.t.p('config'), Buffer.of(0xfe)), 'nothing was installed');
    const verify = w.cli(['verify']);
    assert.equal(verify.code, 0, verify.stdout);
  });

  it('a directory, a FIFO and a symlink with such names are moved into quarantine, never opened or followed', async () => {
    const w = agentWorld();
    worlds.push(w);
    await w.guard();
    const r = w.agent(String.raw`
import os, sys
o = os.path.join(os.fsencode(sys.argv[1]), b'orgs')
# Made beside orgs/ with its file, then renamed in whole: the guard takes a new directory at
# once, so one made in place could be gone before its file is written.
d = os.path.join(os.fsencode(sys.argv[1]), b'\xfd.tmp')
os.mkdir(d)
with open(os.path.join(d, b'x.toml'), 'wb') as f: f.write(b'members = []\n')
os.rename(d, os.path.join(o, b'\xfd'))
os.mkfifo(os.path.join(o, b'\xfc.toml'))
os.symlink(b'/etc/\xfb', os.path.join(o, b'\xfb.toml'))
`, [w.t.root]);
    assert.equal(r.code, 0, r.out);
    const planted = [Buffer.of(0xfd), Buffer.from('\xfc.toml', 'latin1'), Buffer.from('\xfb.toml', 'latin1')];
    await waitFor(() => planted.every((n) => !holds(w.t.p('orgs'), n)), 5_000, 'all three removed from orgs/');
    // The alert is recorded just after the move (and another may be being appended): wait
    // for all three in one complete read rather than read once.
    const pathOf = (n: Buffer) => `orgs/${String.fromCharCode(0xdc00 + n[0]!)}${n.subarray(1).toString()}`;
    const seen = await waitFor(() => { const all = alertsOf(w); return planted.every((n) => all.some((x) => x.path === pathOf(n))) ? all : null; }, 5_000, 'an alert for each of the three');
    for (const n of planted) {
      const a = seen.find((x) => x.path === pathOf(n));
      assert.ok(a?.quarantine, `quarantined: ${n.toString('hex')}`);
      assert.deepEqual(namesIn(join(w.store, 'quarantine', a.id)), [n]);
    }
    assert.equal(w.cli(['verify']).code, 0);
  });

  it('a guard that polls (chokidar hands names over decoded) still finds the name by listing its directory', async () => {
    const w = agentWorld();
    worlds.push(w);
    // The inotify watcher fails at once: the guard polls with chokidar, whose events carry
    // the name as a UTF-8 string (\uFFFD.toml), a name that opens nothing.
    const d = await w.guard({ WARDEN_TEST_WATCH_FAULT: 'ENOSPC:early' });
    await waitFor(() => alertsOf(w).some((a) => a.reason === 'watch-degraded'), 10_000, 'the guard to fall back to polling');
    plant(w, RAW);
    // Well inside the backstop rescan (30 s): the mangled event made the guard list orgs/.
    await waitFor(() => !holds(w.t.p('orgs'), RAW), 5_000, 'the name removed from orgs/');
    await waitFor(() => alertsOf(w).some((a) => a.path === RAW_PATH && a.reason === 'unexpected-file' && a.quarantine), 5_000, 'quarantined under its own name');
    assert.ok(!d.stderr().includes('\uFFFD'), 'no mangled name in the journal');
  });

  it('with the guard stopped, verify and status exit 1 naming it escaped; the next start quarantines it', async () => {
    const w = agentWorld();
    worlds.push(w);
    plant(w, RAW, CTRL);
    const v = w.cli(['verify']);
    assert.equal(v.code, 1, v.stdout + v.stderr);
    assert.ok(v.stdout.includes(`DRIFT ${RAW_SHOWN}: unexpected-file`), v.stdout);
    assert.ok(v.stdout.includes(`DRIFT ${CTRL_SHOWN}: unexpected-file`), v.stdout);
    assertEscaped(v.stdout, 'verify');
    const vj = JSON.parse(w.cli(['verify', '--json']).stdout) as { drift: { path: string }[] };
    assert.deepEqual(vj.drift.map((x) => x.path).sort(), [CTRL_PATH, RAW_PATH].sort(), '--json carries the names losslessly');
    const s = w.cli(['status']);
    assert.equal(s.code, 1, s.stdout + s.stderr);
    assert.ok(s.stdout.includes(`DRIFT ${RAW_SHOWN} (unexpected-file)`) && s.stdout.includes(`DRIFT ${CTRL_SHOWN} (unexpected-file)`), s.stdout);
    assertEscaped(s.stdout, 'status');
    await w.guard();
    assert.ok(!holds(w.t.p('orgs'), RAW) && !holds(w.t.p('orgs'), CTRL), 'the startup pass removed both');
    const a = alertsOf(w).find((x) => x.path === RAW_PATH);
    assert.ok(a, 'an alert names it');
    assert.equal(a.reason, 'changed-while-stopped');
    assert.deepEqual(a.also, ['unexpected-file']);
    assert.equal(w.cli(['verify']).code, 0);
  });

  it('init refuses a name that is not UTF-8 (naming it escaped, recording nothing) and shows a newline in a name escaped', async () => {
    const w = agentWorld({ init: false });
    worlds.push(w);
    plant(w, RAW);
    const r = w.cli(['init']);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.ok(r.stderr.includes(RAW_SHOWN), r.stderr);
    assert.match(r.stderr, /not valid UTF-8/);
    assertEscaped(r.stdout + r.stderr, 'init');
    assert.equal(w.cli(['verify']).code, 2, 'no baseline was recorded');
    const gone = w.agent(REMOVE, [w.t.root, RAW.toString('hex')]);
    assert.equal(gone.code, 0, gone.out);
    plant(w, CTRL);
    const ok = w.cli(['init']);
    assert.equal(ok.code, 0, ok.stderr);
    assert.ok(ok.stdout.includes(`  ${CTRL_SHOWN}\n`), ok.stdout);
    assertEscaped(ok.stdout, 'init');
    // Its history: the commit of a change names the path escaped, never a forged line.
    const rm = w.cli(['rm', CTRL_PATH]);
    assert.equal(rm.code, 0, rm.stdout + rm.stderr);
    const h = w.cli(['history', '--no-pager']);
    assert.equal(h.code, 0, h.stderr);
    assert.ok(h.stdout.includes(`rm: ${CTRL_SHOWN}`), h.stdout);
    assertEscaped(h.stdout, 'history');
    const hp = w.cli(['history', CTRL_PATH, '--no-pager']);
    assert.ok(hp.stdout.includes(`rm: ${CTRL_SHOWN}`), `the path's own history finds the commit: ${hp.stdout}`);
  });

  it('the policy library reports it as an org that grants nothing, and the approved view never loads it', async () => {
    const w = agentWorld();
    worlds.push(w);
    plant(w, RAW);
    const loaded = loadPolicyFromRoot(w.t.root);
    const f = loaded.files.find((x) => x.path === RAW_PATH);
    assert.ok(f, `the policy library lists it by its own name: ${JSON.stringify(loaded.files.map((x) => x.path))}`);
    assert.equal(f.status, 'unreadable');
    assert.equal(f.grantsNothing, true);
    assert.ok(loaded.errors.some((e) => e.file === RAW_PATH && /not valid UTF-8/.test(e.message)), JSON.stringify(loaded.errors));
    assert.deepEqual(loaded.policy.orgs.map((o) => o.name), ['bookclub'], 'no extra org');
    const check = w.cli(['check']);
    assert.equal(check.code, 1, check.stdout);
    assert.ok(check.stdout.includes(RAW_SHOWN), check.stdout);
    assertEscaped(check.stdout, 'check');
    const run = join(dirname(dirname(w.guardState)), 'run', 'warden-guard');
    const v = openApprovedView(w.t.root, { manifest: join(run, 'manifest.json'), deployment: { runtimeDir: run, stateDir: w.guardState } });
    views.push(v);
    await v.ready();
    await waitFor(() => v.current().ok, 10_000, 'the approved state');
    const s = v.current();
    assert.deepEqual(s.policy.orgs.map((o) => o.name), ['bookclub'], 'the view loads no extra org');
    assert.ok(!Object.keys(s.files).some((p) => p.startsWith('orgs/') && p !== 'orgs/bookclub.toml'), JSON.stringify(s.files));
  });
});
