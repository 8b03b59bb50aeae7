/**
 * The sandbox plan and its layout, pure (src/policy/sandbox.ts; docs/RUNTIME.md, "Running a
 * permitted command"): the bwrap options, and what is mounted where for a host given as a
 * tree. The real runs are in sandbox.test.ts and sandbox-fuzz.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildPolicy, canRead, sandboxArgs, sandboxLayout, sandboxPlan, MAX_SANDBOX_ENTRIES,
  type HostEntry, type HostWalker, type PathProbe, type SandboxPlan, type SessionContext,
} from '../../src/policy/index.js';
import { ALICE, BOOK_CH, GUEST_CH, OWNER, rootFiles } from '../policy/fixtures.js';

type Tree = { [name: string]: Tree | string | { link: string } | null };

/** A host as a tree: an object is a directory, a string a file, { link } a symlink, null a FIFO. */
function walkerOf(trees: Record<string, Tree>): HostWalker<string> {
  const at = (path: string): Tree | string | { link: string } | null | undefined => {
    const [root, ...rest] = Object.keys(trees).filter((r) => path === r || path.startsWith(`${r}/`)).map((r) => [r, ...path.slice(r.length).split('/').filter(Boolean)])[0] ?? [];
    if (root === undefined) return undefined;
    let n: Tree | string | { link: string } | null | undefined = trees[root];
    for (const k of rest) n = n && typeof n === 'object' && !('link' in n) ? (n as Tree)[k as string] : undefined;
    return n;
  };
  const entry = (name: string, host: string, n: Tree | string | { link: string } | null): HostEntry<string> =>
    n === null ? { name, kind: 'other', handle: host }
      : typeof n === 'string' ? { name, kind: 'file', handle: host }
        : 'link' in n && typeof n.link === 'string' ? { name, kind: 'symlink', handle: host, target: n.link }
          : { name, kind: 'dir', handle: host };
  return {
    root(s) { const n = at(s.host); return n === undefined ? null : entry(s.path, s.host, n); },
    children(dir) {
      const n = at(dir) as Tree;
      return Object.keys(n).sort().map((k) => entry(k, `${dir}/${k}`, n[k] as Tree));
    },
  };
}

const probe: PathProbe = (p) => ({ '/bin': { kind: 'symlink' as const, target: 'usr/bin' }, '/lib64': { kind: 'dir' as const } })[p] ?? null;
const guild = (channel: string): SessionContext => ({ kind: 'guild', guild: '1', channel });
const OPTS = { memoriesDir: '/host/mem', workspaceDir: '/host/ws/', probe };

const COND = `[workspace."/bookclub/"]
when = "discord:guild:1"
action = "allow"

[workspace."/bookclub/hidden/"]
when = "discord:guild:1"
action = "deny"

[workspace."/bookclub/notes.md"]
when = "!discord:dm"
action = "deny"

[memories."/bookclub/"]
when = "discord:dm"
action = "allow"
`;
const policy = buildPolicy(rootFiles({ conditions: COND, blocks: {} })).policy;
const withFolders = (folders: string[], commands = ['ls']) => ({ ...policy, orgs: policy.orgs.map((o) => (o.name === 'bookclub' ? { ...o, folders, commands } : o)) });

function ok(p: SandboxPlan): Extract<SandboxPlan, { ok: true }> { assert.ok(p.ok, p.ok ? '' : p.reason); return p; }

test('plan: every namespace, no nested user namespace, no capability, an environment from nothing, no /proc, a bounded /tmp', () => {
  const p = ok(sandboxPlan(withFolders(['/workspace/bookclub/'], ['cat']), ALICE, guild(BOOK_CH), ['cat', 'x'], OPTS));
  const a = p.setup.join(' ');
  for (const f of ['--unshare-all', '--unshare-user', '--disable-userns', '--die-with-parent', '--new-session', '--cap-drop ALL', '--clearenv', '--setenv PATH /usr/bin:/bin']) assert.ok(a.includes(f), f);
  assert.ok(a.includes('--symlink usr/bin /bin --ro-bind /lib64 /lib64 --dev /dev --remount-ro /dev --size 67108864 --tmpfs /tmp'), a);
  assert.ok(!a.includes('/usr /usr'), 'of /usr, the runtime binds what the programs need');
  assert.deepEqual([p.programs, p.systemLinks], [['cat'], ['/bin', '/lib64']]);
  assert.equal(ok(sandboxPlan(policy, OWNER, { kind: 'dm', channel: '9' }, ['sh'], OPTS)).programs, null, 'any command: /usr whole');
  for (const f of ['--proc', '--share-net', '--cap-add', '--bind ', '/host/']) assert.ok(!a.includes(f), f);
  assert.deepEqual(p.argv, ['cat', 'x']);
  assert.deepEqual(p.sections.map((s) => [s.section, s.host]), [['workspace', '/host/ws']]);
  assert.equal(ok(sandboxPlan(withFolders(['/workspace/bookclub/'], ['cat']), ALICE, guild(BOOK_CH), ['cat'], { ...OPTS, bwrap: '/opt/bwrap' })).file, '/opt/bwrap');
  assert.equal(sandboxPlan(withFolders(['/workspace/bookclub/'], ['cat']), ALICE, guild(BOOK_CH), ['cat'], { ...OPTS, limits: { processes: 0 } }).ok, false);
});

test('plan: a command the tier does not permit, or a guest, gets no plan, with the reason', () => {
  const p = sandboxPlan(policy, ALICE, guild(BOOK_CH), ['rm', '-rf', '/'], OPTS);
  assert.equal(p.ok, false);
  assert.match(p.ok ? '' : p.reason, /not one of the permitted commands/);
  const g = sandboxPlan(policy, '999', guild(GUEST_CH), ['ls'], OPTS);
  assert.match(g.ok ? '' : g.reason, /tier guest may run no command/);
});

test('args: the host paths go in the options (passed by --args), the command after "--" is the limits and the argv; the root ends read-only', () => {
  const p = ok(sandboxPlan(withFolders(['/workspace/bookclub/'], ['cat']), ALICE, guild(BOOK_CH), ['cat', 'a.md'], OPTS));
  const layout = sandboxLayout(p, walkerOf({ '/host/ws': { bookclub: { 'a.md': 'x', sub: { 'b.md': 'y' } } } }));
  assert.ok(layout.ok);
  const numbered = { ...layout, entries: layout.entries.map((e, i) => (e.op === 'bind' ? { ...e, handle: 10 + i } : e)) };
  const { options, command } = sandboxArgs(p, numbered);
  assert.deepEqual(sandboxArgs(p, numbered, ['--ro-bind', '/usr/bin/cat', '/usr/bin/cat']).options.slice(p.setup.length, p.setup.length + 3), ['--ro-bind', '/usr/bin/cat', '/usr/bin/cat']);
  assert.deepEqual(command, ['/usr/bin/prlimit', '--cpu=30', '--as=1073741824', '--nproc=64', '--nofile=256', '--fsize=67108864', '--core=0', '--', 'cat', 'a.md']);
  assert.deepEqual(options.slice(p.setup.length), ['--ro-bind', '/usr', '/usr', '--dir', '/workspace', '--dir', '/workspace/bookclub', '--ro-bind-fd', '12', '/workspace/bookclub/a.md', '--ro-bind-fd', '13', '/workspace/bookclub/sub',
    '--remount-ro', '/', '--chdir', '/workspace/bookclub']);
});

test('layout: a folder with no rule beneath is bound whole; a rule beneath makes it entry by entry, leaving out what canRead refuses, present or not', () => {
  const p = ok(sandboxPlan(withFolders(['/workspace/bookclub/', '/workspace/public/', '/memories/bookclub/']), ALICE, guild(BOOK_CH), ['ls'], OPTS));
  const host = walkerOf({
    '/host/ws': { bookclub: { 'a.md': 'x', 'notes.md': 'dm', hidden: { 'h.md': 'dm' }, sub: {}, fifo: null, ln: { link: '../public' } }, public: { 'p.md': 'x' }, other: { 's.md': 'x' } },
    '/host/mem': { bookclub: { 'm.md': 'dm' } },
  });
  const l = sandboxLayout(p, host);
  assert.ok(l.ok);
  assert.deepEqual(l.entries.map((e) => (e.op === 'bind' ? `${e.op} ${e.kind} ${e.path} <- ${e.handle}` : e.op === 'symlink' ? `ln ${e.path} -> ${e.target}` : `dir ${e.path}`)), [
    'dir /workspace',
    'dir /workspace/bookclub',
    'bind file /workspace/bookclub/a.md <- /host/ws/bookclub/a.md',
    'ln /workspace/bookclub/ln -> ../public',
    'bind dir /workspace/bookclub/sub <- /host/ws/bookclub/sub',
    'bind dir /workspace/public <- /host/ws/public',
  ]);
  assert.equal(l.cwd, '/workspace/bookclub');
  // Exactly canRead: each bound or made path is granted, each left out refused.
  const can = (x: string) => canRead(withFolders(['/workspace/bookclub/', '/workspace/public/', '/memories/bookclub/']), ALICE, guild(BOOK_CH), x);
  for (const x of ['/workspace/bookclub/a.md', '/workspace/bookclub/sub/any.md', '/workspace/public/p.md']) assert.equal(can(x), true, x);
  for (const x of ['/workspace/bookclub/notes.md', '/workspace/bookclub/hidden/h.md', '/workspace/other/s.md', '/memories/bookclub/m.md']) assert.equal(can(x), false, x);
});

test('layout: a grant without "/" is the path itself only (an empty directory, or the file bound as a file); nested grants answer as canRead', () => {
  const p = ok(sandboxPlan(withFolders(['/workspace/solo', '/workspace/one.md', '/workspace/a/', '/workspace/a/b/']), ALICE, guild(BOOK_CH), ['ls'], OPTS));
  const l = sandboxLayout(p, walkerOf({ '/host/ws': { solo: { 'n.md': 'x' }, 'one.md': 'x', 'two.md': 'x', a: { b: { 'c.md': 'x' }, 'd.md': 'x' } } }));
  assert.ok(l.ok);
  const shown = l.entries.map((e) => `${e.op} ${e.path}`);
  assert.deepEqual(shown, ['dir /workspace', 'dir /workspace/a', 'bind /workspace/a/b', 'bind /workspace/a/d.md', 'bind /workspace/one.md', 'dir /workspace/solo']);
  assert.equal(l.cwd, '/workspace/solo');
});

test('layout: the owner sees the section roots whole where no rule lies beneath, writable; a directory made only to reach nothing is left out', () => {
  const bare = buildPolicy(rootFiles({ conditions: '[workspace."/x/"]\nwhen = "discord:dm"\naction = "allow"\n', blocks: {} })).policy;
  const p = ok(sandboxPlan(bare, OWNER, { kind: 'dm', channel: '9' }, ['sh', '-c', 'true'], OPTS));
  const l = sandboxLayout(p, walkerOf({ '/host/ws': { x: {}, y: { 'f': 'x' } }, '/host/mem': { m: 'x' } }));
  assert.ok(l.ok);
  assert.deepEqual(l.entries.map((e) => `${e.op} ${e.path}${e.op === 'bind' ? ` ${e.write ? 'rw' : 'ro'}` : ''}`), ['bind /memories rw', 'dir /workspace', 'bind /workspace/x rw', 'bind /workspace/y rw']);
  // A member in a guild: the other org's folder with a rule beneath is not even made.
  const m = ok(sandboxPlan(withFolders(['/workspace/public/']), ALICE, guild(BOOK_CH), ['ls'], OPTS));
  const lm = sandboxLayout(m, walkerOf({ '/host/ws': { public: {}, bookclub: { hidden: {} } } }));
  assert.ok(lm.ok);
  assert.deepEqual(lm.entries.map((e) => `${e.op} ${e.path}`), ['dir /workspace', 'bind /workspace/public']);
});

test('layout: absent section directories show nothing; more than MAX entries is refused, not truncated', () => {
  const p = ok(sandboxPlan(withFolders(['/workspace/bookclub/']), ALICE, guild(BOOK_CH), ['ls'], OPTS));
  const none = sandboxLayout(p, walkerOf({}));
  assert.ok(none.ok);
  assert.deepEqual([none.entries, none.cwd], [[], '/tmp']);
  const many: Tree = { hidden: {} };
  for (let i = 0; i <= MAX_SANDBOX_ENTRIES; i++) many[`f${i}.md`] = 'x';
  const big = sandboxLayout(p, walkerOf({ '/host/ws': { bookclub: many } }));
  assert.equal(big.ok, false);
  assert.match(big.ok ? '' : big.reason, /more than 512/);
});
