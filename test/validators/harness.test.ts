/**
 * The validator harness run for real with stand-in checks (small Node scripts installed as
 * an npm package would be): the check has no network (a server listening on this host's
 * loopback is out of its reach), sees none of warden's environment, works on a copy (what
 * it writes never reaches the real file, its scratch is gone afterwards), and is stopped
 * with everything it started at its time limit. Skipped, with the reason, where neither
 * bubblewrap nor unshare can make a network namespace.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { probeIsolation, validate, type ValidatorSpec } from '../../src/validators/index.js';

const iso = probeIsolation();
const skip = iso.isolation === 'none' ? iso.reason : false;

let dir = '';
let pkg = '';
let scratchParent = '';
let server: Server | undefined;
let port = 0;

/** A stand-in check: node_modules/fake/bin/<name>.js running `body` (candidate path in argv[2]). */
function fake(name: string, body: string, over: Partial<ValidatorSpec> = {}): ValidatorSpec {
  const p = join(pkg, 'fake', 'bin', `${name}.js`);
  writeFileSync(p, `const fs = require('node:fs');\nconst candidate = process.argv[2];\n${body}\n`);
  chmodSync(p, 0o755);
  return { runtime: 'fake', name, command: 'fake', packageBin: `fake/bin/${name}.js`, args: ['{candidate}'], env: {}, candidate: '{scratch}/cfg/{name}', validExitCodes: [0], invalidExitCodes: [1], timeoutMs: 15_000, strength: 'schema', mayRunCode: false, ...over };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'warden-harness-'));
  pkg = join(dir, 'node_modules');
  mkdirSync(join(pkg, 'fake', 'bin'), { recursive: true });
  writeFileSync(join(pkg, 'fake', 'package.json'), '{"name":"fake","type":"commonjs"}');
  scratchParent = join(dir, 'scratch-parent');
  mkdirSync(scratchParent);
  server = createServer((s) => { s.end('hello\n'); });
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
});
after(async () => {
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  rmSync(dir, { recursive: true, force: true });
});

const CONNECT = (port: number): string => `const s = require('node:net').connect(${port}, '127.0.0.1');
s.on('data', () => { console.log('REACHED the host'); process.exit(0); });
s.on('error', (e) => { console.log('no network: ' + e.code); process.exit(1); });`;

test('the check cannot reach a server listening on this host (its own network namespace)', { skip }, async () => {
  const spec = fake('net', CONNECT(port));
  // the same script, run directly, reaches the server: the test proves the isolation, not a dead port
  const direct = await promisify(execFile)(process.execPath, [join(pkg, 'fake', 'bin', 'net.js'), 'x'], { encoding: 'utf8', timeout: 10_000 });
  assert.match(direct.stdout, /REACHED/);
  const v = await validate(spec, '{}', '/home/u/x.json', { packageDir: pkg, tmpDir: scratchParent });
  assert.equal(v.status, 'invalid', v.message);
  assert.match(v.message, /no network: E/);
  assert.doesNotMatch(v.message, /REACHED/);
});

test('the check sees none of warden\'s environment: no token, no key, its HOME is the scratch', { skip }, async () => {
  process.env.WARDEN_TEST_SECRET_TOKEN = 'sk-live-should-not-leak';
  try {
    const spec = fake('env', `console.log(JSON.stringify(process.env)); process.exit(1);`);
    const v = await validate(spec, '{}', '/home/u/x.json', { packageDir: pkg, tmpDir: scratchParent });
    assert.equal(v.status, 'invalid');
    assert.doesNotMatch(v.message, /sk-live|WARDEN_TEST_SECRET_TOKEN|WARDEN_TEST_RUN_FILE/);
    assert.match(v.message, /"HOME":"<scratch>"/);
  } finally { delete process.env.WARDEN_TEST_SECRET_TOKEN; }
});

test('the check works on a copy: what it writes (a $schema key, files in its home) never reaches the real file, and its scratch is removed', { skip }, async () => {
  const real = join(dir, 'opencode.json');
  writeFileSync(real, '{"permission":"ask"}\n');
  // a real file outside the hidden directories: bubblewrap shows it, read-only
  const outside = mkdtempSync('/var/tmp/warden-harness-');
  const other = join(outside, 'settings.json');
  writeFileSync(other, 'REAL');
  const spec = fake('rewrite', `fs.writeFileSync(candidate, '{"$schema":"x",' + fs.readFileSync(candidate, 'utf8').slice(1));
fs.writeFileSync(process.env.HOME + '/created', 'x');
try { fs.writeFileSync(${JSON.stringify(real)}, 'OWNED'); console.log('wrote a file of that name'); } catch (e) { console.log('real file: ' + e.code); }
try { fs.writeFileSync(${JSON.stringify(other)}, 'OWNED'); console.log('wrote the other file'); } catch (e) { console.log('other file: ' + e.code); }
try { console.log('shadow: ' + fs.readFileSync('/etc/shadow').length + ' bytes'); } catch (e) { console.log('shadow: ' + e.code); }
console.log('candidate now ' + fs.readFileSync(candidate, 'utf8')); process.exit(1);`);
  try {
    const v = await validate(spec, readFileSync(real), real, { packageDir: pkg, tmpDir: scratchParent });
    assert.equal(v.status, 'invalid');
    assert.match(v.message, /candidate now \{"\$schema":"x","permission":"ask"\}/);
    assert.equal(readFileSync(real, 'utf8'), '{"permission":"ask"}\n');
    assert.deepEqual(readdirSync(scratchParent), []);
    if (iso.isolation === 'bwrap') {
      assert.match(v.message, /other file: EROFS/);
      assert.match(v.message, /shadow: (0 bytes|EACCES)/, 'the password hashes are readable inside');
      assert.equal(readFileSync(other, 'utf8'), 'REAL');
    }
  } finally { rmSync(outside, { recursive: true, force: true }); }
});

test('the check cannot change the host\'s kernel settings or hostname, even when warden runs as root (no capabilities, /proc/sys read-only)', { skip: skip || (iso.isolation !== 'bwrap' ? 'bubblewrap is not usable here' : false) }, async () => {
  // writes the host's current hostname back: no harm done even if the write went through
  const spec = fake('sysctl', `const now = fs.readFileSync('/proc/sys/kernel/hostname', 'utf8');
try { fs.writeFileSync('/proc/sys/kernel/hostname', now); console.log('sysctl written'); } catch (e) { console.log('sysctl: ' + e.code); }
console.log('caps ' + /CapEff:\\s*(\\w+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]); process.exit(1);`);
  const v = await validate(spec, '{}', '/home/u/x.json', { packageDir: pkg, tmpDir: scratchParent });
  assert.equal(v.status, 'invalid', v.message);
  assert.match(v.message, /sysctl: EROFS/);
  assert.match(v.message, /caps 0000000000000000/);
});

test('at its time limit the check is stopped with everything it started, and the verdict says so', { skip }, async () => {
  const spec = fake('hang', `const c = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
console.log('grandchild ' + c.pid); setInterval(() => {}, 1000);`, { timeoutMs: 800 });
  const t0 = Date.now();
  const v = await validate(spec, '{}', '/home/u/x.json', { packageDir: pkg, tmpDir: scratchParent });
  assert.ok(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
  assert.equal(v.status, 'timeout');
  assert.equal(v.ok, false);
  assert.match(v.message, /^no answer within 800 ms \(stopped\)/);
  const pid = Number(/grandchild (\d+)/.exec(v.message)?.[1]);
  assert.ok(pid > 0, v.message);
  // inside bubblewrap's pid namespace the number is not the host's: ask for the command instead
  const alive = readdirSync('/proc').filter((p) => /^\d+$/.test(p)).some((p) => { try { return readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('setInterval(() => {}, 1000)'); } catch { return false; } });
  assert.equal(alive, false, 'a process the check started is still running');
  assert.deepEqual(readdirSync(scratchParent), []);
});

test('a check that leaves a process of another session holding its output still gets a verdict soon after it exits', { skip: spawnSync('unshare', [...(process.getuid?.() === 0 ? [] : ['-r']), '-n', 'true']).status === 0 ? false : 'unshare cannot make a network namespace here' }, async () => {
  // under unshare (no pid namespace) a setsid() child is out of the process group's reach
  const spec = fake('daemon', `const c = require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { detached: true, stdio: ['ignore', 'inherit', 'inherit'] });
console.log('daemon ' + c.pid); process.exit(1);`);
  const t0 = Date.now();
  const v = await validate(spec, '{}', '/home/u/x.json', { packageDir: pkg, tmpDir: scratchParent, isolation: 'unshare' });
  const pid = Number(/daemon (\d+)/.exec(v.message)?.[1]);
  try { if (pid > 0) process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
  assert.ok(Date.now() - t0 < 5000, `took ${Date.now() - t0} ms`);
  assert.equal(v.status, 'invalid');
  assert.ok(pid > 0, v.message);
});

test('a check that may run code the candidate names is not run without bubblewrap', async () => {
  const spec = fake('code', 'process.exit(0);', { mayRunCode: true });
  const v = await validate(spec, '{}', '/home/u/x.json', { packageDir: pkg, tmpDir: scratchParent, isolation: 'unshare' });
  assert.equal(v.status, 'unavailable');
  assert.equal(v.ok, false);
  assert.match(v.message, /needs bubblewrap/);
});

test('no isolation, no run: the check is never run on the network', async () => {
  const spec = fake('never', 'process.exit(0);');
  const v = await validate(spec, '{}', '/home/u/x.json', { packageDir: pkg, tmpDir: scratchParent, isolation: 'none' });
  assert.equal(v.status, 'unavailable');
  assert.equal(v.ok, false);
});

test('a runtime that is not installed, or needs a newer Node, is "not run" with the reason', async () => {
  const spec = fake('x', 'process.exit(0);');
  const missing = await validate({ ...spec, packageBin: 'nothere/bin/x.js' }, '{}', '/home/u/x.json', { packageDir: pkg });
  assert.equal(missing.status, 'unavailable');
  assert.match(missing.message, /not installed/);
  const old = await validate({ ...spec, nodeMajor: 99 }, '{}', '/home/u/x.json', { packageDir: pkg });
  assert.equal(old.status, 'unavailable');
  assert.match(old.message, /needs Node ≥ 99/);
});

test('unshare alone also takes the network away (the fallback where bubblewrap cannot run)', { skip: spawnSync('unshare', [...(process.getuid?.() === 0 ? [] : ['-r']), '-n', 'true']).status === 0 ? false : 'unshare cannot make a network namespace here' }, async () => {
  const spec = fake('net2', CONNECT(port));
  const v = await validate(spec, '{}', '/home/u/x.json', { packageDir: pkg, tmpDir: scratchParent, isolation: 'unshare' });
  assert.equal(v.status, 'invalid', v.message);
  assert.equal(v.isolation, 'unshare');
  assert.match(v.message, /no network: E/);
});
