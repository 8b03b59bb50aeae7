/**
 * The sandbox plan attacked for real (docs/RUNTIME.md, "Running a permitted command"): each
 * way a permitted command once saw more than `canRead` grants, or something of the runtime,
 * run through bwrap by a runtime as root and by a runtime as uid 65534. A member of org
 * bookclub may run cat, sh, ls, find and git log (sh stands for "whatever a permitted binary
 * can do"). Skipped, with the reason, where bwrap cannot run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildPolicy, canRead } from '../../src/policy/index.js';
import { runSandboxed, sandboxPlanFor } from '../../src/runtime/index.js';
import { openNoFollow } from '../../src/runtime/sandbox.js';
import { ALICE, GUILD_CTX, RUNTIMES, bwrapMissing, inheritable, isRoot, runMember, world, type World } from './sandbox-world.js';

const skip = bwrapMissing() ?? false;
const TOKEN = 'discord-token-must-never-show-7f3a9c';
const BOOKCLUB = ['/workspace/bookclub/', '/memories/bookclub/'];
const DM_ONLY = (key: string, section = 'workspace') => `[${section}."${key}"]\nwhen = "discord:dm"\naction = "allow"\n\n`;

/** Everything the command printed, for "never shows" checks. */
const all = (r: { stdout: string; stderr: string }) => `${r.stdout}\n${r.stderr}`;

function basic(): World {
  const w = world(BOOKCLUB, DM_ONLY('/bookclub/private/'));
  w.put('workspace/bookclub/a.md', 'bookclub notes\n');
  w.put('memories/bookclub/m.md', 'bookclub memory\n');
  w.put('workspace/bookclub/private/p.md', 'dm only\n');
  w.put('workspace/other/secret.md', 'the other org\n');
  w.put('memories/private/x.md', 'the owner\n');
  return w;
}

for (const { who, label } of RUNTIMES) {
  test(`${label}: the tier's folders are readable; /etc, another org, host paths and a path kept from this context are not`, { skip }, async () => {
    const w = basic();
    try {
      const ok = await runMember(w, who, ['cat', '/workspace/bookclub/a.md', '/memories/bookclub/m.md']);
      assert.equal(ok.code, 0, ok.stderr);
      assert.equal(ok.stdout, 'bookclub notes\nbookclub memory\n');
      for (const path of ['/etc/passwd', '/etc/shadow', '/workspace/other/secret.md', join(w.ws, 'other/secret.md'), join(w.ws, 'bookclub/a.md'),
        '/memories/private/x.md', join(w.mem, 'private/x.md'), '/workspace/bookclub/private/p.md', `/proc/1/root${w.ws}/other/secret.md`]) {
        const r = await runMember(w, who, ['cat', path]);
        assert.notEqual(r.code, 0, `${path} was readable: ${r.stdout}`);
        assert.equal(r.stdout, '', path);
      }
    } finally { w.done(); }
  });

  test(`${label}: even a shell cannot remount, write to a folder or the root, or keep a capability`, { skip }, async () => {
    const w = basic();
    try {
      const r = await runMember(w, who, ['sh', '-c', 'mount -o remount,rw,bind /workspace/bookclub 2>/dev/null; echo widened >> /workspace/bookclub/a.md; touch /workspace/bookclub/new /workspace/new /new; grep ^CapEff /proc/self/status; ls /']);
      assert.match(r.stderr, /Read-only file system/);
      assert.doesNotMatch(r.stdout, /CapEff:\s+0*[1-9a-f]/, 'a capability was kept');
      assert.equal(spawnSync('cat', [join(w.ws, 'bookclub/a.md')], { encoding: 'utf8' }).stdout, 'bookclub notes\n', 'the host file was written through the sandbox');
      const top = r.stdout.split('\n').filter(Boolean).sort();
      assert.ok(!top.includes('etc') && !top.includes('home') && !top.includes('root') && !top.includes('proc'), top.join(' '));
      assert.ok(top.includes('usr') && top.includes('workspace') && top.includes('memories'), top.join(' '));
    } finally { w.done(); }
  });

  // 1. /proc/1/environ showed the runtime's environment (pid 1 inside was bwrap, started with it).
  test(`${label}: nothing of the runtime's environment is visible inside, at pid 1 or anywhere`, { skip }, async () => {
    const w = basic();
    try {
      const env = { DISCORD_TOKEN: TOKEN };
      const c = await runMember(w, who, ['cat', '/proc/1/environ'], { env });
      assert.ok(!all(c).includes(TOKEN), all(c));
      const s = await runMember(w, who, ['sh', '-c', 'cat /proc/1/environ /proc/self/environ; env; for p in /proc/[0-9]*; do cat $p/environ; done; grep -rs discord /dev /tmp'], { env });
      assert.ok(!all(s).includes(TOKEN), all(s));
      assert.match(s.stdout, /^PATH=\/usr\/bin:\/bin$/m, 'the command gets the plan\'s own environment');
    } finally { w.done(); }
  });

  test(`${label}: no descriptor the runtime inherited (without close-on-exec) reaches the command`, { skip }, async () => {
    const w = world(BOOKCLUB, '', ['bash', 'cat']); // bash: dash cannot name a descriptor above 9
    w.put('workspace/other/secret.md', 'the other org\n');
    // The runtime holds the other org's file open, inheritable, as a service manager or a redirection could leave it.
    const fd = inheritable(join(w.ws, 'other/secret.md'));
    try {
      const r = await runMember(w, who, ['bash', '-c', `cat <&${fd}; true`], { timeoutMs: 10_000 });
      assert.ok(!r.stdout.includes('the other org'), r.stdout);
    } finally { closeSync(fd); w.done(); }
  });

  // 2. /proc/sys was writable by a runtime running as root (the sandbox's uid 0 was the host's).
  test(`${label}: no host-wide knob is writable and the command never runs as the host's root`, { skip }, async () => {
    const w = basic();
    try {
      const f = await runMember(w, who, ['find', '/proc/sys/kernel/core_pattern', '/proc/sysrq-trigger', '/proc/sys/vm/drop_caches', '-maxdepth', '0', '-writable']);
      assert.equal(f.stdout, '', `writable inside: ${f.stdout}`);
      const s = await runMember(w, who, ['sh', '-c', 'id -u; for k in /proc/sys/kernel/core_pattern /proc/sysrq-trigger /sys/kernel/uevent_helper; do test -w $k && echo WRITABLE $k; done; true']);
      assert.doesNotMatch(s.stdout, /WRITABLE/, s.stdout);
      assert.notEqual(s.stdout.split('\n')[0], '0', 'the command ran as uid 0');
    } finally { w.done(); }
  });

  // 3. A tier folder below a symlinked directory was mounted from wherever the link pointed.
  test(`${label}: a folder below a symlinked directory is never mounted from where the link points`, { skip }, async () => {
    const w = world(['/workspace/mono/a/docs/', '/workspace/lnk/docs/'], '');
    try {
      w.put('workspace/mono/b/docs/secret.md', 'org B\n');
      w.link('workspace/mono/a', '../b');
      w.put('memories/private/docs/secret.md', 'the owner\'s memories\n');
      w.link('workspace/lnk', join(w.mem, 'private'));
      for (const path of ['/workspace/mono/a/docs/secret.md', '/workspace/lnk/docs/secret.md']) {
        const r = await runMember(w, who, ['cat', path]);
        assert.equal(r.stdout, '', `${path}: ${r.stdout}`);
        assert.notEqual(r.code, 0);
      }
      const f = await runMember(w, who, ['find', '/workspace', '/memories', '-type', 'f']);
      assert.equal(f.stdout, '', f.stdout);
    } finally { w.done(); }
  });

  // 4. The folder was checked when the plan was made and mounted by path later: a swap between mounted another org.
  test(`${label}: a folder swapped for a symlink between the check and the mount is not followed`, { skip }, async () => {
    for (const when of ['before the run', 'between the walk and the mount']) {
      const w = basic();
      try {
        chmodSync(w.ws, 0o777); // a writer (the runtime as uid 65534 does the swap itself)
        const swap = { dir: join(w.ws, 'bookclub'), to: join(w.ws, 'other') };
        const r = when === 'before the run'
          ? await (async () => { const { renameSync, symlinkSync } = await import('node:fs'); renameSync(swap.dir, `${swap.dir}.old`); symlinkSync(swap.to, swap.dir); return runMember(w, who, ['sh', '-c', 'cat /workspace/bookclub/a.md /workspace/bookclub/secret.md']); })()
          : await runMember(w, who, ['sh', '-c', 'cat /workspace/bookclub/a.md /workspace/bookclub/secret.md'], { swap });
        assert.ok(!r.stdout.includes('the other org'), `${when}: ${r.stdout}`);
        if (when !== 'before the run') assert.equal(r.stdout, 'bookclub notes\n', `${when}: what was checked is what is mounted`);
      } finally { w.done(); }
    }
  });

  // 5. A path conditions.toml keeps from this context was hidden only if it existed when the plan was made.
  test(`${label}: a path kept from this context stays unreadable when it is created after the plan or while the command runs`, { skip }, async () => {
    const w = world(BOOKCLUB, DM_ONLY('/bookclub/minutes.md') + DM_ONLY('/bookclub/private/') + DM_ONLY('/bookclub/sub/late.md'));
    try {
      w.put('workspace/bookclub/a.md', 'bookclub notes\n');
      w.put('workspace/bookclub/sub/s.md', 'sub\n');
      // Created after the runtime decided to run the command, before bwrap starts.
      w.put('workspace/bookclub/minutes.md', 'dm minutes\n');
      w.put('workspace/bookclub/private/p.md', 'dm only\n');
      const before = await runMember(w, who, ['cat', '/workspace/bookclub/minutes.md', '/workspace/bookclub/private/p.md']);
      assert.equal(before.stdout, '', before.stdout);
      // Created while the command runs: it waits for a marker the test writes after them.
      const w2 = world(BOOKCLUB, DM_ONLY('/bookclub/minutes.md') + DM_ONLY('/bookclub/private/') + DM_ONLY('/bookclub/sub/late.md'));
      try {
        w2.put('workspace/bookclub/a.md', 'bookclub notes\n');
        w2.put('workspace/bookclub/sub/s.md', 'sub\n');
        w2.put('workspace/bookclub/live/l.md', 'live\n'); // no rule beneath: bound whole, live
        const running = runMember(w2, who, ['sh', '-c', 'until [ -e /workspace/bookclub/live/go ]; do sleep 0.05; done; cat /workspace/bookclub/minutes.md /workspace/bookclub/private/p.md /workspace/bookclub/sub/late.md; ls /workspace/bookclub/live'], { timeoutMs: 15_000 });
        await new Promise((r) => setTimeout(r, 700));
        w2.put('workspace/bookclub/minutes.md', 'dm minutes\n');
        mkdirSync(join(w2.ws, 'bookclub/private'), { mode: 0o755 });
        w2.put('workspace/bookclub/private/p.md', 'dm only\n');
        w2.put('workspace/bookclub/sub/late.md', 'dm late\n');
        writeFileSync(join(w2.ws, 'bookclub/live/go'), '', { mode: 0o644 });
        const r = await running;
        assert.equal(r.timedOut, false, 'the marker never arrived: the bound sub-folder is not live');
        assert.ok(!/dm (minutes|only|late)/.test(r.stdout), r.stdout);
        assert.match(r.stdout, /^go$/m, r.stdout);
      } finally { w2.done(); }
    } finally { w.done(); }
  });

  // 6. A folder and its sub-folder both listed: the second mount uncovered the first's hidden paths.
  test(`${label}: nested grants never uncover a denied path`, { skip }, async () => {
    const GUILD_ONLY = '[workspace."/a/ops/"]\nwhen = "discord:guild:1"\naction = "allow"\n\n';
    const GUILD_DENY = '[workspace."/a/ops/payroll/"]\nwhen = "discord:guild:1"\naction = "deny"\n\n';
    const w = world(['/workspace/a/', '/workspace/a/ops/'], DM_ONLY('/a/hidden.md') + GUILD_ONLY + GUILD_DENY);
    try {
      w.put('workspace/a/ok.md', 'a ok\n');
      w.put('workspace/a/hidden.md', 'a hidden\n');
      w.put('workspace/a/ops/ok.md', 'ops ok\n');
      w.put('workspace/a/ops/payroll/pay.md', 'payroll\n');
      const r = await runMember(w, who, ['sh', '-c', 'cat /workspace/a/ok.md /workspace/a/ops/ok.md /workspace/a/hidden.md /workspace/a/ops/payroll/pay.md']);
      assert.equal(r.stdout, 'a ok\nops ok\n', r.stdout);
      const can = (p: string) => canRead(buildPolicy(w.files).policy, ALICE, GUILD_CTX, p);
      assert.deepEqual(['/workspace/a/ok.md', '/workspace/a/ops/ok.md', '/workspace/a/hidden.md', '/workspace/a/ops/payroll/pay.md'].map(can), [true, true, false, false]);
    } finally { w.done(); }
  });

  // 7. A grant without a trailing "/" (the path itself only) mounted the whole directory.
  test(`${label}: a grant without a trailing "/" gives the path itself only, and a file is bound as a file`, { skip }, async () => {
    const w = world(['/workspace/solo', '/workspace/one.md'], '');
    try {
      w.put('workspace/solo/notes.md', 'inside solo\n');
      w.put('workspace/one.md', 'one file\n');
      w.put('workspace/two.md', 'not granted\n');
      const r = await runMember(w, who, ['sh', '-c', 'cat /workspace/solo/notes.md /workspace/one.md /workspace/two.md; ls -A /workspace/solo']);
      assert.equal(r.stdout, 'one file\n', r.stdout);
    } finally { w.done(); }
  });

  // 8. /proc/1/cmdline showed the plan: the host paths of the workspace and of every folder.
  test(`${label}: no host path of the runtime is visible inside (argv, /proc, mount table, listings)`, { skip }, async () => {
    const w = basic();
    try {
      const c = await runMember(w, who, ['cat', '/proc/1/cmdline']);
      assert.ok(!all(c).includes(w.base), all(c));
      const s = await runMember(w, who, ['sh', '-c', 'cat /proc/1/cmdline /proc/self/mountinfo /proc/1/mountinfo /proc/self/cmdline; ls -laR /workspace /memories /dev /tmp; pwd']);
      assert.ok(!all(s).includes(w.base), all(s));
    } finally { w.done(); }
  });

  test(`${label}: of the system only the permitted programs and their libraries are there: no shell or interpreter unless a command names one`, { skip }, async () => {
    const w = world(BOOKCLUB, '', ['find', 'cat']);
    try {
      w.put('workspace/bookclub/a.md', 'bookclub notes\n');
      const f = await runMember(w, who, ['find', '/usr', '-type', 'f']);
      const files = f.stdout.split('\n').filter(Boolean);
      assert.ok(files.includes('/usr/bin/find') && files.includes('/usr/bin/cat'), f.stdout);
      for (const p of files) assert.match(p, /^\/usr\/(bin\/(find|cat|prlimit)|lib\/.*\.so[.0-9]*)$/, `present: ${p}`);
      const e = await runMember(w, who, ['find', '/workspace/bookclub/a.md', '-exec', 'sh', '-c', 'echo ESCAPED', ';']);
      assert.doesNotMatch(e.stdout, /ESCAPED/);
      for (const x of ['/bin/sh', '/usr/bin/bash', '/usr/bin/python3', '/usr/bin/perl', '/usr/bin/env']) {
        const r = await runMember(w, who, ['cat', x]);
        assert.notEqual(r.code, 0, `${x} is there`);
      }
    } finally { w.done(); }
  });

  test(`${label}: git log works in the tier's folder (the working directory), and the command is bounded (CPU, memory, processes)`, { skip }, async () => {
    const w = basic();
    try {
      const git = (...a: string[]) => spawnSync('git', ['-C', join(w.ws, 'bookclub'), ...a], { encoding: 'utf8' });
      git('init', '-q');
      git('-c', 'user.email=a@b', '-c', 'user.name=a', 'commit', '-q', '--allow-empty', '-m', 'the first entry');
      spawnSync('chmod', ['-R', 'a+rX', join(w.ws, 'bookclub')]);
      const g = await runMember(w, who, ['git', 'log', '--format=%s']);
      assert.equal(g.stdout, 'the first entry\n', g.stderr);
      const l = await runMember(w, who, ['sh', '-c', 'ulimit -a']);
      for (const re of [/^(time|cpu time)\b.*\s30$/m, /^(vmemory|virtual memory)\b.*\s1048576$/m, /^(process|max user processes)\b.*\s64$/m, /^core(dump)?\b.*\s0$/m, /^(nofiles|open files)\b.*\s256$/m]) assert.match(l.stdout, re);
      // A fork bomb stops at the limit, inside; the sandbox ends.
      const b = await runMember(w, who, ['sh', '-c', 'i=0; while [ $i -lt 100 ]; do sleep 2 & i=$((i+1)); done; wait'], { timeoutMs: 15_000 });
      assert.match(b.stderr, /fork/i, b.stderr);
      assert.equal(b.timedOut, false);
      // /tmp is private and bounded.
      const t = await runMember(w, who, ['sh', '-c', 'head -c 100000000 /dev/zero > /tmp/big; ls -l /tmp/big']);
      assert.match(t.stderr, /(No space left|too large|File size limit)/i, t.stderr);
    } finally { w.done(); }
  });
}

test('runAs: a runtime as root never runs the command as uid 0; only root may choose another uid', { skip }, async () => {
  const w = basic();
  try {
    const plan = sandboxPlanFor(buildPolicy(w.files).policy, ALICE, GUILD_CTX, ['id', '-u'], { workspaceDir: w.ws, memoriesDir: w.mem });
    if (isRoot) {
      await assert.rejects(runSandboxed(plan, { runAs: { uid: 0, gid: 0 } }), /unprivileged uid and gid/);
      const r = await runSandboxed(plan, { runAs: { uid: 4242, gid: 4242 } });
      assert.equal(r.stdout, '4242\n', r.stderr);
    } else {
      await assert.rejects(runSandboxed(plan, { runAs: { uid: 4242, gid: 4242 } }), /needs a runtime running as root/);
    }
    const refused = sandboxPlanFor(buildPolicy(w.files).policy, ALICE, GUILD_CTX, ['rm', '-rf', '/'], { workspaceDir: w.ws, memoriesDir: w.mem });
    await assert.rejects(runSandboxed(refused), /not one of the permitted commands/);
  } finally { w.done(); }
});

test('a command that outlives its timeout is killed with everything it started; nothing is left behind', { skip }, async () => {
  const w = basic();
  try {
    const mark = `${process.pid}${Date.now() % 100000}`; // digits: sleep 300.<mark> is a valid duration
    const r = await runMember(w, 'self', ['sh', '-c', `sleep 300.${mark} & sleep 301.${mark}`], { timeoutMs: 1_500 });
    assert.equal(r.timedOut, true);
    const alive = () => spawnSync('pgrep', ['-f', `sleep 30[01].${mark}`], { encoding: 'utf8' }).stdout.trim();
    const end = Date.now() + 10_000;
    while (alive() !== '' && Date.now() < end) await new Promise((res) => setTimeout(res, 50));
    assert.equal(alive(), '', 'a process of the sandbox outlived it');
  } finally { w.done(); }
});

test('openNoFollow: no symlink is followed in any component, the last included; a file on the way is refused', () => {
  const w = world([], '');
  try {
    w.put('workspace/x/a/x/f.md', 'f');
    w.link('workspace/l', 'x');
    w.link('workspace/x/a/x/ln.md', 'f.md');
    const kind = (p: string) => { const r = openNoFollow(join(w.base, p)); if (r) closeSync(r.fd); return r?.kind ?? null; };
    assert.equal(kind('workspace/x/a/x'), 'dir', 'a name repeated along the path is no symlink');
    assert.equal(kind('workspace/x/a/x/f.md'), 'file');
    assert.equal(kind('workspace/x/a/x/ln.md'), 'symlink', 'the last component is the link itself');
    assert.equal(kind('workspace/l'), 'symlink');
    assert.equal(kind('workspace/l/a'), null, 'through a symlinked directory');
    assert.equal(kind('workspace/x/a/x/f.md/y'), null, 'through a file');
    assert.equal(openNoFollow(`${w.base}/workspace/x/../x`), null, 'a ".." component');
    assert.equal(openNoFollow('relative/path'), null);
  } finally { w.done(); }
});
