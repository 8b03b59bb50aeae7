/**
 * The sandbox attacked by a malicious org member (docs/RUNTIME.md, "Running a permitted
 * command"): with only the permitted lines (find, cat, ls, git log) and with write access to
 * the org's own folder. Each test is a way the sandbox once gave more than the promise,
 * run through bwrap by a runtime as root and by a runtime as uid 65534. Skipped, with the
 * reason, where bwrap cannot run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { buildPolicy } from '../../src/policy/index.js';
import { accessFor, commandArgv, resolveTier, runSandboxed, sandboxPlanFor, sandboxPreview } from '../../src/runtime/index.js';
import { ALICE, GUILD_CTX, RUNTIMES, bwrapMissing, runMember, world } from './sandbox-world.js';

const skip = bwrapMissing() ?? false;
const BOOKCLUB = ['/workspace/bookclub/', '/memories/bookclub/'];
const MEMBER = ['find', 'cat', 'ls', 'git log'];
const DM_ONLY = (key: string) => `[workspace."${key}"]\nwhen = "discord:dm"\naction = "allow"\n\n`;

for (const { who, label } of RUNTIMES) {
  // /dev was bwrap's own tmpfs, owned by the command's uid and of no bounded size: one `find`
  // line (-fprintf FILE %67108864p, 250 files at once) could fill the host's memory, past /tmp's bound.
  test(`${label}: /dev is not writable (only /tmp, bounded, is): a permitted find cannot fill memory through it`, { skip }, async () => {
    const w = world(BOOKCLUB, '', MEMBER);
    try {
      w.put('workspace/bookclub/a.md', 'bookclub notes\n');
      const f = await runMember(w, who, ['find', '/dev', '/dev/shm', '-maxdepth', '0', '-writable']);
      assert.equal(f.stdout, '', `writable inside: ${f.stdout}`);
      const wr = await runMember(w, who, ['find', '/workspace/bookclub/a.md', '-fprintf', '/dev/shm/big', '%1000000p', '-fprintf', '/dev/big', '%1000000p']);
      assert.notEqual(wr.code, 0, 'a file was written in /dev');
      assert.match(wr.stderr, /Read-only file system|Permission denied/, wr.stderr);
      // The devices a program writes to still work.
      const n = await runMember(w, who, ['find', '/workspace/bookclub/a.md', '-fprint', '/dev/null', '-print']);
      assert.equal(n.code, 0, n.stderr);
      assert.equal(n.stdout, '/workspace/bookclub/a.md\n');
    } finally { w.done(); }
  });

  // Symlinks (and made directories) did not count toward the 512-entry refusal: a member who
  // can write in a folder the sandbox rebuilds entry by entry (a rule lies beneath it) made
  // every command of the org fail in bwrap ("Exceeded maximum number of arguments"), after
  // the runtime had held one descriptor per entry (20000 entries: every descriptor it had).
  test(`${label}: a folder flooded with symlinks is refused with the reason before bwrap runs`, { skip }, async () => {
    const w = world(BOOKCLUB, DM_ONLY('/bookclub/private/'), MEMBER);
    try {
      w.put('workspace/bookclub/a.md', 'bookclub notes\n');
      for (let i = 0; i < 3000; i++) symlinkSync('a.md', join(w.ws, 'bookclub', `l${i}`));
      await assert.rejects(runMember(w, who, ['ls', '/workspace/bookclub']), /more than 512 separately mounted entries \(or 2048 entries of any kind/);
    } finally { w.done(); }
  });
}

// A folder bound whole is live, FIFOs and sockets included, and a read-only mount refuses
// writes to files, not to a FIFO (nor a connect() to a socket): a permitted `find -fprintf`
// writes into a host FIFO that lies in a granted folder, and a host process reading it gets
// the bytes (seen for real, as root and as uid 65534). Not fixed: it needs a seccomp filter
// (socket(AF_UNIX) refused) or rebuilding every folder that holds one; docs/RUNTIME.md,
// "What it does not promise", says so. Kept as a todo so the hole stays visible.
for (const { who, label } of RUNTIMES) {
  test(`${label}: a FIFO on the host, in a granted folder, takes no write from the command`, { skip, todo: 'a FIFO or socket in a folder bound whole is reachable (docs/RUNTIME.md, "What it does not promise")' }, async () => {
    const w = world(BOOKCLUB, '', MEMBER);
    const fifo = join(w.ws, 'bookclub', 'pipe');
    try {
      w.put('workspace/bookclub/a.md', 'bookclub notes\n');
      assert.equal(spawnSync('mkfifo', [fifo]).status, 0);
      chmodSync(fifo, 0o666);
      const reader = spawn('timeout', ['8', 'cat', fifo], { stdio: ['ignore', 'pipe', 'ignore'] });
      let got = '';
      reader.stdout.on('data', (b: Buffer) => { got += b.toString('utf8'); });
      const closed = new Promise((res) => reader.on('close', res));
      await runMember(w, who, ['find', '/workspace/bookclub/a.md', '-fprintf', '/workspace/bookclub/pipe', 'from the sandbox\n'], { timeoutMs: 5_000 });
      await closed;
      assert.equal(got, '', 'the host read what the sandbox wrote');
    } finally { w.done(); }
  });
}

// A member's line with a word longer than execve takes (128 KiB) passed commandArgv and the
// plan; spawn then threw E2BIG synchronously out of runSandboxed, so a runtime written as
// docs/RUNTIME.md shows it (`runSandboxed(…).then(…)` in an event handler) crashed.
test('a line too long for execve is refused by the promise, never thrown at the runtime', { skip }, async () => {
  const w = world(BOOKCLUB, '', MEMBER);
  try {
    w.put('workspace/bookclub/a.md', 'bookclub notes\n');
    const policy = buildPolicy(w.files).policy;
    const d = commandArgv(accessFor(policy, resolveTier(policy, ALICE, GUILD_CTX)), `cat ${'a'.repeat(200_000)}`);
    assert.ok(d.permitted && d.argv);
    const plan = sandboxPlanFor(policy, ALICE, GUILD_CTX, d.argv, { workspaceDir: w.ws, memoriesDir: w.mem });
    let run: Promise<unknown> | undefined;
    assert.doesNotThrow(() => { run = runSandboxed(plan, { timeoutMs: 10_000 }); });
    await assert.rejects(run as Promise<unknown>, /E2BIG/);
  } finally { w.done(); }
});

// A symlink's text is the member's: with a newline it forged a line of `explain --command`
// ("/workspace/other/secret.md  (read-only file, …)"), which the owner reads to check the sandbox.
test('the preview shows a symlink a member made on one line, its text escaped', () => {
  const w = world(BOOKCLUB, DM_ONLY('/bookclub/private/'), MEMBER);
  try {
    w.put('workspace/bookclub/a.md', 'bookclub notes\n');
    const forged = '/workspace/other/secret.md  (read-only file, from /srv/other/secret.md)';
    symlinkSync(`a.md\n${forged}\n\u001b]52;c;cHduZWQ=\u0007`, join(w.ws, 'bookclub', 'link.md'));
    const p = sandboxPreview(sandboxPlanFor(buildPolicy(w.files).policy, ALICE, GUILD_CTX, ['ls'], { workspaceDir: w.ws, memoriesDir: w.mem }));
    assert.ok(p.ok, p.ok ? '' : p.reason);
    const lines = p.lines.join('\n').split('\n');
    assert.ok(!lines.includes(forged), lines.join('\n'));
    for (const l of lines) assert.doesNotMatch(l, /[\u0000-\u001f\u007f]/, l);
    assert.ok(lines.some((l) => l.startsWith('/workspace/bookclub/link.md -> a.md\\n/workspace/other/secret.md')), lines.join('\n'));
  } finally { w.done(); }
});
