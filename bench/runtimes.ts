/**
 * `npm run bench`, section: the agent runtimes' files (see bench/run.ts; docs/BENCHMARKS.md,
 * "What each number means", Runtimes). A profile's root (`warden init --profile claude-code
 * --home H`), each number beside its reference in the same run:
 *   - revert of ~/.claude/settings.json (JSON: compared key by key, the grant said in the
 *     alert) beside the floor reverter on a copy of the same file, alternating;
 *   - `warden init --profile claude-code` on a lived-in home of about 5,000 files, beside
 *     `find` listing the runtime's directory and `warden --version` (the process's start);
 *   - `warden check --profile NAME` with the runtime's own check (Codex, Claude Code), the
 *     check's own time (its verdict's durationMs) shown apart from warden's part.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { BENCH_DIST, log, median, newTempDir, sleep, startReady, summary, timed, type Proc } from './lib.js';
import { N_REVERT, RUNS, type Json, node, warden } from './config.js';
import { RevertObserver } from './revert.js';
import { cachedPackages, runtimesCache } from '../src/validators/index.js';

const SETTINGS = (extra: string[]) => `${JSON.stringify({
  permissions: { allow: ['Read', 'Bash(git status)', 'Bash(npm test:*)', ...extra], deny: ['Bash(rm:*)', 'Read(./.env)'], defaultMode: 'default' },
  env: { DISABLE_TELEMETRY: '1' },
  includeCoAuthoredBy: false,
}, null, 2)}\n`;

interface Home { base: string; home: string; env: NodeJS.ProcessEnv }

/** A temp home with its own state directory; the runtimes cache stays this user's. */
function makeHome(name: string): Home {
  const base = newTempDir(name);
  const home = join(base, 'home');
  mkdirSync(home, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_STATE_HOME: join(base, 'state'), WARDEN_GUARD_STATE_DIR: join(base, 'no-guard-state'), WARDEN_GUARD_RUNTIME_DIR: join(base, 'no-guard-run'), NO_COLOR: '1', WARDEN_RUNTIMES_CACHE: runtimesCache(homedir()) };
  for (const k of ['STATE_DIRECTORY', 'NOTIFY_SOCKET', 'WATCHDOG_USEC', 'WATCHDOG_PID', 'WARDEN_ROOT', 'XDG_CONFIG_HOME']) delete env[k];
  return { base, home, env };
}

function put(root: string, rel: string, text: string): void {
  const p = join(root, rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, text);
}

/** A home as a Claude Code user's looks after some months: returns the number of files written. */
export function livedInHome(home: string, files = 5000): number {
  let n = 0;
  const w = (rel: string, text: string) => { put(home, rel, text); n++; };
  w('.claude/settings.json', SETTINGS([]));
  w('.claude/settings.local.json', SETTINGS(['Bash(make:*)']));
  w('.claude.json', '{"numStartups": 212, "projects": {}}\n');
  w('.claude/.credentials.json', '{"claudeAiOauth":{"accessToken":"bench-not-a-token"}}\n');
  for (let i = 0; i < 20; i++) w(`.claude/agents/agent-${i}.md`, `---\nname: agent-${i}\ntools: Read, Grep\n---\nDo task ${i}.\n`);
  for (let i = 0; i < 20; i++) w(`.claude/commands/cmd-${i}.md`, `---\ndescription: command ${i}\n---\nRun step ${i}.\n`);
  for (let i = 0; i < 10; i++) w(`.claude/skills/skill-${i}/SKILL.md`, `---\nname: skill-${i}\ndescription: skill ${i}\n---\nHow to ${i}.\n`);
  // The runtime's own files beside them: transcripts, todos, shell snapshots (about half the home).
  const line = `${JSON.stringify({ type: 'assistant', message: 'x'.repeat(200) })}\n`;
  for (let i = 0; n < files / 2; i++) w(`.claude/projects/-home-u-proj-${i % 40}/${randomBytes(8).toString('hex')}.jsonl`, line.repeat(4));
  for (let i = 0; i < 200; i++) w(`.claude/todos/${i}.json`, '[]\n');
  for (let i = 0; i < 100; i++) w(`.claude/shell-snapshots/snapshot-${i}.sh`, 'export PATH=/usr/bin\n');
  // The rest of the home: source trees and caches warden never looks at.
  for (let i = 0; n < files; i++) w(`src/app-${i % 25}/lib/mod-${i}.ts`, `export const v${i} = ${i};\n`);
  return n;
}

/** Revert of the JSON settings file of a profile's root, beside the floor on a copy. */
async function jsonRevert(): Promise<Json> {
  const h = makeHome('rt-revert');
  const approved = Buffer.from(SETTINGS([]));
  put(h.home, '.claude/settings.json', approved.toString());
  const sel = ['--profile', 'claude-code', '--home', h.home];
  await timed(node, warden(['init', ...sel]), h.env);
  const floorDir = join(h.base, 'floor');
  mkdirSync(floorDir);
  const floorFile = join(floorDir, 'settings.json');
  writeFileSync(floorFile, approved);
  const procs: Proc[] = [];
  try {
    procs.push(await startReady(node, warden(['run', '--guard', ...sel]), h.env));
    procs.push(await startReady(node, [join(BENCH_DIST, 'floor.js'), floorFile], h.env));
    const targets = { warden: new RevertObserver(join(h.home, '.claude', 'settings.json'), approved), floor: new RevertObserver(floorFile, approved) };
    const lat: Record<'warden' | 'floor', number[]> = { warden: [], floor: [] };
    let timeouts = 0;
    const WARMUP = 20;
    try {
      for (let i = -WARMUP; i < N_REVERT; i++) {
        const order: ('warden' | 'floor')[] = i % 2 ? ['warden', 'floor'] : ['floor', 'warden'];
        for (const who of order) {
          // The agent's grant, each one different: parsed, compared key by key and named in the alert.
          const bad = Buffer.from(SETTINGS([`Bash(curl:* #${randomBytes(6).toString('hex')})`]));
          const ms = await targets[who].attack(bad);
          if (Number.isNaN(ms)) { timeouts++; log(`runtimes: ${who} write ${i} not reverted within 5 s`); }
          else if (i >= 0) lat[who].push(ms);
          await sleep(40);
        }
        if (i > 0 && i % 100 === 0) log(`runtimes: JSON revert ${i}/${N_REVERT}`);
      }
    } finally {
      targets.warden.close();
      targets.floor.close();
    }
    const w = summary(lat.warden);
    const fl = summary(lat.floor);
    return {
      writes: N_REVERT, warmup: WARMUP, timeouts, warden: w, floor: fl,
      ratio: { p50: w.p50 / fl.p50, p90: w.p90 / fl.p90, p99: w.p99 / fl.p99, max: w.max / fl.max },
      met: { p50: w.p50 / fl.p50 <= 1.5, p99: w.p99 / fl.p99 <= 2 },
    };
  } finally {
    for (const p of procs) await p.stop();
  }
}

/** `warden init --profile claude-code` on a lived-in home (a fresh state directory each run), beside `find` over ~/.claude. */
async function profileInit(): Promise<Json> {
  const h = makeHome('rt-init');
  const files = livedInHome(h.home);
  const initMs: number[] = [];
  const findMs: number[] = [];
  const startMs: number[] = [];
  let guarded = 0;
  for (let i = 0; i < RUNS; i++) {
    const env = { ...h.env, XDG_STATE_HOME: join(h.base, `state-${i}`) };
    const r = await timed(node, warden(['init', '--profile', 'claude-code', '--home', h.home, '--json']), env);
    initMs.push(r.ms);
    guarded = (JSON.parse(r.stdout) as { files: string[] }).files.length;
    findMs.push((await timed('find', [join(h.home, '.claude'), '-type', 'f'], env)).ms);
    startMs.push((await timed(node, warden(['--version']), env)).ms);
  }
  log(`runtimes: init --profile claude-code ${median(initMs).toFixed(0)} ms (${guarded} guarded of ${files} files in the home)`);
  return { homeFiles: files, guarded, runs: RUNS, initMs: median(initMs), initRuns: initMs, findMs: median(findMs), versionMs: median(startMs), ratioToFind: median(initMs) / median(findMs) };
}

/** `warden check --profile NAME --home H` with the runtime's check, median of RUNS; the check's own time from its verdict. */
async function checkWithRuntime(runtime: string, pkg: string, rel: string, text: string): Promise<Json> {
  const cache = runtimesCache(homedir());
  if (cachedPackages(cache, pkg).length === 0) return { skipped: `${pkg} is not in the runtimes cache (${cache}): run npm run test:runtimes once` };
  const h = makeHome(`rt-check-${runtime}`);
  put(h.home, rel, text);
  const total: number[] = [];
  const own: number[] = [];
  let status = '';
  for (let i = 0; i < RUNS; i++) {
    const r = await timed(node, warden(['check', '--profile', runtime, '--home', h.home, '--json']), h.env, [0, 1]);
    const doc = JSON.parse(r.stdout) as { files: { validators: { status: string; durationMs: number }[] }[] };
    const v = doc.files.flatMap((f) => f.validators);
    status = v.map((x) => x.status).join(',');
    total.push(r.ms);
    own.push(v.reduce((s, x) => s + x.durationMs, 0));
  }
  const t = median(total);
  const o = median(own);
  log(`runtimes: check --profile ${runtime} ${t.toFixed(0)} ms, of which the runtime's check ${o.toFixed(0)} ms (${status})`);
  return { runs: RUNS, totalMs: t, validatorMs: o, wardenMs: t - o, status, totalRuns: total, validatorRuns: own };
}

export async function runtimesSection(): Promise<Json> {
  const out: Json = {};
  out.jsonRevert = await jsonRevert();
  out.init = await profileInit();
  out.checkCodex = await checkWithRuntime('codex', '@openai/codex', '.codex/config.toml', 'model = "gpt-5-codex"\napproval_policy = "on-request"\nsandbox_mode = "workspace-write"\n');
  out.checkClaude = await checkWithRuntime('claude-code', '@anthropic-ai/claude-code', '.claude/settings.json', SETTINGS([]));
  return out;
}
