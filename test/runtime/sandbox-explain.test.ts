/**
 * `warden explain --command` (docs/RUNTIME.md, "Running a permitted command"): the owner sees
 * whether a person may run a line and what it would see in the sandbox now, entry by entry
 * with the host path behind it, from the real CLI against real files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI } from '../helpers/root.js';
import { ALICE, BOOK_CH, world } from './sandbox-world.js';

test('explain --command lists what a permitted command would see, with host paths, and refuses an unpermitted one with the reason', () => {
  const w = world(['/workspace/bookclub/'], '[workspace."/bookclub/minutes.md"]\nwhen = "discord:dm"\naction = "allow"\n', ['git log']);
  try {
    const root = join(w.base, 'root');
    for (const f of w.files) { mkdirSync(join(root, f.path, '..'), { recursive: true }); writeFileSync(join(root, f.path), f.text); }
    w.put('workspace/bookclub/a.md', 'x');
    w.put('workspace/bookclub/minutes.md', 'dm only');
    w.put('workspace/bookclub/sub/b.md', 'x');
    w.put('workspace/other/s.md', 'x');
    const run = (line: string, ...extra: string[]) => spawnSync(process.execPath, [CLI, 'explain', '--root', root, '--user', ALICE, '--guild', '1', '--channel', BOOK_CH, '--command', line, ...extra], { encoding: 'utf8' });
    const r = run('git log -3', '--workspace', w.ws, '--memories', w.mem);
    assert.equal(r.status, 0, r.stderr);
    const sees = r.stdout.slice(r.stdout.indexOf('command: git log -3')).trim().split('\n').map((l) => l.trim());
    const programs = sees.pop() as string;
    assert.match(programs, /^programs: \/usr\/bin\/prlimit \/usr\/bin\/git \/usr\/lib\/\S+ .*\(read-only; nothing else of \/usr\)$/);
    assert.doesNotMatch(programs, /\/(sh|dash|bash)\b/, 'no shell for a member who may run git log');
    assert.deepEqual(sees, [
      'command: git log -3 — runs in the sandbox; it would see now:',
      '/workspace/  (made by the sandbox: only the entries listed beneath)',
      '/workspace/bookclub/  (made by the sandbox: only the entries listed beneath)',
      `/workspace/bookclub/a.md  (read-only file, from ${join(w.ws, 'bookclub/a.md')})`,
      `/workspace/bookclub/sub/  (read-only directory, everything beneath, from ${join(w.ws, 'bookclub/sub')})`,
      'working directory: /workspace/bookclub',
    ]);
    const json = JSON.parse(run('git log -3', '--workspace', w.ws, '--memories', w.mem, '--json').stdout) as { command: { runs: boolean; sees: string[] } };
    assert.equal(json.command.runs, true);
    assert.equal(json.command.sees.length, 6);
    const no = run('cat /etc/passwd', '--workspace', w.ws, '--memories', w.mem);
    assert.equal(no.status, 1);
    assert.match(no.stdout, /command: cat \/etc\/passwd — not run: not one of the permitted commands/);
    const usage = run('git log');
    assert.equal(usage.status, 2);
    assert.match(usage.stderr, /--command needs --workspace DIR and --memories DIR/);
  } finally { w.done(); }
});
