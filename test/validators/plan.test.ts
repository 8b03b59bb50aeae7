/**
 * The pure half of the validator harness (docs/RUNTIMES.md, "The runtime's own check"):
 * the candidate's copy stays inside scratch, nothing of warden's environment reaches the
 * check, and the wrapper takes the network away and leaves only scratch writable.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildPlan, candidatePath, childEnv, exposedWithin, safeName, wrap, NOWHERE_PROXY, builtinFor, type ValidatorSpec } from '../../src/validators/index.js';

const SCRATCH = '/tmp/warden-validate-abc';
const base: ValidatorSpec = {
  runtime: 'fake', name: 'check', command: 'fake', args: ['--config', '{candidate}', '--home', '{scratch}'], env: { FAKE_CONFIG: '{candidate}' },
  candidate: '{scratch}/cfg/{name}', validExitCodes: [0], invalidExitCodes: [1], timeoutMs: 1000, strength: 'schema', mayRunCode: false,
};

test('the candidate copy is placed inside the scratch directory, under the real file\'s name', () => {
  assert.equal(candidatePath(base, SCRATCH, 'opencode.jsonc'), `${SCRATCH}/cfg/opencode.jsonc`);
});

test('a candidate place that leaves the scratch directory is refused', () => {
  assert.throws(() => candidatePath({ ...base, candidate: '{scratch}/../etc/passwd' }, SCRATCH, 'x'), /leaves the scratch directory/);
  assert.throws(() => candidatePath({ ...base, candidate: '/etc/{name}' }, SCRATCH, 'x'), /must start with \{scratch\}/);
  assert.throws(() => candidatePath({ ...base, candidate: '{scratch}/{name}/../../x' }, SCRATCH, 'a'), /leaves the scratch directory/);
});

test('a real file name that is not one plain component becomes "candidate"', () => {
  for (const bad of ['', '.', '..', 'a/b', 'a\0b']) assert.equal(safeName(bad), 'candidate');
  assert.equal(candidatePath(base, SCRATCH, '../../etc/x'), `${SCRATCH}/cfg/candidate`);
});

test('the check\'s environment inherits nothing from warden: no credential, no proxy of the owner\'s', () => {
  process.env.WARDEN_TEST_SECRET_TOKEN = 'sk-live-123';
  process.env.ANTHROPIC_API_KEY = 'sk-ant-xyz';
  try {
    const env = childEnv(base, { candidate: `${SCRATCH}/cfg/x`, scratch: SCRATCH, name: 'x' }, ['/opt/node/bin']);
    assert.equal(Object.values(env).some((v) => v.includes('sk-')), false);
    assert.equal(env.WARDEN_TEST_SECRET_TOKEN, undefined);
    assert.equal(env.HOME, SCRATCH);
    assert.equal(env.XDG_CONFIG_HOME, `${SCRATCH}/.config`);
    assert.equal(env.HTTPS_PROXY, NOWHERE_PROXY);
    assert.equal(env.https_proxy, NOWHERE_PROXY);
    assert.equal(env.FAKE_CONFIG, `${SCRATCH}/cfg/x`);
    assert.equal(env.PATH, '/opt/node/bin:/usr/local/bin:/usr/bin:/bin');
  } finally {
    delete process.env.WARDEN_TEST_SECRET_TOKEN;
    delete process.env.ANTHROPIC_API_KEY;
  }
});

test('placeholders in args are filled; a script launcher is run by the chosen Node', () => {
  const p = buildPlan(base, { scratch: SCRATCH, program: '/pkg/node_modules/fake/bin/fake.js', pathDirs: ['/opt/node24/bin'], name: 'c.json', interpreter: '/opt/node24/bin/node' });
  assert.equal(p.file, '/opt/node24/bin/node');
  assert.deepEqual(p.args, ['/pkg/node_modules/fake/bin/fake.js', '--config', `${SCRATCH}/cfg/c.json`, '--home', SCRATCH]);
  assert.equal(p.cwd, `${SCRATCH}/work`);
  assert.deepEqual(p.dirs, [`${SCRATCH}/tmp`, `${SCRATCH}/work`, `${SCRATCH}/cfg`]);
  const native = buildPlan(base, { scratch: SCRATCH, program: '/pkg/opencode', pathDirs: [], name: 'c.json', interpreter: '/usr/bin/node' });
  assert.equal(native.file, '/pkg/opencode');
});

test('bubblewrap: no network, the host read-only, homes and /tmp empty, only scratch writable, the program shown again', () => {
  const plan = buildPlan(base, { scratch: SCRATCH, program: '/root/.cache/rt/node_modules/fake/bin/fake', pathDirs: [], name: 'c' });
  const w = wrap(plan, SCRATCH, { isolation: 'bwrap', root: true, hide: ['/home', '/root'], expose: ['/root/.cache/rt/node_modules'], blank: ['/etc/shadow'] });
  assert.equal(w.file, 'bwrap');
  const a = w.args;
  assert.ok(a.includes('--unshare-net'));
  const at = (...seq: string[]): number => a.findIndex((_, i) => seq.every((s, j) => a[i + j] === s));
  assert.ok(at('--ro-bind', '/', '/') >= 0);
  assert.ok(at('--cap-drop', 'ALL') >= 0, 'no capabilities, even when warden is root');
  assert.ok(at('--proc', '/proc') < at('--ro-bind', '/proc/sys', '/proc/sys'), '/proc/sys read-only over the fresh /proc');

  // order matters: the tmpfs over /tmp and the homes first, then what is shown again, then scratch
  assert.ok(at('--tmpfs', '/tmp') < at('--bind', SCRATCH, SCRATCH));
  assert.ok(at('--tmpfs', '/root') < at('--ro-bind', '/root/.cache/rt/node_modules', '/root/.cache/rt/node_modules'));
  assert.ok(at('--ro-bind', '/', '/') < at('--tmpfs', '/root'));
  assert.deepEqual(a.slice(a.indexOf('--') + 1), [plan.file, ...plan.args]);
  assert.equal(a.filter((x) => x === '--bind').length, 1);
  assert.ok(at('--ro-bind', '/dev/null', '/etc/shadow') > at('--ro-bind', '/', '/'));
});

test('unshare: a network namespace, with a user namespace when not root; no isolation is refused', () => {
  const plan = buildPlan(base, { scratch: SCRATCH, program: '/p/fake', pathDirs: [], name: 'c' });
  assert.deepEqual(wrap(plan, SCRATCH, { isolation: 'unshare', root: true, hide: [], expose: [] }).args.slice(0, 2), ['-n', '--']);
  assert.deepEqual(wrap(plan, SCRATCH, { isolation: 'unshare', root: false, hide: [], expose: [] }).args.slice(0, 3), ['-r', '-n', '--']);
  assert.throws(() => wrap(plan, SCRATCH, { isolation: 'none', root: true, hide: [], expose: [] }), /without network isolation/);
});

test('only the directories inside a hidden one are shown again', () => {
  assert.deepEqual(exposedWithin(['/root/.cache/x', '/usr/lib/node_modules', '/home', '/homeless'], ['/home', '/root']), ['/root/.cache/x', '/home']);
});

test('every built-in check puts its candidate inside scratch and says whether it may run code', () => {
  for (const rt of ['opencode', 'codex', 'gemini-cli', 'claude-code', 'openclaw']) {
    const specs = builtinFor(rt);
    assert.ok(specs.length > 0, rt);
    for (const s of specs) assert.ok(candidatePath(s, SCRATCH, 'x').startsWith(`${SCRATCH}/`), `${rt} ${s.name}`);
  }
  assert.equal(builtinFor('claude-code')[0]?.mayRunCode, true);
});
