/**
 * `warden verify` reads each file with the fewest syscalls: the listing's d_type
 * stands in for the lstat, files are opened by bare name from inside their directory. These
 * tests hold it to the guard's own inspection (inspectAll, the careful lstat-first reader)
 * on a root damaged every way at once, and prove a FIFO in place of a protected file is
 * reported without ever being opened, and that verify does not hang on it.
 */
import { it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI, TEST_WARDEN_TOML, cli, makeRoot, type TestRoot } from '../helpers/root.js';
import { inspectAll } from '../../src/guard/inspect.js';
import { verifyAll } from '../../src/guard/verify-pass.js';
import { loadBaseline } from '../../src/store/load-baseline.js';
import { publicRawFs, rawFs } from '../../src/fsx/raw-fs.js';

const roots: TestRoot[] = [];
after(() => { for (const t of roots) t.cleanup(); });

const N = 400;
const name = (i: number): string => `data/f${String(i).padStart(4, '0')}.txt`;

function bigRoot(): TestRoot {
  const toml = TEST_WARDEN_TOML.replace('max_bytes = 1048576', 'max_bytes = 4096') + '\n[[protect]]\npath = "data/*.txt"\n';
  assert.ok(toml.includes('max_bytes = 4096'));
  const t = makeRoot({ wardenToml: toml });
  roots.push(t);
  mkdirSync(t.p('data'));
  for (let i = 0; i < N; i++) writeFileSync(t.p(name(i)), `file ${i}\n`.repeat(1 + (i % 7)));
  const r = cli(t, ['init']);
  assert.equal(r.code, 0, r.stderr);
  return t;
}

type Row = { path: string; reason: string; also: string[]; found: { type: string } | null };

it('verify reports every kind of drift in a large root, exactly as the guard inspection finds it', () => {
  const t = bigRoot();
  const expected = new Map<string, string>();
  const damage = (i: number, reason: string, fn: (p: string) => void) => { fn(t.p(name(i))); expected.set(name(i), reason); };
  damage(3, 'content', (p) => writeFileSync(p, 'changed\n'));
  damage(57, 'content', (p) => writeFileSync(p, readFileSync(p, 'utf8') + 'x'));
  damage(88, 'emptied', (p) => writeFileSync(p, ''));
  damage(101, 'mode', (p) => chmodSync(p, 0o666));
  damage(140, 'owner', (p) => chownSync(p, 65534, 65534));
  damage(150, 'deleted', (p) => rmSync(p));
  damage(201, 'symlink', (p) => { rmSync(p); symlinkSync(t.p(name(0)), p); });
  damage(222, 'not-regular', (p) => { rmSync(p); spawnSync('mkfifo', [p]); });
  damage(250, 'not-regular', (p) => { rmSync(p); mkdirSync(p); });
  damage(333, 'too-large', (p) => writeFileSync(p, Buffer.alloc(8192, 1)));
  damage(399, 'content', (p) => writeFileSync(p, 'last\n'));
  writeFileSync(t.p('data/new.txt'), 'unexpected\n');
  expected.set('data/new.txt', 'unexpected-file');

  const r = spawnSync(process.execPath, [CLI, 'verify', '--json', '--root', t.root], { env: t.env, encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 1, r.stderr);
  const out = JSON.parse(r.stdout) as { clean: boolean; checked: number; drift: Row[] };
  assert.equal(out.clean, false);
  const got = new Map(out.drift.map((d) => [d.path, d.reason]));
  assert.deepEqual([...got].sort(), [...expected].sort(), 'every damaged path, with its reason, and nothing else');
  assert.equal(out.drift.find((d) => d.path === name(222))?.found?.type, 'fifo');

  // The careful reader (lstat first, the guard's) agrees on every finding and its details.
  const saved = process.env.XDG_STATE_HOME;
  process.env.XDG_STATE_HOME = t.env.XDG_STATE_HOME;
  const l = loadBaseline(t.root);
  try {
    const careful = inspectAll(l.rootFd, l.state, l.pset, l.config.max_bytes).map((f) => [f.path, f.verdict.reason, f.verdict.also.join(','), f.obs.type]);
    const cwd = process.cwd();
    const fast = verifyAll(l.rootFd, l.state, l.pset, l.config.max_bytes).map((f) => [f.path, f.verdict.reason, f.verdict.also.join(','), f.obs.type]);
    assert.equal(process.cwd(), cwd, 'the pass returns to the directory the process stood in');
    assert.deepEqual(fast, careful);
    // Node's fs binding (where it is checked) and node:fs find the same.
    const viaPublic = verifyAll(l.rootFd, l.state, l.pset, l.config.max_bytes, publicRawFs()).map((f) => [f.path, f.verdict.reason, f.verdict.also.join(','), f.obs.type]);
    assert.deepEqual(viaPublic, careful);
    if (process.versions.node.startsWith('20.')) assert.equal(rawFs().kind, 'binding', 'on Node 20 the binding is used');
  } finally {
    l.close();
    if (saved === undefined) delete process.env.XDG_STATE_HOME; else process.env.XDG_STATE_HOME = saved;
  }
  rmSync(t.p(name(250)), { recursive: true });
});

it('a clean large root verifies clean, and a directory replaced by a link makes its files deleted', () => {
  const t = bigRoot();
  const r = cli(t, ['verify']);
  assert.equal(r.code, 0, r.stderr);
  const clean = JSON.parse(cli(t, ['verify', '--json']).stdout) as { clean: boolean; checked: number };
  assert.equal(clean.clean, true);
  assert.ok(clean.checked > N, `${clean.checked} files checked`);
  renameSync(t.p('data'), t.p('data.moved'));
  symlinkSync(t.p('data.moved'), t.p('data'));
  const j = JSON.parse(cli(t, ['verify', '--json']).stdout) as { drift: Row[] };
  assert.equal(j.drift[0]?.path, 'data');
  assert.equal(j.drift[0]?.reason, 'symlink');
  assert.equal(j.drift.filter((d) => d.reason === 'deleted' && d.path.startsWith('data/')).length, N, 'every file under the link is missing where it belongs');
});

const hasStrace = spawnSync('sh', ['-c', 'command -v strace']).status === 0;

it('a FIFO planted in place of a protected file is reported, never opened, and verify does not hang', { skip: !hasStrace && 'strace is not installed' }, () => {
  const t = bigRoot();
  const fifo = name(17);
  rmSync(t.p(fifo));
  spawnSync('mkfifo', [t.p(fifo)]);
  const log = join(t.base, 'verify.strace');
  // No writer ever opens the FIFO: an open for reading without O_NONBLOCK would block forever.
  const r = spawnSync('strace', ['-f', '-qq', '-o', log, '-e', 'trace=open,openat,openat2', process.execPath, CLI, 'verify', '--root', t.root],
    { env: t.env, encoding: 'utf8', timeout: 60_000 });
  assert.notEqual(r.status, null, 'verify finished (it did not hang on the FIFO)');
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stdout, new RegExp(`DRIFT ${fifo.replace('.', '\\.')}: not-regular \\(now a fifo\\)`));
  const opens = readFileSync(log, 'utf8').split('\n').filter((l) => /open/.test(l));
  assert.ok(opens.some((l) => /"f0016\.txt"/.test(l)), 'the neighbours are opened by bare name (the trace sees opens)');
  assert.deepEqual(opens.filter((l) => l.includes('f0017.txt')), [], 'the FIFO is never opened');
});

it('a report larger than a pipe holds reaches a slow reader whole (verify leaves early only when its output is out)', () => {
  const t = bigRoot();
  for (let i = 0; i < N; i++) writeFileSync(t.p(name(i)), `changed ${i}\n`);
  // The reader starts late, so the pipe (64 KiB) is full while verify finishes.
  const r = spawnSync('sh', ['-c', `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} verify --json --root ${JSON.stringify(t.root)} | (sleep 0.5; cat); exit "\${PIPESTATUS:-0}"`],
    { env: t.env, encoding: 'utf8', timeout: 60_000, maxBuffer: 64 * 1024 * 1024 });
  assert.ok(r.stdout.length > 128 * 1024, `${r.stdout.length} bytes: more than a pipe holds`);
  const out = JSON.parse(r.stdout) as { drift: Row[] };
  assert.equal(out.drift.length, N, 'every drifted file is in the report');
});
