/**
 * `warden desktop` (the owner's user unit): the real command, with a stand-in journalctl
 * (prints journal entries as `journalctl -o json` does, records its arguments) and a
 * recording notify-send first on PATH. Only the guard's genuine entries for this root pop
 * up (trusted _SYSTEMD_UNIT and _UID); a restart resumes after the saved cursor.
 * The real journald and user manager: test/systemd/run.sh.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, waitFor } from '../helpers/root.js';
import { parseFeedLine } from '../../src/notifier/journal-feed.js';
import type { Alert } from '../../src/store/alert-types.js';

const dir = mkdtempSync(join(tmpdir(), 'warden-desktop-'));
const bin = join(dir, 'bin');
mkdirSync(bin);
const children: ChildProcess[] = [];
after(() => { for (const c of children) if (c.exitCode === null) c.kill('SIGKILL'); rmSync(dir, { recursive: true, force: true }); });

const ROOT_ID = '0123456789abcdef';
const UID = process.getuid?.() ?? 0;
const alert = (id: string, path: string): Alert => ({ id, time: '2026-12-01T21:00:00.000Z', path, action: 'reverted', reason: 'content', before: null, after: null, quarantine: null, advice: 'use warden edit' });
const entry = (cursor: string, a: Alert, over: Record<string, string> = {}) => JSON.stringify({
  __CURSOR: cursor, _SYSTEMD_UNIT: 'warden-guard.service', _UID: String(UID), WARDEN_ROOT_ID: ROOT_ID,
  MESSAGE: `warden: reverted ${a.path}`, WARDEN_PATH: a.path, WARDEN_ALERT: JSON.stringify(a), ...over,
});

// journalctl stand-in: records its argv, prints the entries after --after-cursor, then waits.
writeFileSync(join(dir, 'entries.jsonl'), [
  entry('c1', alert('a1', 'config/conditions.toml')),
  entry('c2', alert('forged', 'orgs/forged.toml'), { _SYSTEMD_UNIT: 'user@1000.service' }),
  entry('c3', alert('other-uid', 'orgs/uid.toml'), { _UID: String(UID + 1) }),
  entry('c4', alert('other-root', 'orgs/root.toml'), { WARDEN_ROOT_ID: 'ffffffffffffffff' }),
].join('\n') + '\n');
writeFileSync(join(bin, 'journalctl'), `#!/bin/sh
printf '%s\\n' "$*" >> "${dir}/journalctl.args"
after=$(printf '%s\\n' "$@" | sed -n 's/^--after-cursor=//p')
if [ -n "$after" ]; then sed -n "/\\"__CURSOR\\":\\"$after\\"/,\\$p" "${dir}/entries.jsonl" | tail -n +2; else cat "${dir}/entries.jsonl"; fi
exec sleep 3600
`);
// notify-send stand-in: one line per call, its arguments.
writeFileSync(join(bin, 'notify-send'), `#!/bin/sh\nprintf '%s|' "$@" >> "${dir}/notify-send.calls"; echo >> "${dir}/notify-send.calls"\n`);
chmodSync(join(bin, 'journalctl'), 0o755);
chmodSync(join(bin, 'notify-send'), 0o755);

function start(): { proc: ChildProcess; err: () => string } {
  const proc = spawn(process.execPath, [CLI, 'desktop', '--root-id', ROOT_ID, '--guard-user', String(UID)], {
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, XDG_STATE_HOME: join(dir, 'state'), STATE_DIRECTORY: '' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(proc);
  let err = '';
  proc.stderr!.on('data', (d) => { err += String(d); });
  return { proc, err: () => err };
}
const calls = () => (existsSync(join(dir, 'notify-send.calls')) ? readFileSync(join(dir, 'notify-send.calls'), 'utf8').split('\n').filter(Boolean) : []);
const stop = async (p: ChildProcess) => { const e = new Promise((r) => p.once('exit', r)); p.kill('SIGTERM'); await e; };

test('parseFeedLine takes only the guard unit\'s, the guard uid\'s entries for this root', () => {
  const src = { unit: 'warden-guard.service', uid: UID, rootId: ROOT_ID };
  assert.equal(parseFeedLine(entry('c1', alert('a1', 'x')), src)?.alert?.id, 'a1');
  assert.equal(parseFeedLine(entry('c2', alert('a2', 'x'), { _SYSTEMD_UNIT: 'user@1000.service' }), src)?.alert, null);
  assert.equal(parseFeedLine(entry('c3', alert('a3', 'x'), { WARDEN_ALERT: '{not json' }), src)?.alert, null);
  assert.equal(parseFeedLine('garbage', src), null);
});

test('warden desktop shows the genuine alert with notify-send, not the forged ones, and resumes after its cursor', async () => {
  const a = start();
  await waitFor(() => calls().length >= 1, 15_000, 'a notify-send call');
  const args = readFileSync(join(dir, 'journalctl.args'), 'utf8');
  assert.match(args, /--follow --output=json .*--lines=0 _SYSTEMD_UNIT=warden-guard\.service _UID=\d+ WARDEN_ROOT_ID=0123456789abcdef/);
  await waitFor(() => existsSync(join(dir, 'state', 'warden', `desktop-${ROOT_ID}.cursor`)), 5000, 'the cursor file');
  const [call] = calls();
  assert.match(call!, /config\/conditions\.toml/);
  assert.match(call!, /critical/);
  assert.doesNotMatch(calls().join('\n'), /forged|uid\.toml|root\.toml/);
  await waitFor(() => readFileSync(join(dir, 'state', 'warden', `desktop-${ROOT_ID}.cursor`), 'utf8').trim() === 'c4', 5000, 'the cursor to reach the last entry read');
  await stop(a.proc);

  // A new entry while it was down: the restart shows it, and only it.
  writeFileSync(join(dir, 'entries.jsonl'), readFileSync(join(dir, 'entries.jsonl'), 'utf8') + entry('c5', alert('a5', 'orgs/bookclub.toml')) + '\n');
  const b = start();
  await waitFor(() => calls().length >= 2, 15_000, 'the second notify-send call');
  assert.match(readFileSync(join(dir, 'journalctl.args'), 'utf8').split('\n').filter(Boolean).pop()!, /--after-cursor=c4 /);
  assert.match(calls()[1]!, /orgs\/bookclub\.toml/);
  await stop(b.proc);
  assert.equal(calls().length, 2, 'nothing shown twice');
});
