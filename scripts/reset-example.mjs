#!/usr/bin/env node
// `npm run reset-example`: put the example root (this repository's config/, orgs/ and
// blocks/) back to its committed state the sanctioned way. A plain `git checkout` is a
// direct edit, which the running guard reverts; this proposes each differing file's
// committed version with `warden apply` (or `warden rm` for a file git does not know),
// so it is validated, approved (at a terminal under approval = "tty") and recorded in
// `warden history`. Pending requests are withdrawn first (`warden deny`). Works with the
// daemon running (it hands the changes over) and without (it applies under the lock).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'src', 'cli', 'main.js');
const DIRS = ['config', 'orgs', 'blocks'];

function git(args, cwd) {
  const r = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (r.status !== 0) { process.stderr.write(`reset-example: git ${args.join(' ')} failed: ${r.stderr}`); process.exit(2); }
  return r.stdout;
}
const warden = (args, cwd, capture = false) => spawnSync(process.execPath, [CLI, ...args, '--root', cwd], { cwd, stdio: capture ? ['inherit', 'pipe', 'inherit'] : 'inherit', encoding: 'utf8' });

const root = git(['rev-parse', '--show-toplevel'], process.cwd()).trim();
const changed = git(['diff', '--name-only', '-z', 'HEAD', '--', ...DIRS], root).split('\0').filter(Boolean);
const unknown = git(['ls-files', '--others', '--exclude-standard', '-z', '--', ...DIRS], root).split('\0').filter(Boolean);

const listed = warden(['approve', '--json'], root, true);
if (listed.status === 0) {
  for (const p of JSON.parse(listed.stdout || '[]')) {
    process.stdout.write(`withdrawing pending request ${p.id} (${p.paths.join(', ')})\n`);
    warden(['deny', p.id], root);
  }
}
if (!changed.length && !unknown.length) {
  process.stdout.write('the example root already matches its committed state\n');
  process.exit(0);
}
const tmp = mkdtempSync(join(tmpdir(), 'warden-reset-'));
let failed = 0;
try {
  for (const path of changed) {
    const file = join(tmp, 'committed');
    writeFileSync(file, git(['show', `HEAD:${path}`], root), { mode: 0o600 });
    process.stdout.write(`\n== ${path}: back to its committed version\n`);
    if (warden(['apply', path, '--from', file], root).status !== 0) failed++;
  }
  for (const path of unknown) {
    process.stdout.write(`\n== ${path}: not in git, removing it\n`);
    if (warden(['rm', path], root).status !== 0) failed++;
  }
} finally { rmSync(tmp, { recursive: true, force: true }); }
const left = git(['status', '--porcelain', '--', ...DIRS], root).trim();
process.stdout.write(left
  ? `\nstill different from the committed state: approve the pending requests at a terminal ('warden approve ID'), or run this again at a terminal:\n${left}\n`
  : '\nthe example root matches its committed state again\n');
process.exit(left || failed ? 1 : 0);
