/**
 * Owner tasks through the real CLI and daemon: modes as approved state
 * (apply --mode, accept of a mode alert on the current content, history, the
 * credentials-mode finding), multi-path changes (a block and its rule together; check's
 * wording), init --force as a sanctioned change, and recovery of a store that fails
 * authentication (shown, asked on a pty, never adopted unseen).
 */
import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, cli, makeRoot, readAlertsOf, startDaemon, waitFor, fileSha, type Daemon, type TestRoot } from '../helpers/root.js';
import { ptyCli } from '../helpers/pty.js';
import { gitLog, run, wardenToml } from './helpers.js';

const ORG = 'orgs/bookclub.toml';
const CRED = 'config/credentials.toml';
const COND = 'config/conditions.toml';
let t: TestRoot;
let d: Daemon | null = null;

function setup(approval = 'none'): void {
  t = makeRoot({ wardenToml: wardenToml({ approval }) });
  const init = cli(t, ['init']);
  assert.equal(init.code, 0, init.stderr);
}

function file(name: string, text: string): string {
  const p = join(t.base, name);
  writeFileSync(p, text);
  return p;
}

const mode = (rel: string): number => statSync(t.p(rel)).mode & 0o777;

const pty = (answers: [string, string][], args: string[]) => ptyCli(t, answers, args);

afterEach(async () => {
  if (d) await d.stop();
  d = null;
  t.cleanup();
});

describe('modes are approved state', () => {
  it('chmod 600 is reverted; accepting the mode alert after a later change keeps the later content and sets 0600', async () => {
    setup();
    d = await startDaemon(t);
    assert.equal(mode(ORG), 0o644);
    chmodSync(t.p(ORG), 0o600);
    await waitFor(() => readAlertsOf(t).some((a) => a.reason === 'mode' && a.path === ORG), 10_000, 'mode alert');
    await waitFor(() => mode(ORG) === 0o644, 10_000, 'mode reverted');
    const alert = readAlertsOf(t).find((a) => a.reason === 'mode')!;
    // A later sanctioned change of the content…
    const ap = await run(t, ['apply', ORG, '--from', file('cap7.toml', readFileSync(t.p(ORG), 'utf8').replace(/hourly_cap = \d+/, 'hourly_cap = 7'))]);
    assert.equal(ap.code, 0, ap.stderr);
    // …then accepting the old mode alert: the mode it rejected, on the content approved now.
    const r = await run(t, ['accept', alert.id]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /mode 0644 → 0600 \(content unchanged\)/);
    assert.equal(mode(ORG), 0o600);
    assert.match(readFileSync(t.p(ORG), 'utf8'), /hourly_cap = 7/, 'no stale content reinstalled');
    const st = JSON.parse((await run(t, ['status', '--json'])).stdout) as { files: { path: string; mode: string; state: string }[] };
    assert.deepEqual(st.files.find((f) => f.path === ORG), { ...st.files.find((f) => f.path === ORG), mode: '0600', state: 'ok' });
    assert.equal(readAlertsOf(t).length, 1, 'the daemon did not revert the sanctioned mode');
  });

  it('the reproduction: chmod 600 config/credentials.toml is reverted; accept makes 0600 the approved mode', async () => {
    t = makeRoot({ wardenToml: wardenToml() });
    chmodSync(t.p(CRED), 0o644);
    assert.equal(cli(t, ['init']).code, 0);
    d = await startDaemon(t);
    chmodSync(t.p(CRED), 0o600);
    await waitFor(() => readAlertsOf(t).some((a) => a.path === CRED), 10_000, 'alert');
    await waitFor(() => mode(CRED) === 0o644, 10_000, 'mode reverted');
    const alert = readAlertsOf(t).find((a) => a.path === CRED)!;
    assert.equal(alert.reason, 'mode');
    const r = await run(t, ['accept', alert.id]);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stdout, /no value changes/);
    assert.match(r.stdout, /mode 0644 → 0600/);
    assert.equal(mode(CRED), 0o600);
    assert.equal(readAlertsOf(t).length, 1, 'not reverted again');
  });

  it('apply PATH --mode 0600 without content; history records the mode; the credentials-mode finding and its fix', async () => {
    t = makeRoot({ wardenToml: wardenToml() });
    chmodSync(t.p(CRED), 0o644); // the example file is 0644, as git keeps it
    const init = cli(t, ['init']);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stderr, /config\/credentials\.toml holds credentials and is readable by others \(mode 0644\); fix: warden apply config\/credentials\.toml --mode 0600/);
    d = await startDaemon(t);
    const status = await run(t, ['status']);
    assert.match(status.stdout, /readable by others.*warden apply config\/credentials\.toml --mode 0600/);
    const check = await run(t, ['check']);
    assert.match(check.stdout, /readable by others.*warden apply config\/credentials\.toml --mode 0600/);
    const before = fileSha(t.p(CRED));
    const r = await run(t, ['apply', CRED, '--mode', '0600']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(mode(CRED), 0o600);
    assert.equal(fileSha(t.p(CRED)), before, 'content unchanged');
    assert.match(gitLog(t), /mode: config\/credentials\.toml 0644 → 0600/);
    assert.doesNotMatch((await run(t, ['status'])).stdout, /readable by others/);
    assert.doesNotMatch((await run(t, ['check'])).stdout, /readable by others/);
    const bad = await run(t, ['apply', CRED, '--mode', '4755']);
    assert.equal(bad.code, 2);
  });
});

describe('multi-path changes', () => {
  const BLOCK = 'blocks/conditional/dm.md';
  const blockText = '+++\ndescription = "DM manners"\n+++\nBe brief in DMs.\n';
  const condWith = (): string => readFileSync(t.p(COND), 'utf8') + '\n[blocks.dm]\nwhen = "discord:dm"\naction = "load"\n';

  it('a block and its rule: alone each is refused; together one change, one approval, one history commit; check is clean', async () => {
    setup();
    d = await startDaemon(t);
    const alone = await run(t, ['apply', BLOCK, '--from', file('dm.md', blockText)]);
    assert.equal(alone.code, 1, alone.stderr);
    assert.match(alone.stderr, /block file has no rule/);
    assert.match(alone.stderr, /change together, in one request/);
    const ruleAlone = await run(t, ['apply', COND, '--from', file('cond.toml', condWith())]);
    assert.equal(ruleAlone.code, 1);
    assert.match(ruleAlone.stderr, /block "dm" has a rule but no file/);
    const commits = (gitLog(t).match(/^commit /gm) ?? []).length;
    const r = await run(t, ['apply', BLOCK, '--from', file('dm.md', blockText), COND, '--from', file('cond.toml', condWith())]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(readFileSync(t.p(BLOCK), 'utf8'), blockText);
    assert.match(readFileSync(t.p(COND), 'utf8'), /\[blocks\.dm\]/);
    assert.equal((gitLog(t).match(/^commit /gm) ?? []).length, commits + 1, 'one history commit');
    assert.match(gitLog(t), /paths: blocks\/conditional\/dm\.md, config\/conditions\.toml/);
    assert.equal((await run(t, ['check'])).code, 0);
    // Dropping it: rm alone is refused; the rule out and the file removed together works.
    const rmAlone = await run(t, ['rm', BLOCK]);
    assert.equal(rmAlone.code, 1);
    assert.match(rmAlone.stderr, /has a rule but no file/);
    const back = file('cond-back.toml', readFileSync(t.p(COND), 'utf8').replace(/\n\[blocks\.dm\][^[]*$/, '\n'));
    const drop = await run(t, ['apply', COND, '--from', back, '--rm', BLOCK]);
    assert.equal(drop.code, 0, drop.stderr);
    assert.equal(fileSha(t.p(BLOCK)), null);
    assert.equal((await run(t, ['check'])).code, 0);
    assert.equal(readAlertsOf(t).length, 0);
  });

  it("check's wording matches what explain does with a file that has errors", () => {
    t = makeRoot({ wardenToml: wardenToml() });
    writeFileSync(t.p(COND), readFileSync(t.p(COND), 'utf8') + '\n[blocks.ghost]\nwhen = "discord:dm"\naction = "load"\n');
    const c = cli(t, ['check']);
    assert.equal(c.code, 1);
    assert.match(c.stdout, /block "ghost" has a rule but no file/);
    assert.doesNotMatch(c.stdout, /grants nothing/, 'conditions.toml still applies');
    assert.match(c.stdout, /config\/conditions\.toml still applies as it is/);
    // explain does apply it: the DM-only private memories are still granted in a DM.
    const e = cli(t, ['explain', '--user', '123456789012345678', '--dm', '555', '--json', '/memories/private/x']);
    const j = JSON.parse(e.stdout) as { targets: { decision: string; source: string | null }[] };
    assert.equal(j.targets[0]?.decision, 'allow');
  });
});

describe('init --force is a sanctioned change', () => {
  it('while the daemon runs it is handed to it: no tamper alert, no loop, the daemon restarts', async () => {
    setup();
    d = await startDaemon(t);
    const r = await run(t, ['init', '--force']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /nothing differs from the last approved state/);
    assert.equal((await run(t, ['status'])).code, 0);
    assert.equal((await run(t, ['verify'])).code, 0);
    assert.equal((await run(t, ['history'])).code, 0);
    await d.stop();
    d = await startDaemon(t);
    assert.equal(readAlertsOf(t).length, 0, 'no baseline-tampered, nothing reverted');
  });

  it('with the daemon stopped it shows the difference from the last approved state and applies it as one change', async () => {
    setup();
    writeFileSync(t.p(ORG), readFileSync(t.p(ORG), 'utf8').replace(/hourly_cap = \d+/, 'hourly_cap = 77'));
    const r = await run(t, ['init', '--force']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /- hourly_cap = 20/);
    assert.match(r.stdout, /\+ hourly_cap = 77/);
    assert.match(gitLog(t), /command: warden init --force/);
    d = await startDaemon(t);
    assert.equal(readAlertsOf(t).length, 0, 'nothing to revert at start');
    assert.match(readFileSync(t.p(ORG), 'utf8'), /hourly_cap = 77/);
  });

  it('under approval = "tty" without a terminal it stays pending: nothing adopted', async () => {
    setup('tty');
    const before = readFileSync(t.p(ORG), 'utf8');
    writeFileSync(t.p(ORG), before.replace(/hourly_cap = \d+/, 'hourly_cap = 78'));
    const r = await run(t, ['init', '--force']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /pending: request/);
    d = await startDaemon(t);
    await waitFor(() => readFileSync(t.p(ORG), 'utf8') === before, 10_000, 'the unapproved edit reverted at start');
  });
});

describe('recovery of a store that fails authentication', () => {
  it('the guard says what to do; init --force shows the difference, asks on a terminal, never adopts unseen', async () => {
    setup('tty');
    // While warden is stopped: the store is edited and a file is planted.
    writeFileSync(t.p('snapshots/baseline/index'), 'warden-index 1 hmac-sha256=' + '0'.repeat(64) + '\n{}');
    writeFileSync(t.p(ORG), readFileSync(t.p(ORG), 'utf8').replace(/hourly_cap = \d+/, 'hourly_cap = 99'));
    const start = spawnSync(process.execPath, [CLI, 'run', '--guard', '--root', t.root], { env: t.env, encoding: 'utf8', timeout: 20_000 });
    assert.equal(start.status, 2, start.stdout);
    assert.match(start.stderr, /run 'warden init --force' on a terminal; it shows what differs from the last approved state/);
    const tamper = readAlertsOf(t).find((a) => a.reason === 'baseline-tampered');
    assert.match(tamper?.advice ?? '', /warden init --force' on a terminal/);
    const st = await run(t, ['status']);
    assert.equal(st.code, 2);
    assert.match(st.stderr, /shows what differs from the last approved state/);
    // No terminal: nothing adopted.
    const noTty = await run(t, ['init', '--force']);
    assert.equal(noTty.code, 1, noTty.stdout + noTty.stderr);
    assert.match(noTty.stdout, /- hourly_cap = 20/);
    assert.match(noTty.stdout, /\+ hourly_cap = 99/);
    assert.match(noTty.stderr, /recovery needs the owner at a terminal/);
    assert.equal((await run(t, ['status'])).code, 2, 'still not adopted');
    // "n" on a terminal: nothing adopted either.
    const no = pty([['\\[y/N\\] ', 'n\r']], ['init', '--force']);
    assert.equal(no.code, 1, no.out);
    assert.equal((await run(t, ['status'])).code, 2);
    // "y": adopted, one history commit, the guard starts again.
    const yes = pty([['\\[y/N\\] ', 'y\r']], ['init', '--force']);
    assert.equal(yes.code, 0, yes.out);
    assert.match(yes.out, /\+ hourly_cap = 99/);
    assert.match(gitLog(t), /command: warden init --force \(recovery/);
    const rec = readAlertsOf(t).find((a) => /recovered by 'warden init --force'/.test(a.detail ?? ''));
    assert.ok(rec?.quarantine, 'the owner is told, and the index that failed is kept');
    assert.match(readFileSync(t.p(rec.quarantine), 'utf8'), /^warden-index 1 hmac-sha256=0{64}/);
    d = await startDaemon(t);
    assert.equal((await run(t, ['status'])).code, 0);
    assert.match(readFileSync(t.p(ORG), 'utf8'), /hourly_cap = 99/);
  });
});
