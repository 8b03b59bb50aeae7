/** Helpers for the sanctioned-change tests: the real CLI without a controlling terminal, two-file credential roots. */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, CLI, makeRoot, TEST_WARDEN_TOML, type CliResult, type TestRoot } from '../helpers/root.js';

export { REPO };

/**
 * Run the CLI in a new session (detached): it has no controlling terminal, so /dev/tty
 * cannot be opened and nothing can block on a prompt, whatever terminal runs the tests.
 */
export function run(t: TestRoot, args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [CLI, ...args, '--root', t.root], { env: { ...t.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    let stdout = '', stderr = '';
    p.stdout!.on('data', (d) => { stdout += String(d); });
    p.stderr!.on('data', (d) => { stderr += String(d); });
    p.stdin!.on('error', () => {});
    p.stdin!.end(opts.input ?? '');
    const timer = setTimeout(() => p.kill('SIGKILL'), 60_000);
    p.once('exit', (code) => { clearTimeout(timer); resolve({ code: code ?? -1, stdout, stderr }); });
  });
}

export function wardenToml(opts: { approval?: string; ttl?: number; twoFiles?: boolean; extra?: string } = {}): string {
  let s = TEST_WARDEN_TOML.replace('approval = "none"', `approval = "${opts.approval ?? 'none'}"`);
  if (opts.ttl) s = s.replace(/^(approval = .*)$/m, `$1\napproval_ttl_seconds = ${opts.ttl}`);
  if (opts.twoFiles) s = s.replace('files = ["config/credentials.toml"]', 'files = ["config/credentials.toml", "config/discord-app.toml"]');
  // owner-code needs a channel that can carry the code (SPEC §8); no notifier runs in these tests.
  if (opts.approval === 'owner-code' && !/\[notify\.discord\]/.test(opts.extra ?? '')) s += '\n[notify.discord]\ntoken_file = "/nonexistent/warden-test-discord-token"\n';
  return s + (opts.extra ?? '');
}

/** A root whose discord group is split: the token in credentials.toml, the application id in discord-app.toml. */
export function makeTwoFileRoot(opts: { approval?: string } = {}): TestRoot {
  const t = makeRoot({ wardenToml: wardenToml({ ...opts, twoFiles: true }) });
  const cred = readFileSync(t.p('config/credentials.toml'), 'utf8').replace(/^application_id = .*\n/m, '');
  writeFileSync(t.p('config/credentials.toml'), cred);
  writeFileSync(t.p('config/discord-app.toml'), '# the application id of the bot\n[discord]\napplication_id = "111111111111111111"\n', { mode: 0o600 });
  chmodSync(t.p('config/credentials.toml'), 0o600);
  return t;
}

/** A value pair that satisfies the discord-token check. */
export function discordPair(seed: string): { token: string; application_id: string } {
  const app = (seed.replace(/\D/g, '') + '424242424242424242').slice(0, 18);
  return { application_id: app, token: `${Buffer.from(app).toString('base64')}.${seed}X.secret-${seed}-value` };
}

export function gitLog(t: TestRoot): string {
  const r = spawnSyncGit(t);
  return r;
}

import { spawnSync } from 'node:child_process';
function spawnSyncGit(t: TestRoot): string {
  return spawnSync('git', ['-C', t.p('snapshots/history'), 'log', '-p', '--all'], { encoding: 'utf8' }).stdout;
}

export function outboxCodes(t: TestRoot): { id: string; text: string; code: string; request: string }[] {
  let raw = '';
  // No outbox yet is "no codes"; any other read error is a failure, not an empty list.
  try { raw = readFileSync(join(t.root, 'snapshots/outbox/messages.jsonl'), 'utf8'); } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  return raw.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { id: string; text: string }).map((m) => {
    const c = /one-time code (\d+) approves request ([a-z0-9]+)/.exec(m.text);
    return { id: m.id, text: m.text, code: c?.[1] ?? '', request: c?.[2] ?? '' };
  });
}
