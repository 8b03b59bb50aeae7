// The sandbox, exactly (src/policy/sandbox.ts): every bwrap option of a plan, the layout a
// host gives (what is wanted of each directory, what is bound, made or left out, the limits
// handed to the walker), the arguments and the description the owner reads. Pure: the host is
// a tree and the walker records what it was asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildPolicy, describeLayout, sandboxArgs, sandboxLayout, sandboxPlan, sandboxView, MAX_LAYOUT_ENTRIES, MAX_WALK_NAMES,
  type HostEntry, type HostWalker, type PathProbe, type SandboxPlan,
} from '../../src/policy/index.js';
import { ALICE, BOOK_CH, OWNER, org, rootFiles } from './fixtures.js';

const COND = `[workspace."/club/"]
when = "discord:guild:1"
action = "allow"

[workspace."/club/secret/"]
when = "discord:guild:1"
action = "deny"

[memories."/m/"]
when = "discord:guild:1"
action = "allow"

[workspace."/pub"]
when = "discord:guild:1"
action = "deny"

[blocks.nsfw]
when = "discord:nsfw"
action = "load"
`;
const CLUB = org({ members: [ALICE], channels: [BOOK_CH], folders: ['/workspace/club/', '/memories/m/', '/workspace/one'], commands: ['ls', 'cat -n', 'cat'] });
const policy = buildPolicy(rootFiles({ conditions: COND, orgs: { club: CLUB } })).policy;
const ctx = { kind: 'guild' as const, guild: '1', channel: BOOK_CH };
const allLinks: PathProbe = (p) => (p === '/bin' || p === '/lib' || p === '/libx32' ? { kind: 'symlink', target: `usr${p}` } : p === '/lib64' || p === '/sbin' || p === '/lib32' ? { kind: 'dir' } : null);
const OPTS = { memoriesDir: '/host/mem//', workspaceDir: '/', probe: allLinks };
function ok(p: SandboxPlan): Extract<SandboxPlan, { ok: true }> { assert.ok(p.ok, p.ok ? '' : p.reason); return p; }

type Node = { [name: string]: Node } | 'file' | 'fifo' | { link?: string };
/** A host tree; the walker honours `want` as the runtime's does, and records every call. */
function walker(root: Record<string, Node>, calls: string[], mem?: Record<string, Node>): HostWalker<string> {
  const at = (h: string): Node | undefined => h.split('\u0001').slice(1).reduce<Node | undefined>((n, k) => (n && typeof n === 'object' ? (n as Record<string, Node>)[k] : undefined), (h.startsWith('mem') ? mem : root) as Node);
  const entry = (name: string, h: string, n: Node): HostEntry<string> =>
    n === 'file' ? { name, kind: 'file', handle: h } : n === 'fifo' ? { name, kind: 'other', handle: h }
      : 'link' in n && Object.keys(n).length <= 1 && !(n.link !== undefined && typeof n.link === 'object') ? { name, kind: 'symlink', handle: h, ...(n.link === undefined ? {} : { target: n.link as string }) }
        : { name, kind: 'dir', handle: h };
  return {
    root(s) { calls.push(`root ${s.path} ${s.host}`); return s.section === 'workspace' ? entry(s.path, 'ws', root) : mem ? entry(s.path, 'mem', mem) : null; },
    children(h, want, limits) {
      const n = at(h) as Record<string, Node>;
      const names = Object.keys(n);
      calls.push(`children ${h.replace(/\u0001/g, '/')} want=[${names.filter((k) => want?.(k)).join(',')}] ${JSON.stringify(limits)}`);
      return names.filter((k) => want?.(k) ?? true).map((k) => entry(k, `${h}\u0001${k}`, n[k] as Node));
    },
  };
}

test('a member\'s plan: every option in order, the system links the host has, sections with their host directories, the programs', () => {
  const p = ok(sandboxPlan(policy, ALICE, ctx, ['cat', 'a.md'], OPTS));
  assert.deepEqual(p.setup, ['--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session', '--cap-drop', 'ALL', '--clearenv',
    '--setenv', 'PATH', '/usr/bin:/bin', '--setenv', 'HOME', '/tmp', '--setenv', 'LANG', 'C.UTF-8',
    '--setenv', 'GIT_CONFIG_NOSYSTEM', '1', '--setenv', 'GIT_CONFIG_COUNT', '1', '--setenv', 'GIT_CONFIG_KEY_0', 'safe.directory', '--setenv', 'GIT_CONFIG_VALUE_0', '*',
    '--symlink', 'usr/bin', '/bin', '--ro-bind', '/sbin', '/sbin', '--symlink', 'usr/lib', '/lib', '--ro-bind', '/lib32', '/lib32', '--ro-bind', '/lib64', '/lib64', '--symlink', 'usr/libx32', '/libx32',
    '--dev', '/dev', '--remount-ro', '/dev', '--size', '67108864', '--tmpfs', '/tmp']);
  assert.deepEqual(p.systemLinks, ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32']);
  assert.deepEqual(p.sections, [{ section: 'memories', host: '/host/mem', path: '/memories' }, { section: 'workspace', host: '/', path: '/workspace' }]);
  assert.deepEqual(p.programs, ['cat', 'ls']);
  assert.equal(p.file, 'bwrap');
  assert.equal(p.write, false);
  assert.deepEqual(p.view.folders, ['/workspace/club/', '/memories/m/', '/workspace/one']);
  const bad = sandboxPlan(policy, ALICE, ctx, ['ls'], { ...OPTS, limits: { openFiles: 1.5 } });
  assert.deepEqual(bad, { ok: false, reason: 'limit openFiles must be a positive integer, not 1.5' });
});

test('the view: readable is canRead; mixed names exactly the directories a key or folder lies strictly beneath', () => {
  const v = sandboxView(policy, ALICE, ctx);
  assert.deepEqual(['/workspace/club/a', '/workspace/club/secret/k', '/workspace/one', '/workspace/one/x', '/memories/m/x', '/workspace/x', '/etc/passwd', 'workspace/club/a'].map((p) => v.readable(p)),
    [true, false, true, false, true, false, false, false]);
  assert.deepEqual(['/workspace', '/workspace/', '/workspace/club', '/workspace/club/', '/workspace/club/secret', '/memories', '/memories/m', '/', '/blocks', '/blocks/nsfw'].map((p) => v.mixed(p)),
    [true, true, true, true, false, true, false, false, false, false]);
  const none = sandboxView(policy, '999999999999999999', { kind: 'dm', channel: '5' });
  assert.equal(none.readable('/workspace/club/a'), false);
  assert.deepEqual(none.folders, []);
  const noConditions = sandboxView(buildPolicy(rootFiles({ conditions: null, orgs: { club: CLUB } })).policy, ALICE, ctx);
  assert.deepEqual([noConditions.mixed('/workspace'), noConditions.mixed('/workspace/club'), noConditions.readable('/workspace/club/a')], [true, false, false]);
});

test('the layout of a host: wanted names only, files and links placed one by one where a key lies beneath, odd names and other kinds left out', () => {
  const p = ok(sandboxPlan(policy, ALICE, ctx, ['cat', 'a.md'], OPTS));
  const calls: string[] = [];
  const host: Record<string, Node> = {
    club: { 'a.md': 'file', secret: { k: 'file' }, sub: { 'b.md': 'file' }, ln: { link: 'a.md' }, dangling: {}, pipe: 'fifo', '': 'file', '.': 'file', '..': 'file', 'x/y': 'file', 'x\0y': 'file' },
    one: {}, other: { z: 'file' }, 'top.md': 'file',
  };
  (host.club as Record<string, Node>).dangling = { link: undefined };
  const l = sandboxLayout(p, walker(host, calls));
  assert.ok(l.ok);
  assert.deepEqual(l.entries, [
    { op: 'dir', path: '/workspace' },
    { op: 'dir', path: '/workspace/club' },
    { op: 'bind', path: '/workspace/club/a.md', kind: 'file', handle: 'ws\u0001club\u0001a.md', write: false },
    { op: 'bind', path: '/workspace/club/sub', kind: 'dir', handle: 'ws\u0001club\u0001sub', write: false },
    { op: 'symlink', path: '/workspace/club/ln', target: 'a.md' },
    { op: 'dir', path: '/workspace/one' },
  ]);
  assert.equal(l.cwd, '/workspace/club');
  assert.deepEqual(calls, [
    'root /memories /host/mem',
    'root /workspace /',
    `children ws want=[club,one] {"names":${MAX_WALK_NAMES},"open":${MAX_LAYOUT_ENTRIES}}`,
    `children ws/club want=[a.md,sub,ln,dangling,pipe,,x/y] {"names":${MAX_WALK_NAMES},"open":${MAX_LAYOUT_ENTRIES - 1}}`,
  ]);
  const args = sandboxArgs(p, l as Extract<typeof l, { ok: true }> as never, ['--ro-bind', '/usr/bin', '/usr/bin']);
  assert.deepEqual(args.options.slice(p.setup.length), ['--ro-bind', '/usr/bin', '/usr/bin',
    '--dir', '/workspace', '--dir', '/workspace/club', '--ro-bind-fd', 'ws\u0001club\u0001a.md', '/workspace/club/a.md',
    '--ro-bind-fd', 'ws\u0001club\u0001sub', '/workspace/club/sub', '--symlink', 'a.md', '/workspace/club/ln', '--dir', '/workspace/one', '--remount-ro', '/', '--chdir', '/workspace/club']);
  assert.deepEqual(args.command, ['/usr/bin/prlimit', '--cpu=30', '--as=1073741824', '--nproc=64', '--nofile=256', '--fsize=67108864', '--core=0', '--', 'cat', 'a.md']);
  assert.deepEqual(sandboxArgs(p, { ok: true, entries: [], cwd: '/tmp' }).options.slice(p.setup.length), ['--ro-bind', '/usr', '/usr', '--remount-ro', '/', '--chdir', '/tmp']);
  assert.deepEqual(describeLayout(l as never, (h: string) => `/h/${h.replace(/\u0001/g, '/')}`), [
    '/workspace/  (made by the sandbox: only the entries listed beneath)',
    '/workspace/club/  (made by the sandbox: only the entries listed beneath)',
    '/workspace/club/a.md  (read-only file, from /h/ws/club/a.md)',
    '/workspace/club/sub/  (read-only directory, everything beneath, from /h/ws/club/sub)',
    '/workspace/club/ln -> a.md  (symlink, resolved inside the sandbox)',
    '/workspace/one/  (made by the sandbox: only the entries listed beneath)',
    'working directory: /workspace/club',
  ]);
});

test('the owner\'s layout is writable and described so; with no folder present the working directory is /tmp', () => {
  const p = ok(sandboxPlan(policy, OWNER, { kind: 'dm', channel: '9' }, ['sh'], { ...OPTS, workspaceDir: '/srv/ws' }));
  assert.equal(p.write, true);
  const calls: string[] = [];
  const l = sandboxLayout(p, walker({ 'f.md': 'file' }, calls));
  assert.ok(l.ok);
  assert.deepEqual(describeLayout(l, (h) => h.replace(/\u0001/g, '/')), l.entries.map((e) => (e.op === 'bind' ? `${e.path}${e.kind === 'dir' ? '/' : ''}  (read-write ${e.kind === 'dir' ? 'directory, everything beneath' : 'file'}, from ${e.handle.replace(/\u0001/g, '/')})` : e.op === 'dir' ? `${e.path}/  (made by the sandbox: only the entries listed beneath)` : '')).concat(`working directory: ${l.cwd}`));
  assert.ok(l.entries.some((e) => e.op === 'bind' && e.write));
  const bareFile = sandboxArgs(p, { ok: true, entries: [{ op: 'bind', path: '/workspace/f', kind: 'file', handle: 7, write: true }], cwd: '/tmp' });
  assert.deepEqual(bareFile.options.slice(-7), ['--bind-fd', '7', '/workspace/f', '--remount-ro', '/', '--chdir', '/tmp']);
  assert.deepEqual(describeLayout({ ok: true, entries: [{ op: 'bind', path: '/workspace/f', kind: 'file', handle: 7, write: true }], cwd: '/tmp' }, (h) => `#${h}`),
    ['/workspace/f  (read-write file, from #7)', 'working directory: /tmp']);
  const member = ok(sandboxPlan(policy, ALICE, ctx, ['ls'], OPTS));
  const empty = sandboxLayout(member, { root: () => null, children: () => [] });
  assert.deepEqual(empty, { ok: true, entries: [], cwd: '/tmp' });
});

test('too many entries, or a directory the walker will not list, refuses the layout; any other failure of the walker is thrown', () => {
  const p = ok(sandboxPlan(policy, ALICE, ctx, ['ls'], OPTS));
  const refused = { ok: false, reason: `the command would see more than 1 separately mounted entries (or ${MAX_LAYOUT_ENTRIES} entries of any kind, or a folder it sees entry by entry holds more than ${MAX_WALK_NAMES} names): list fewer, larger folders` };
  const files = (n: number): Record<string, Node> => ({ club: Object.fromEntries(Array.from({ length: n }, (_, i) => [`f${i}`, 'file' as Node])) });
  assert.equal(sandboxLayout(p, walker(files(1), []), 1).ok, true, 'one bind at a maximum of one');
  assert.deepEqual(sandboxLayout(p, walker(files(2), []), 1), refused, 'two binds past a maximum of one');
  assert.deepEqual(sandboxLayout(p, walker(files(3), []), 1), refused);
  // Refused as soon as it is past the bound: the next directory is not walked.
  const calls: string[] = [];
  assert.equal(sandboxLayout(p, walker(files(1), calls, { m: {} }), 0).ok, false);
  assert.deepEqual(calls, ['root /memories /host/mem', `children mem want=[m] {"names":${MAX_WALK_NAMES},"open":${MAX_LAYOUT_ENTRIES}}`, 'root /workspace /']);
  assert.equal(sandboxLayout(p, walker(files(MAX_LAYOUT_ENTRIES - 2), []), 10_000).ok, true);
  // At the bound exactly, an entry that places nothing (a FIFO) is still looked at.
  const atBound = files(MAX_LAYOUT_ENTRIES - 2);
  (atBound.club as Record<string, Node>).zpipe = 'fifo';
  assert.equal(sandboxLayout(p, walker(atBound, []), 10_000).ok, true);
  assert.equal(sandboxLayout(p, walker(files(MAX_LAYOUT_ENTRIES - 1), []), 10_000).ok, false, 'more entries of any kind than the bound');
  assert.equal(sandboxLayout(p, { root: (s) => ({ name: s.path, kind: 'dir', handle: 'ws' }), children: () => null }).ok, false);
  assert.throws(() => sandboxLayout(p, { root: (s) => ({ name: s.path, kind: 'dir', handle: 'ws' }), children: () => { throw new RangeError('walker broke'); } }), RangeError);
});

test('the working directory is the first of the tier\'s folders the layout makes a directory: a folder that is a file, or absent, is skipped', () => {
  const ORDERED = org({ members: [ALICE], channels: [BOOK_CH], folders: ['/workspace/one', '/memories/m/', '/workspace/club/', '/workspace/pub/'], commands: ['ls'] });
  const p = ok(sandboxPlan(buildPolicy(rootFiles({ conditions: COND, orgs: { club: ORDERED } })).policy, ALICE, ctx, ['ls'], OPTS));
  const host: Record<string, Node> = { one: 'file', club: { 'a.md': 'file' }, pub: { 'p.md': 'file' } };
  const calls: string[] = [];
  const withMem = sandboxLayout(p, walker(host, calls, { m: {} }));
  assert.ok(withMem.ok);
  assert.equal(withMem.cwd, '/memories/m');
  assert.deepEqual(withMem.entries.map((e) => `${e.op} ${e.path}`), ['dir /memories', 'bind /memories/m', 'dir /workspace', 'bind /workspace/one', 'dir /workspace/club', 'bind /workspace/club/a.md', 'bind /workspace/pub']);
  assert.ok(calls.includes(`children ws want=[one,club,pub] {"names":${MAX_WALK_NAMES},"open":${MAX_LAYOUT_ENTRIES - 2}}`), calls.join('\n'));
  const noMem = sandboxLayout(p, walker(host, []));
  assert.ok(noMem.ok);
  assert.equal(noMem.cwd, '/workspace/club');
});
