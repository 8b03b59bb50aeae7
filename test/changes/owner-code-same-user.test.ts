/**
 * owner-code against an agent that runs as the owner (docs/CHANGES.md, "owner-code"): as
 * a login account (uid in the login range), with no terminal, a script proposes a change,
 * reads every file warden wrote that this account can read, and tries every 8-digit number
 * it found as the code. The change must never be applied: owner-code is refused up front
 * in such a store (the request falls back to a y/N on a terminal, which the script lacks).
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FIXTURE } from '../helpers/root.js';
import { readableRepo } from '../helpers/readable-copy.js';
import { wardenToml } from './helpers.js';

const UID = 54_000 + (process.pid % 1000); // a login-range uid (UID_MIN is 1000 here)
const ORG = 'orgs/bookclub.toml';
const isRoot = process.geteuid?.() === 0;
const hasSetpriv = spawnSync('setpriv', ['--version']).status === 0 && spawnSync('setsid', ['--version']).status === 0;

const base = mkdtempSync(join(tmpdir(), 'warden-same-user-'));
after(() => rmSync(base, { recursive: true, force: true }));

function chownR(p: string): void {
  chownSync(p, UID, UID);
  for (const e of readdirSync(p, { withFileTypes: true })) {
    const q = join(p, e.name);
    if (e.isDirectory()) chownR(q); else chownSync(q, UID, UID);
  }
}

/** The CLI as the owner's own account, in a new session (no controlling terminal), stdin a pipe. */
function asOwner(args: string[], input = ''): { code: number; stdout: string; stderr: string } {
  const cli = join(readableRepo(), 'dist', 'src', 'cli', 'main.js');
  const r = spawnSync('setsid', ['-w', 'setpriv', `--reuid=${UID}`, `--regid=${UID}`, '--clear-groups', process.execPath, cli, ...args, '--root', join(base, 'root')], {
    input, encoding: 'utf8', timeout: 60_000,
    env: { PATH: process.env.PATH, HOME: join(base, 'home'), XDG_STATE_HOME: join(base, 'home', '.local', 'state'), NO_COLOR: '1' },
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Every 8-digit number in every file this account can read under `dir` (read as that account). */
function codesReadableByOwner(dir: string): string[] {
  const script = String.raw`
import os, re, sys
found = set()
for top, dirs, files in os.walk(sys.argv[1]):
    for f in files:
        try:
            data = open(os.path.join(top, f), 'rb').read()
        except OSError:
            continue
        found.update(m.decode() for m in re.findall(rb'(?<!\d)\d{8}(?!\d)', data))
print('\n'.join(sorted(found)))
`;
  const r = spawnSync('setpriv', [`--reuid=${UID}`, `--regid=${UID}`, '--clear-groups', '/usr/bin/python3', '-c', script, dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter(Boolean);
}

describe('owner-code and an agent running as the owner', { skip: !isRoot ? 'needs root to run as another uid' : !hasSetpriv ? 'needs setpriv and setsid' : false }, () => {
  it('a script with no terminal, reading every file warden wrote that it can read, cannot approve its own change', () => {
    chmodSync(base, 0o755);
    const root = join(base, 'root');
    mkdirSync(join(base, 'home'), { recursive: true });
    mkdirSync(root);
    for (const d of ['config', 'orgs', 'blocks']) cpSync(join(FIXTURE, d), join(root, d), { recursive: true });
    writeFileSync(join(root, 'config', 'warden.toml'), wardenToml({ approval: 'owner-code' }));
    chownR(base);
    const init = asOwner(['init']);
    assert.equal(init.code, 0, init.stderr);

    const before = readFileSync(join(root, ORG), 'utf8');
    const proposal = join(base, 'home', 'next.toml');
    writeFileSync(proposal, before.replace(/hourly_cap = \d+/, 'hourly_cap = 666'));
    chownSync(proposal, UID, UID);
    const a = asOwner(['apply', ORG, '--from', proposal, '--json']);
    assert.equal(a.code, 0, a.stdout + a.stderr);
    const id = (JSON.parse(a.stdout) as { pending?: { id: string } }).pending?.id ?? '';
    assert.ok(id, `a pending request: ${a.stdout}`);

    const codes = codesReadableByOwner(base);
    const tried: string[] = [];
    for (const code of codes) {
      const r = asOwner(['approve', id, '--code', code]);
      tried.push(`${code}: exit ${r.code} ${r.stdout}${r.stderr}`);
      if (r.code === 0) break;
    }
    assert.doesNotMatch(readFileSync(join(root, ORG), 'utf8'), /hourly_cap = 666/, `the change the script asked for was applied:\n${tried.join('\n')}`);
    const list = asOwner(['approve', '--json']);
    const pending = JSON.parse(list.stdout || '[]') as { id: string; approval: string; notice?: string }[];
    const still = pending.find((p) => p.id === id);
    // owner-code was refused up front: the request waits for a y/N on a terminal, and says why.
    assert.equal(still?.approval, 'tty', list.stdout);
    assert.match(still?.notice ?? '', /owner-code.*refused.*login account.*docs\/DEPLOY\.md/s);
    const st = asOwner(['status']);
    assert.match(st.stdout + st.stderr, /approval = "owner-code" is refused here: the store belongs to uid \d+, a login account/);
  });
});
