/**
 * Issue 23, deliverable 2: the bubblewrap plan of a permitted command, run for real.
 * A member of bookclub may run `cat` (and, to show that the sandbox holds whatever runs
 * in it, `sh`): inside the plan only bookclub's folders are there, read-only, beside the
 * system's programs and libraries; /etc/passwd, another org's folder, the host paths of
 * the runtime's files and a path conditions.toml keeps from this context are not.
 * Skipped, with the reason, where bwrap is not installed or cannot make its namespaces.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildPolicy } from '../../src/policy/index.js';
import { sandboxPlanFor, type SandboxPlan } from '../../src/runtime/index.js';

const ALICE = '222222222222222222';
const BOOK_CH = '444444444444444444';
const CTX = { kind: 'guild' as const, guild: '1', channel: BOOK_CH };
const isRoot = process.getuid?.() === 0;

/** Why the real run cannot happen here, or null. */
function bwrapMissing(): string | null {
  const v = spawnSync('bwrap', ['--version'], { encoding: 'utf8' });
  if (v.error) return `bwrap is not installed (${(v.error as NodeJS.ErrnoException).code}; Debian package bubblewrap)`;
  const r = spawnSync('bwrap', ['--unshare-all', '--ro-bind', '/usr', '/usr', '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--', '/usr/bin/true'], { encoding: 'utf8' });
  if (r.status !== 0) return `bwrap cannot create its namespaces here (${(r.stderr || String(r.status)).trim()})`;
  return null;
}
const missing = bwrapMissing();

function world() {
  const base = mkdtempSync(join(tmpdir(), 'warden-sandbox-'));
  chmodSync(base, 0o755); // readable by the unprivileged run below
  const ws = join(base, 'workspace');
  const mem = join(base, 'memories');
  const put = (p: string, text: string) => { mkdirSync(join(p, '..'), { recursive: true }); writeFileSync(p, text, { mode: 0o644 }); };
  put(join(ws, 'bookclub/a.md'), 'bookclub notes\n');
  put(join(ws, 'bookclub/private/p.md'), 'dm only\n');
  put(join(mem, 'bookclub/m.md'), 'bookclub memory\n');
  put(join(ws, 'other/secret.md'), 'the other org\n');
  put(join(mem, 'private/x.md'), 'the owner\n');
  const q = (xs: string[]) => `[${xs.map((x) => JSON.stringify(x)).join(', ')}]`;
  const org = (members: string[], channels: string[], folders: string[], commands: string[]) =>
    `members = ${q(members)}\nchannels = ${q(channels)}\nfolders = ${q(folders)}\ncommands = ${q(commands)}\nhourly_cap = 5\n`;
  const policy = buildPolicy([
    { path: 'config/conditions.toml', text: '[workspace."/bookclub/private/"]\nwhen = "discord:dm"\naction = "allow"\n' },
    { path: 'config/guests.toml', text: 'channels = []\nfolders = []\n' },
    { path: 'config/warden.toml', text: '[owner]\ndiscord_id = "123456789012345678"\n' },
    { path: 'orgs/bookclub.toml', text: org([ALICE], [BOOK_CH], ['/workspace/bookclub/', '/memories/bookclub/'], ['cat', 'sh']) },
    { path: 'orgs/other.toml', text: org(['333333333333333333'], ['888888888888888888'], ['/workspace/other/'], ['cat']) },
  ]);
  assert.deepEqual(policy.errors, []);
  const plan = (argv: string[]): SandboxPlan => sandboxPlanFor(policy.policy, ALICE, CTX, argv, { memoriesDir: mem, workspaceDir: ws });
  return { base, ws, mem, plan, done: () => rmSync(base, { recursive: true, force: true }) };
}

/** Run a plan as the library hands it over: execFile-style, no shell; optionally as uid 65534. */
function run(plan: SandboxPlan, asNobody = false): { status: number | null; stdout: string; stderr: string } {
  assert.ok(plan.ok, plan.ok ? '' : plan.reason);
  const [file, args] = asNobody ? ['setpriv', ['--reuid', '65534', '--regid', '65534', '--clear-groups', '--', plan.file, ...plan.args]] as const : [plan.file, plan.args] as const;
  const r = spawnSync(file, args, { encoding: 'utf8', timeout: 20_000 });
  assert.equal(r.error, undefined);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('the plan mounts only the tier\'s folders read-only, beside the system\'s programs (read-only), and drops every capability', () => {
  const w = world();
  try {
    const plan = w.plan(['cat', '/workspace/bookclub/a.md']);
    assert.ok(plan.ok);
    assert.deepEqual(plan.mounts, [
      { host: join(w.ws, 'bookclub'), path: '/workspace/bookclub', write: false },
      { host: join(w.mem, 'bookclub'), path: '/memories/bookclub', write: false },
    ]);
    const a = plan.args;
    const sep = a.indexOf('--');
    assert.deepEqual(a.slice(sep + 1), ['cat', '/workspace/bookclub/a.md']);
    const opts = a.slice(0, sep);
    for (const flag of ['--bind', '--bind-try', '--dev-bind', '--dev-bind-try', '--bind-fd', '--rw-bind-fd', '--share-net', '--cap-add']) assert.ok(!opts.includes(flag), `${flag} in ${opts.join(' ')}`);
    for (const flag of ['--unshare-all', '--clearenv', '--die-with-parent', '--new-session']) assert.ok(opts.includes(flag), flag);
    assert.ok(opts.join(' ').includes('--cap-drop ALL'), 'no capability may stay (root could remount a read-only folder read-write)');
    // Every read-only bind is the system (/usr and its real directories), a tier folder, or /dev/null over a hidden file.
    const sources = opts.flatMap((x, i) => (x === '--ro-bind' || x === '--ro-bind-try' ? [opts[i + 1] as string] : []));
    const allowed = new Set(['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/dev/null', join(w.ws, 'bookclub'), join(w.mem, 'bookclub')]);
    for (const s of sources) assert.ok(allowed.has(s), `bound: ${s}`);
    assert.ok(!sources.includes('/etc') && !sources.includes('/') && !sources.includes(w.ws) && !sources.includes(w.base));
    // A command the tier does not permit gets no plan.
    const no = w.plan(['rm', '-rf', '/workspace/bookclub/']);
    assert.equal(no.ok, false);
  } finally { w.done(); }
});

for (const asNobody of isRoot ? [false, true] : [false]) {
  const who = asNobody ? 'uid 65534' : isRoot ? 'root' : 'this user';
  const skip = missing ?? (asNobody && spawnSync('setpriv', ['--version']).error ? 'setpriv is not installed' : false);
  test(`bwrap for real (${who}): cat of the tier's folder works; /etc/passwd, another org, host paths and a path conditions.toml keeps from here fail`, { skip }, () => {
    const w = world();
    try {
      const ok = run(w.plan(['cat', '/workspace/bookclub/a.md', '/memories/bookclub/m.md']), asNobody);
      assert.equal(ok.status, 0, ok.stderr);
      assert.equal(ok.stdout, 'bookclub notes\nbookclub memory\n');
      for (const path of ['/etc/passwd', '/etc/shadow', '/workspace/other/secret.md', join(w.ws, 'other/secret.md'), join(w.ws, 'bookclub/a.md'),
        '/memories/private/x.md', join(w.mem, 'private/x.md'), '/workspace/bookclub/private/p.md', `/proc/1/root${w.ws}/other/secret.md`]) {
        const r = run(w.plan(['cat', path]), asNobody);
        assert.notEqual(r.status, 0, `${path} was readable: ${r.stdout}`);
        assert.equal(r.stdout, '', path);
      }
    } finally { w.done(); }
  });

  test(`bwrap for real (${who}): even a shell the org permits cannot remount the folder read-write, write to it, or keep a capability`, { skip }, () => {
    const w = world();
    try {
      const r = run(w.plan(['sh', '-c', 'mount -o remount,rw,bind /workspace/bookclub 2>/dev/null; echo widened >> /workspace/bookclub/a.md; touch /workspace/bookclub/new; grep ^CapEff /proc/self/status; ls /']), asNobody);
      assert.match(r.stdout, /^CapEff:\s+0+$/m, r.stdout + r.stderr);
      assert.match(r.stderr, /Read-only file system/);
      assert.equal(readFileSync(join(w.ws, 'bookclub/a.md'), 'utf8'), 'bookclub notes\n', 'the host file was written through the sandbox');
      assert.throws(() => readFileSync(join(w.ws, 'bookclub/new')));
      // The root holds the system's programs, /proc, /dev, /tmp and the runtime's two sections; no /etc, no /home.
      const top = r.stdout.split('\n').filter((l) => l && !l.startsWith('CapEff')).sort();
      assert.ok(!top.includes('etc') && !top.includes('home') && !top.includes('root'), top.join(' '));
      assert.ok(top.includes('usr') && top.includes('workspace') && top.includes('memories'), top.join(' '));
    } finally { w.done(); }
  });
}
