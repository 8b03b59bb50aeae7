/** Helpers for the sanctioned-change tests: the real CLI without a controlling terminal, two-file credential roots. */
import { spawn, spawnSync } from 'node:child_process';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, CLI, makeRoot, TEST_WARDEN_TOML, type CliResult, type TestRoot } from '../helpers/root.js';
import { own } from '../helpers/children.js';

export { REPO };

/**
 * Run the CLI in a new session (detached): it has no controlling terminal, so /dev/tty
 * cannot be opened and nothing can block on a prompt, whatever terminal runs the tests.
 */
export function run(t: TestRoot, args: string[], opts: { input?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return new Promise((resolve) => {
    const p = own(spawn(process.execPath, [CLI, ...args, '--root', t.root], { env: { ...t.env, ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'], detached: true }), `warden ${args.join(' ')}`);
    let stdout = '', stderr = '';
    p.stdout!.on('data', (d) => { stdout += String(d); });
    p.stderr!.on('data', (d) => { stderr += String(d); });
    p.stdin!.on('error', () => {});
    p.stdin!.end(opts.input ?? '');
    const timer = setTimeout(() => p.kill('SIGKILL'), 60_000);
    p.once('exit', (code) => { clearTimeout(timer); resolve({ code: code ?? -1, stdout, stderr }); });
  });
}

/** A proposal file for `org` (beside the root) with its hourly_cap set to `cap`. */
export function capProposal(t: TestRoot, cap: number, org = 'orgs/bookclub.toml'): string {
  const p = join(t.base, `org-${cap}.toml`);
  writeFileSync(p, readFileSync(t.p(org), 'utf8').replace(/hourly_cap = \d+/, `hourly_cap = ${cap}`));
  return p;
}

/**
 * After a sanctioned-change test: no credential value anywhere it must not be (the
 * outputs, alerts.jsonl, the daemon's logs, the history), read loudly.
 */
export function assertNoSecretLeaked(t: TestRoot, secrets: readonly string[], texts: readonly string[]): void {
  const alerts = existsSync(t.p('snapshots/alerts.jsonl')) ? readFileSync(t.p('snapshots/alerts.jsonl'), 'utf8') : '';
  const everything = [...texts, alerts, gitLog(t)].join('\n');
  for (const s of secrets) assert.ok(!everything.includes(s), 'no credential value leaked');
}

export function wardenToml(opts: { approval?: string; ttl?: number; twoFiles?: boolean; extra?: string } = {}): string {
  let s = TEST_WARDEN_TOML.replace('approval = "none"', `approval = "${opts.approval ?? 'none'}"`);
  if (opts.ttl) s = s.replace(/^(approval = .*)$/m, `$1\napproval_ttl_seconds = ${opts.ttl}`);
  if (opts.twoFiles) s = s.replace('files = ["config/credentials.toml"]', 'files = ["config/credentials.toml", "config/discord-app.toml"]');
  // owner-code needs a channel that can carry the code (docs/CONTRACT.md §Changes); no notifier runs in these tests.
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

/** The store's whole history (git log -p --all); a history git cannot read fails loudly. */
export function gitLog(t: TestRoot): string {
  const r = spawnSync('git', ['-C', t.p('snapshots/history'), 'log', '-p', '--all'], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git log in ${t.p('snapshots/history')} failed (${r.status}): ${r.stderr}`);
  return r.stdout;
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
