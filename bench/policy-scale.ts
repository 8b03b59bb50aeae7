/**
 * `npm run bench`, section: policy at the seed's scale. Seed 002's 468 rules in
 * conditions.toml and a 600-folder guest allowlist (test/helpers/policy-scale.ts), each
 * beside its reference measured in the same run:
 *   - parse: warden's parseConditions (validation and every key's location included) beside
 *     smol-toml's bare parse of the same text, and beside warden's parse of the example's file;
 *   - canRead per call (468 rules, 600 folders, a guest) beside canRead on the example root;
 *   - `warden check` and `warden apply config/conditions.toml` (whole process, wall time) on
 *     such a root beside the example root;
 *   - a hot reload through `warden/runtime`: a running guard, a view in this process, an
 *     `apply` of the file; the longest event-loop stall of this process from the apply's spawn
 *     until the view adopted it (perf_hooks monitorEventLoopDelay, and a 1 ms timer's drift),
 *     beside the same for the example's file.
 * Each figure carries the 1-min load average at its start. Standalone:
 * node dist/bench/policy-scale.js (prints its rows and JSON).
 */
import { spawn } from 'node:child_process';
import { readFileSync as readFile, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parse as smolParse } from 'smol-toml';
import { buildPolicy, canRead, parseConditions, type SessionContext } from '../src/policy/index.js';
import { openApprovedView, type ApprovedState } from '../src/runtime/index.js';
import { SCALE_GUEST_CH, scaleConditions, scaleGuests } from '../test/helpers/policy-scale.js';
import { CLI, cleanupTemps, log, makeRoot, median, startReady, summary, timed, track, wardenSync, wardenToml, type BenchRoot } from './lib.js';
import type { Json } from './config.js';

const RULES = 468;
const FOLDERS = 600;
const load1 = (): number => loadavg()[0] as number;
const cpuMs = (): number => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; };

/** Median wall and CPU time (ms) of f over `runs` calls, each on a fresh input from make(i). */
function timeEach<T>(runs: number, make: (i: number) => T, f: (x: T) => void): { wallMs: number; cpuMs: number } {
  const wall: number[] = []; const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const x = make(i);
    const c0 = cpuMs(); const t0 = performance.now();
    f(x);
    wall.push(performance.now() - t0); cpu.push(cpuMs() - c0);
  }
  return { wallMs: median(wall), cpuMs: median(cpu) };
}

export function parseRows(): Json {
  const big = scaleConditions(RULES);
  const example = readFile(makeRoot('policy-example', () => wardenToml({})).p('config/conditions.toml'), 'utf8');
  const runs = 40;
  // Warm up both (JIT), then distinct texts (a trailing comment) so no cache serves a repeat.
  for (let i = 0; i < 5; i++) { parseConditions(`${big}# w${i}\n`); smolParse(`${big}# w${i}\n`); }
  const load = load1();
  const warden = timeEach(runs, (i) => `${big}# ${i}\n`, (t) => { if (parseConditions(t).status !== 'ok') throw new Error('scale text invalid'); });
  const smol = timeEach(runs, (i) => `${big}# ${i}\n`, (t) => { smolParse(t); });
  const ex = timeEach(runs, (i) => `${example}# ${i}\n`, (t) => { if (parseConditions(t).status !== 'ok') throw new Error('example invalid'); });
  const res = { rules: RULES, bytes: big.length, runs, load1: load, warden, smolToml: smol, example: { rules: (example.match(/^\[/gm) ?? []).length, ...ex }, ratioToSmol: warden.cpuMs / smol.cpuMs };
  log(`policy parse: ${JSON.stringify(res)}`);
  return res;
}

export function canReadRows(): Json {
  const big = buildPolicy([
    { path: 'config/conditions.toml', text: scaleConditions(RULES) },
    { path: 'config/guests.toml', text: scaleGuests(FOLDERS) },
    { path: 'config/warden.toml', text: wardenToml({}) },
    { path: 'blocks/conditional/nsfw.md', text: '+++\ndescription = "x"\n+++\n' },
  ]);
  if (big.errors.length) throw new Error(`scale policy invalid: ${big.errors[0]?.message}`);
  const exRoot = makeRoot('policy-canread', () => wardenToml({}));
  const exFiles = ['config/conditions.toml', 'config/guests.toml', 'config/warden.toml', 'orgs/bookclub.toml', 'blocks/conditional/nsfw.md'].map((p) => ({ path: p, text: readFile(exRoot.p(p), 'utf8') }));
  const ex = buildPolicy(exFiles);
  const guest: SessionContext = { kind: 'guild', guild: '5', channel: SCALE_GUEST_CH };
  const exGuest: SessionContext = { kind: 'guild', guild: '5', channel: '555555555555555555' };
  // Targets spread over the allowlist (granted, denied by a rule, not granted at all).
  const targets = Array.from({ length: 1000 }, (_, i) => `/${i % 2 ? 'workspace' : 'memories'}/${i % 3 ? `guest-${(i * 7) % FOLDERS}/n-${i}.md` : `team-${i % 97}/dir-${i}/x`}`);
  const exTargets = Array.from({ length: 1000 }, (_, i) => ['/workspace/public/a.md', '/workspace/bookclub/n.md', '/memories/private/x', `/workspace/public/d-${i}/f.md`][i % 4] as string);
  const perCall = (policy: typeof big.policy, ctx: SessionContext, ts: string[]): number => {
    let allowed = 0;
    for (let w = 0; w < 3; w++) for (const t of ts) if (canRead(policy, '42', ctx, t)) allowed++; // warm up
    const reps = 20;
    const samples: number[] = [];
    for (let r = 0; r < reps; r++) {
      const t0 = performance.now();
      for (const t of ts) if (canRead(policy, '42', ctx, t)) allowed++;
      samples.push(((performance.now() - t0) * 1000) / ts.length);
    }
    if (allowed === 0) throw new Error('nothing allowed: the bench is not measuring a real decision');
    return median(samples);
  };
  const load = load1();
  const bigUs = perCall(big.policy, guest, targets);
  const exUs = perCall(ex.policy, exGuest, exTargets);
  const res = { rules: RULES, folders: FOLDERS, load1: load, usPerCall: bigUs, exampleUsPerCall: exUs };
  log(`policy canRead: ${JSON.stringify(res)}`);
  return res;
}

/** A root (copy of the example) with the seed's 468 rules and a 600-folder guest allowlist. */
function scaleRoot(): BenchRoot {
  return makeRoot('policy-scale', () => wardenToml({}), { 'config/conditions.toml': scaleConditions(RULES), 'config/guests.toml': scaleGuests(FOLDERS) });
}

export async function cliRows(runs: number): Promise<Json> {
  const big = scaleRoot();
  const ex = makeRoot('policy-cli', () => wardenToml({}));
  for (const r of [big, ex]) if (wardenSync(r, ['init']).code !== 0) throw new Error(`init failed in ${r.root}`);
  const check = async (r: BenchRoot) => (await timed(process.execPath, [CLI, 'check', '--root', r.root], r.env)).ms;
  const exText = readFile(ex.p('config/conditions.toml'), 'utf8');
  const bigText = readFile(big.p('config/conditions.toml'), 'utf8');
  let k = 0;
  const apply = async (r: BenchRoot, text: string) => {
    const from = join(r.base, `c-${k}.toml`);
    writeFileSync(from, `${text}# apply ${k++}\n`);
    return (await timed(process.execPath, [CLI, 'apply', 'config/conditions.toml', '--from', from, '--root', r.root], r.env)).ms;
  };
  await check(big); await check(ex); // warm the page cache
  const load = load1();
  const c = { big: [] as number[], ex: [] as number[] };
  const a = { big: [] as number[], ex: [] as number[] };
  // Alternating, and in the other order every other run (ABBA), so a drift of the load
  // falls on both roots alike.
  for (let i = 0; i < runs; i++) {
    if (i % 2 === 0) { c.big.push(await check(big)); c.ex.push(await check(ex)); a.big.push(await apply(big, bigText)); a.ex.push(await apply(ex, exText)); }
    else { c.ex.push(await check(ex)); c.big.push(await check(big)); a.ex.push(await apply(ex, exText)); a.big.push(await apply(big, bigText)); }
  }
  const res = { runs, load1: load, loadEnd: load1(), checkMs: median(c.big), exampleCheckMs: median(c.ex), checkRatio: median(c.big) / median(c.ex), applyMs: median(a.big), exampleApplyMs: median(a.ex), applyRatio: median(a.big) / median(a.ex), raw: { c, a } };
  log(`policy cli: ${JSON.stringify(res)}`);
  return res;
}

/**
 * The hot reload: a guard on the root, a view in this process, `apply`s of conditions.toml
 * alternating between the 468-rule root and the example root. For each, the longest stall of
 * this event loop from the apply's spawn to the view's 'change' for the new generation.
 */
export async function reloadRows(n: number): Promise<Json> {
  const big = scaleRoot();
  const ex = makeRoot('policy-reload', () => wardenToml({}));
  const out: Json = { applies: n };
  const stalls: Record<string, { histMaxMs: number[]; driftMaxMs: number[]; serveMs: number[] }> = {};
  for (const [name, r] of [['big', big], ['example', ex]] as const) {
    if (wardenSync(r, ['init']).code !== 0) throw new Error(`init failed in ${r.root}`);
    const guard = await startReady(process.execPath, [CLI, 'run', '--guard', '--root', r.root], r.env);
    const view = openApprovedView(r.root, { deployment: { runtimeDir: join(r.base, 'none-run'), stateDir: join(r.base, 'none-state') } });
    const text = readFile(r.p('config/conditions.toml'), 'utf8');
    const s: { histMaxMs: number[]; driftMaxMs: number[]; taskMaxMs: number[]; serveMs: number[] } = { histMaxMs: [], driftMaxMs: [], taskMaxMs: [], serveMs: [] };
    // The view's own synchronous tasks on this loop (a check: read, verify, maybe adopt; a
    // builder reply: adopt), timed by wrapping them: the part of a stall that is the view's.
    let task = 0;
    const proto = Object.getPrototypeOf(view) as Record<string, (...a: unknown[]) => unknown>;
    for (const m of ['check', 'built']) {
      const orig = proto[m] as (...a: unknown[]) => unknown;
      (view as unknown as Record<string, unknown>)[m] = function (this: unknown, ...a: unknown[]) { const t0 = performance.now(); try { return orig.apply(this, a); } finally { task = Math.max(task, performance.now() - t0); } };
    }
    stalls[name] = s;
    try {
      await view.ready();
      if (!view.current().ok) await new Promise<void>((res) => view.once('change', () => res()));
      const loadAt = load1();
      for (let i = 0; i < n; i++) {
        const gen = view.current().generation as number;
        const from = join(r.base, `reload-${i}.toml`);
        writeFileSync(from, `${text}# reload ${i}\n`);
        const adopted = new Promise<ApprovedState>((res) => {
          const on = (st: ApprovedState) => { if (st.ok && st.generation === gen + 1) { view.off('change', on); res(st); } };
          view.on('change', on);
        });
        const t0 = performance.now();
        const child = track(spawn(process.execPath, [CLI, 'apply', 'config/conditions.toml', '--from', from, '--root', r.root], { env: r.env, stdio: 'ignore' }));
        // Measure from after the spawn call (its own fork cost is the bench's, not the reload's).
        task = 0;
        const h = monitorEventLoopDelay({ resolution: 1 });
        h.enable();
        let last = performance.now(); let drift = 0;
        const probe = setInterval(() => { const now = performance.now(); drift = Math.max(drift, now - last - 1); last = now; }, 1);
        const st = await Promise.race([adopted.then((x) => { s.serveMs.push(performance.now() - t0); return x; }), new Promise<never>((_, rej) => setTimeout(() => rej(new Error(`reload ${i} of ${name} did not reach the view in 20 s`)), 20_000))]);
        await new Promise((res) => setTimeout(res, 5)); // let the probe see the turn after the adoption
        clearInterval(probe); h.disable();
        const now = performance.now(); drift = Math.max(drift, now - last - 1);
        if (name === 'big' && (st.policy.conditions?.rules.length ?? 0) < RULES) throw new Error('the view adopted a policy without the 468 rules');
        s.histMaxMs.push(h.max / 1e6); s.driftMaxMs.push(drift); s.taskMaxMs.push(task);
        await new Promise((res) => child.exitCode !== null ? res(null) : child.once('exit', res));
      }
      out[name] = { load1: loadAt, rules: view.current().policy.conditions?.rules.length, viewStats: view.stats(), stallMs: summary(s.histMaxMs), driftMs: summary(s.driftMaxMs), viewTaskMs: summary(s.taskMaxMs), serveMs: summary(s.serveMs), raw: s };
    } finally {
      await view.close();
      await guard.stop();
    }
  }
  log(`policy reload: ${JSON.stringify(out)}`);
  return out;
}

export async function policyScale(): Promise<Json> {
  const runs = Number(process.env.BENCH_RUNS ?? 3);
  return {
    parse: parseRows(),
    canRead: canReadRows(),
    cli: await cliRows(Number(process.env.BENCH_CLI_RUNS ?? Math.max(runs, 15))),
    reload: await reloadRows(Number(process.env.BENCH_RELOADS ?? 10)),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.dirname, 'policy-scale.js')) {
  policyScale().then(async (res) => {
    const { policyRows } = await import('./report.js');
    process.stdout.write(JSON.stringify(res, null, 2) + '\n\n' + policyRows(res).map((r) => `| ${r.join(' | ')} |`).join('\n') + '\n');
    cleanupTemps();
    process.exit(0);
  }, (err) => { log(`policy bench failed: ${(err as Error).stack ?? String(err)}`); cleanupTemps(); process.exit(1); });
}
