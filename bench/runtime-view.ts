/**
 * The runtime's approved view (docs/CONTRACT.md §Runtime view, docs/RUNTIME.md), measured:
 *   - latency: N sanctioned `warden apply`s against a running guard; for each, the time to
 *     the view's 'change' from the moment the new file was installed (its ctime), from the
 *     start of the baseline commit (the manifest's `updated`: includes the commit's own
 *     fsyncs), and from spawning the command (includes node's start-up);
 *   - storm: an attacker process writes widened org/guest files and half-switched
 *     credentials for SECONDS while the view is sampled on every event-loop turn; the count
 *     of samples that are not the approved state must be 0.
 * The view is the library a runtime imports (dist/src/runtime); warden runs as its CLI.
 * Usage: node dist/bench/runtime-view.js [N=30] [SECONDS=10]
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstatSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openApprovedView, type ApprovedState } from '../src/runtime/index.js';
import { CLI, cleanupTemps, log, makeRoot, startReady, summary, timed, track, waitFor, wardenSync, wardenToml } from './lib.js';

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const USED = ['blocks/conditional/nsfw.md', 'config/conditions.toml', 'config/credentials.toml', 'config/guests.toml', 'config/warden.toml', 'orgs/bookclub.toml'];

const WRITER = `
const fs = require('node:fs'); const path = require('node:path');
const [root, ms] = [process.argv[1], Number(process.argv[2])];
const p = (r) => path.join(root, r);
const org = fs.readFileSync(p('orgs/bookclub.toml'), 'utf8').replace(/^folders = \\[/m, 'folders = ["/memories/widened/", ');
const guests = 'channels = ["555555555555555555"]\\nfolders = ["/workspace/"]\\n';
const creds = fs.readFileSync(p('config/credentials.toml'), 'utf8').replace(/token = "[^"]*"/, 'token = "MTExMTExMTExMTExMTExMTEx.HALF00.switched"');
const end = Date.now() + ms; let writes = 0, i = 0;
while (Date.now() < end) {
  try {
    switch (i++ % 3) {
      case 0: fs.writeFileSync(p('orgs/bookclub.toml'), org); break;
      case 1: fs.writeFileSync(p('config/.g.tmp'), guests); fs.renameSync(p('config/.g.tmp'), p('config/guests.toml')); break;
      case 2: fs.writeFileSync(p('config/credentials.toml'), creds); break;
    }
    writes++;
  } catch { /* reverted meanwhile */ }
}
process.stdout.write(String(writes));
`;

export async function runtimeViewBench(n: number, seconds: number): Promise<Record<string, unknown>> {
  const r = makeRoot('runtime', () => wardenToml({}));
  if (wardenSync(r, ['init']).code !== 0) throw new Error('init failed');
  const guard = await startReady(process.execPath, [CLI, 'run', '--guard', '--root', r.root], r.env);
  const view = openApprovedView(r.root, { deployment: { runtimeDir: join(r.base, 'none-run'), stateDir: join(r.base, 'none-state') } });
  try {
    await view.ready();
    // Storm first, at generation 1.
    const approved: Record<string, string> = {};
    for (const p of USED) approved[p] = sha(readFileSync(r.p(p)));
    let samples = 0, unapproved = 0, closed = 0;
    const see = (s: ApprovedState) => {
      samples++;
      if (!s.ok) { closed++; return; }
      if (USED.some((p) => s.files[p] !== approved[p]) || Object.keys(s.files).length !== USED.length) unapproved++;
    };
    let sampling = true;
    const turn = () => { if (!sampling) return; see(view.current()); setImmediate(turn); };
    setImmediate(turn);
    const w = track(spawn(process.execPath, ['-e', WRITER, r.root, String(seconds * 1000)], { stdio: ['ignore', 'pipe', 'inherit'] }));
    let out = '';
    w.stdout!.on('data', (d) => { out += String(d); });
    await new Promise((res) => w.once('exit', res));
    await waitFor(() => USED.every((p) => sha(readFileSync(r.p(p))) === approved[p]), 30_000, 'the guard to restore every file');
    sampling = false;
    const storm = { seconds, attackerWrites: Number(out), samples, unapproved, closed };
    log(`runtime storm: ${JSON.stringify(storm)}`);

    // Then N sanctioned applies.
    const fromCommit: number[] = [];
    const fromInstall: number[] = [];
    const fromSpawn: number[] = [];
    const base = readFileSync(r.p('orgs/bookclub.toml'), 'utf8');
    for (let i = 0; i < n; i++) {
      const gen = view.current().generation as number;
      const file = join(r.base, `org-${i}.toml`);
      writeFileSync(file, base.replace(/^hourly_cap = \d+/m, `hourly_cap = ${21 + i}`));
      const t0 = performance.now();
      const changed = new Promise<void>((res) => {
        const on = (s: ApprovedState) => {
          if (s.generation !== gen + 1) return;
          fromSpawn.push(performance.now() - t0);
          const now = Date.now();
          fromCommit.push(now - Date.parse(JSON.parse(readFileSync(r.p('snapshots/manifest.json'), 'utf8')).updated));
          // The rename that installs the file sets its ctime: the approved state is complete on disk from then on.
          fromInstall.push(now - lstatSync(r.p('orgs/bookclub.toml')).ctimeMs);
          view.off('change', on);
          res();
        };
        view.on('change', on);
      });
      await timed(process.execPath, [CLI, 'apply', 'orgs/bookclub.toml', '--from', file, '--root', r.root], r.env);
      await Promise.race([changed, new Promise((_, rej) => setTimeout(() => rej(new Error(`apply ${i} did not reach the view in 10 s`)), 10_000))]);
    }
    const latency = { applies: n, installedToChangeMs: summary(fromInstall), commitToChangeMs: summary(fromCommit), spawnToChangeMs: summary(fromSpawn) };
    log(`runtime latency: ${JSON.stringify(latency)}`);
    return { storm, latency };
  } finally {
    await view.close();
    await guard.stop();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.dirname, 'runtime-view.js')) {
  runtimeViewBench(Number(process.argv[2] ?? 30), Number(process.argv[3] ?? 10)).then((res) => {
    process.stdout.write(JSON.stringify(res, null, 2) + '\n');
    cleanupTemps();
    process.exit((res.storm as { unapproved: number }).unapproved === 0 ? 0 : 1);
  }, (err) => { log(`runtime-view bench failed: ${(err as Error).stack ?? String(err)}`); cleanupTemps(); process.exit(1); });
}
