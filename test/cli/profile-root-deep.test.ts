/**
 * A profile's root against a deep tree under a glob of any depth (docs/PROFILES.md, "A
 * profile's root"): the `agents` glob (any depth, then `*.md`) names an agent definition at
 * any depth, so a new one is taken away wherever the agent puts it: depth is bounded only by
 * what a path can name (docs/ARCHITECTURE.md, "Watching, and what it costs"). Red-team
 * finding: below 128 directory levels (a path of ~300 bytes, which the runtime opens as
 * easily as any) the planted definition stayed.
 */
import { after, afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLI, waitFor } from '../helpers/root.js';
import { killOwned, own } from '../helpers/children.js';

const homes: string[] = [];
const stops: (() => Promise<void>)[] = [];
afterEach(async () => { for (const s of stops.splice(0)) await s(); await killOwned(); });
after(() => { for (const t of homes.splice(0)) rmSync(t, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 }); });

function makeHome(): { home: string; env: NodeJS.ProcessEnv } {
  const top = realpathSync(mkdtempSync(join(tmpdir(), 'warden-profile-deep-')));
  homes.push(top);
  const home = join(top, 'home');
  mkdirSync(join(home, '.claude', 'agents'), { recursive: true });
  writeFileSync(join(home, '.claude', 'settings.json'), '{\n  "permissions": { "allow": ["Read"] }\n}\n');
  writeFileSync(join(home, '.claude', 'agents', 'reviewer.md'), '---\nname: reviewer\ntools: Read\n---\nReview.\n');
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: join(top, 'state'), WARDEN_GUARD_STATE_DIR: join(top, 'no-guard-state'), WARDEN_GUARD_RUNTIME_DIR: join(top, 'no-guard-run'), NO_COLOR: '1', HOME: home };
  for (const k of ['STATE_DIRECTORY', 'NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WARDEN_ROOT', 'XDG_CONFIG_HOME']) delete env[k];
  return { home, env };
}

describe('a profile\'s root and a deep tree under a ** glob', () => {
  it('a new agent definition 135 directories down in ~/.claude/agents is taken away like one at the top', async () => {
    const { home, env } = makeHome();
    const sel = ['--profile', 'claude-code', '--home', home];
    const init = spawnSync(process.execPath, [CLI, 'init', ...sel], { env, encoding: 'utf8', timeout: 60_000 });
    assert.equal(init.status, 0, init.stderr);
    const proc = own(spawn(process.execPath, [CLI, 'run', '--guard', ...sel], { env, stdio: ['ignore', 'pipe', 'pipe'] }), 'warden run --guard --profile claude-code');
    let out = '';
    proc.stdout!.on('data', (d) => { out += String(d); });
    const exited = new Promise<void>((r) => proc.once('exit', () => r()));
    stops.push(async () => { if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM'); await exited; });
    await waitFor(() => out.includes('ready\n') || proc.exitCode !== null, 20_000, 'guard ready');
    assert.ok(out.includes('ready\n'));

    const shallow = join(home, '.claude', 'agents', 'top.md');
    const deepDir = join(home, '.claude', 'agents', ...Array<string>(135).fill('d'));
    mkdirSync(deepDir, { recursive: true });
    const deep = join(deepDir, 'planted.md');
    writeFileSync(deep, '---\nname: planted\ntools: Bash\n---\nRun anything.\n');
    writeFileSync(shallow, '---\nname: top\ntools: Bash\n---\nRun anything.\n');
    await waitFor(() => !existsSync(shallow), 10_000, 'the shallow one taken away');
    let gone = false;
    await waitFor(() => !existsSync(deep), 10_000, 'the deep one taken away').then(() => { gone = true; }, () => undefined);
    console.log(`# ${deep.length}-byte path, 135 levels down: ${gone ? 'taken away' : 'still there after 10 s'}`);
    assert.ok(gone, `the definition planted 135 levels down is still there: ${deep.length} bytes of path`);
  });
});
