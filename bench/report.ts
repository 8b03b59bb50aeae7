/** `npm run bench`, section: table (see bench/run.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO, log } from './lib.js';
import { N_FILES, RUNS, type Json, results } from './config.js';

// ---------------------------------------------------------------- table

export const f1 = (x: unknown, d = 1) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(d) : '—');
export const ok = (b: unknown) => (b === true ? 'met' : b === false ? 'MISSED' : '—');

const x = (r: unknown, d = 2) => `${f1(r, d)}×`;

/**
 * One row per figure: warden's number, the reference measured in the same run, their ratio,
 * the target and whether it was met. A row whose window was not alone says so.
 */
export function table(): string {
  const rows: string[][] = [['measurement', 'warden', 'reference (same run)', 'ratio', 'target', 'result']];
  const rl = results.revert as Json | undefined;
  if (rl && !rl.error) {
    const w = rl.warden as Json; const fl = rl.floor as Json; const ra = rl.ratio as Json; const met = rl.met as Json;
    for (const k of ['p50', 'p90', 'p99', 'max']) {
      rows.push([`revert latency ${k} (ms, n=${rl.writes})`, f1(w[k], 2), `floor ${f1(fl[k], 2)}`, x(ra[k]),
        k === 'p50' ? '≤ 1.5× floor' : k === 'p99' ? '≤ 2× floor' : '', k === 'p50' ? ok(met.p50) : k === 'p99' ? ok(met.p99) : '']);
    }
  } else rows.push(['revert latency', 'error', String(rl?.error ?? 'not run'), '', '', '']);
  const v = results.verify as Json | undefined;
  if (v && !v.error) {
    const met = v.met as Json;
    rows.push([`verify ${N_FILES} × 1 KiB (ms, median of ${RUNS}; load ${f1(v.load1AtStart, 2)}–${f1(v.load1AtEnd, 2)}${v.indexBytes !== undefined ? `; index ${f1((v.indexBytes as number) / 1024, 0)} KiB` : ''})`, f1(v.wardenMs, 0), `sha256sum ${f1(v.sha256sumMs, 0)}`, x(v.ratioToSha256sum), '≤ 2× sha256sum', ok(met.sha256sum)]);
    rows.push([`verify vs AIDE (ms, median of ${RUNS})`, f1(v.wardenMs, 0), v.aideMs !== undefined ? `aide --check ${f1(v.aideMs, 0)}` : `aide skipped: ${v.aideNote}`, v.aideMs !== undefined ? ((v.aideOverWarden as number) >= 1 ? `${f1(v.aideOverWarden, 1)}× faster` : `${f1(1 / (v.aideOverWarden as number), 1)}× slower`) : '—', '≥ 15× faster', ok(met.aide)]);
  } else rows.push(['verify', 'error', String(v?.error ?? 'not run'), '', '', '']);
  const init = results.init as Json | undefined;
  if (init && !init.error) {
    rows.push([`warden init ${N_FILES} × 1 KiB (ms; aide: median of ${RUNS})`, f1(init.wardenMs, 0), init.aideInitMs !== undefined ? `aide --init ${f1(init.aideInitMs, 0)}` : `aide skipped: ${init.aideNote}`, init.aideInitMs !== undefined ? x(init.ratioToAideInit) : '—', '≤ 1× aide --init', ok((init.met as Json).aideInit)]);
  } else rows.push(['warden init', 'error', String(init?.error ?? 'not run'), '', '', '']);
  const ml = results.moduleLoad as Json | undefined;
  if (ml && !ml.error) {
    const b = ml.bundled as Json, u = ml.unbundled as Json;
    const load = (ml.load1 as number[]).map((v) => v.toFixed(1)).join('→');
    rows.push([`module load: \`warden --version\` (ms, bundle; load ${load})`, `${f1(b.versionMs, 0)} (cpu ${f1(b.versionCpuMs, 0)})`, `unbundled ${f1(u.versionMs, 0)} (cpu ${f1(u.versionCpuMs, 0)}), bare node ${f1(ml.bareNodeMs, 0)} (cpu ${f1(ml.bareNodeCpuMs, 0)})`, x((b.versionCpuMs as number) / (u.versionCpuMs as number), 2), 'cpu < unbundled', ok((b.versionCpuMs as number) < (u.versionCpuMs as number))]);
    rows.push([`module load: guard start to ready (ms, bundle; JS files opened ${String(b.jsFilesGuard)} vs ${String(u.jsFilesGuard)})`, `${f1(b.readyMs, 0)} (cpu ${f1(b.readyCpuMs, 0)})`, `unbundled ${f1(u.readyMs, 0)} (cpu ${f1(u.readyCpuMs, 0)})`, x((b.readyCpuMs as number) / (u.readyCpuMs as number), 2), 'cpu < unbundled', ok((b.readyCpuMs as number) < (u.readyCpuMs as number))]);
  } else rows.push(['module load', 'error', String(ml?.error ?? 'not run'), '', '', '']);
  const s = results.startup as Json | undefined;
  if (s && !s.error) rows.push([`startup to ready, ${N_FILES} files (ms, median of ${RUNS}${s.load1 ? `; load ${(s.load1 as number[]).map((v) => v.toFixed(1)).join('→')}` : ''})`, f1(s.medianMs, 0), `bare node ${f1(s.bareNodeMs, 0)}`, x(s.ratioToBareNode, 1), '≤ 500 ms', ok(s.met)]);
  else rows.push(['startup', 'error', String(s?.error ?? 'not run'), '', '', '']);
  const fp = results.footprint as Json | undefined;
  if (fp && !fp.error) {
    const g = fp.guard as Json; const n = fp.notifier as Json; const e = fp.exampleGuard as Json; const b = fp.bareNode as Json; const met = fp.met as Json;
    const tenK = fp.tenK as Json; const ex = fp.example as Json; const bare = fp.bare as Json;
    const vs = (j: Json) => { const r = j.vsBare as Json; return `${x(r.ratio, 1)}, +${f1(r.deltaMB)} MB`; };
    const bareRef = `bare node ${f1(b.rssMaxMB)} / ${f1(b.rssMeanMB)}`;
    const note = (w: Json) => `load ${f1(w.load1AtStart, 2)}${w.alone === true ? '' : ', NOT ALONE'}`;
    rows.push([`guard RSS, ${N_FILES} files, ${f1(tenK.seconds, 0)} s idle (MB max/mean; ${note(tenK)})`, `${f1(g.rssMaxMB)} / ${f1(g.rssMeanMB)}`, bareRef, vs(g), '≤ 60 MB', ok(met.guardRss)]);
    rows.push([`guard RSS, example root, ${f1(ex.seconds, 0)} s idle (MB max/mean; ${note(ex)})`, `${f1(e.rssMaxMB)} / ${f1(e.rssMeanMB)}`, bareRef, vs(e), '≤ 50 MB', ok(met.exampleRss)]);
    rows.push([`guard CPU, ${N_FILES} files, ${f1(tenK.seconds, 0)} s idle (% avg)`, f1(g.cpuPercent, 2), `bare node ${f1(b.cpuPercent, 2)} (${f1(bare.seconds, 0)} s)`, '', '≤ 0.5 %', ok(met.guardCpu)]);
    rows.push([`notifier RSS, ${N_FILES} files, same window (MB max/mean)`, `${f1(n.rssMaxMB)} / ${f1(n.rssMeanMB)}`, bareRef, vs(n), '≤ 90 MB', ok(met.notifierRss)]);
    rows.push(['notifier CPU, same window (% avg)', f1(n.cpuPercent, 2), '', '', '', '']);
  } else rows.push(['idle footprint', 'error', String(fp?.error ?? 'not run'), '', '', '']);
  const st = results.storm as Json | undefined;
  if (st && !st.error) {
    const met = st.met as Json;
    rows.push([`storm ${st.rate}/s × ${st.seconds} s: converge (ms)`, f1(st.convergeMs, 1), `${st.writes} writes`, '', '≤ 100 ms', ok(met.converge)]);
    rows.push(['storm: alerts recorded / reverts done', `${st.alertsRecorded} / ${st.journalReverts}`, '', '', 'equal', ok(met.everyRevertRecorded)]);
    rows.push(['storm: Discord messages (min gap s)', `${st.messages} (${f1(st.minGapSeconds, 1)})`, `alerts per msg ${(st.messageAlertCounts as number[]).join('+')}`, '', '≤ 1 per 10 s', ok(met.perInterval)]);
  } else rows.push(['storm', 'error', String(st?.error ?? 'not run'), '', '', '']);
  const fl = results.flood as Json | undefined;
  if (fl && !fl.error) {
    const met = fl.met as Json;
    rows.push([`flood: ${Number(fl.files).toLocaleString('en-US')} unprotected files into orgs/, guard RSS growth (MB peak / after)`, `${f1(fl.growthPeakMB)} / ${f1(fl.growthAfterMB)}`, `RSS before ${f1(fl.rssBeforeMB)} MB`, '', '≤ +30 MB', ok(met.memory)]);
    rows.push(['flood: revert of an approved file meanwhile (ms p50 / max)', `${f1(fl.revertP50Ms)} / ${f1(fl.revertMaxMs)}`, `${fl.reverts} edits`, '', '< 1 s', ok(met.reverts)]);
  } else rows.push(['flood', 'error', String(fl?.error ?? 'not run'), '', '', '']);
  const ns = results.notifierSends as Json | undefined;
  if (ns && !ns.error) {
    const b = ns.before as Json, a = ns.after as Json;
    rows.push([`notifier heap over ${String(ns.sends)} Discord sends (MB after GC; ${f1(ns.seconds, 0)} s)`, `${f1(b.heapMB)} → ${f1(a.heapMB)}`, `RSS ${f1(b.rssMB)} → ${f1(a.rssMB)}; abort listeners max ${String(ns.maxAbortListeners)}`, `${(ns.heapGrowthMB as number) >= 0 ? '+' : ''}${f1(ns.heapGrowthMB)} MB`, '≤ +5 MB, no listener kept', ok(ns.met)]);
  } else rows.push(['notifier sends', 'error', String(ns?.error ?? 'not run'), '', '', '']);
  rows.push(...policyRows(results.policy as Json | undefined));
  rows.push(...runtimeRows(results.runtimes as Json | undefined));
  rows.push(...crashRows(results.crash as Json | undefined));
  // BENCH_ONLY: the sections not asked for are left out, not listed as not run.
  if (process.env.BENCH_ONLY) rows.splice(0, rows.length, ...rows.filter((r) => !(r[1] === 'error' && r[2] === 'not run')));
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((c2, i) => c2.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

/** The agent runtimes' files: a profile's root (bench/runtimes.ts). */
export function runtimeRows(r: Json | undefined): string[][] {
  if (!r || r.error) return [['runtimes (a profile\'s root)', 'error', String(r?.error ?? 'not run'), '', '', '']];
  const rows: string[][] = [];
  const rv = r.jsonRevert as Json | undefined;
  if (rv) {
    const w = rv.warden as Json; const fl = rv.floor as Json; const ra = rv.ratio as Json; const met = rv.met as Json;
    for (const k of ['p50', 'p99']) {
      rows.push([`revert of ~/.claude/settings.json (JSON, a grant each) ${k} (ms, n=${rv.writes})`, f1(w[k], 2), `floor ${f1(fl[k], 2)}`, x(ra[k]), k === 'p50' ? '≤ 1.5× floor' : '≤ 2× floor', ok(met[k])]);
    }
  }
  const init = r.init as Json | undefined;
  if (init) rows.push([`warden init --profile claude-code, a home of ${String(init.homeFiles)} files (${String(init.guarded)} guarded; ms, median of ${String(init.runs)})`, f1(init.initMs, 0), `warden --version ${f1(init.versionMs, 0)}; find ~/.claude ${f1(init.findMs, 0)}`, '', '', '']);
  for (const [k, name] of [['checkCodex', 'codex'], ['checkClaude', 'claude-code']] as const) {
    const c = r[k] as Json | undefined;
    if (!c) continue;
    if (c.skipped) { rows.push([`warden check --profile ${name}`, '—', String(c.skipped), '', '', '—']); continue; }
    rows.push([`warden check --profile ${name} with its runtime's check (ms, median of ${String(c.runs)}; ${String(c.status)})`, `${f1(c.totalMs, 0)} (warden ${f1(c.wardenMs, 0)})`, `the runtime's check ${f1(c.validatorMs, 0)}`, '', '', '']);
  }
  return rows;
}

/** The seed's 468 rules and a 600-folder allowlist, each beside its reference in the same run (bench/policy-scale.ts). */
export function policyRows(p: Json | undefined): string[][] {
  if (!p || p.error) return [['policy at scale (468 rules)', 'error', String(p?.error ?? 'not run'), '', '', '']];
  const rows: string[][] = [];
  const pa = p.parse as Json | undefined; const cr = p.canRead as Json | undefined; const cl = p.cli as Json | undefined; const rl = p.reload as Json | undefined;
  const ld = (j: Json | undefined, k = 'load1') => `load ${f1(j?.[k], 2)}`;
  if (pa) {
    const w = pa.warden as Json; const s = pa.smolToml as Json; const e = pa.example as Json;
    rows.push([`${pa.rules}-rule conditions.toml parse + validate (ms CPU, median of ${pa.runs}; ${ld(pa)})`, f1(w.cpuMs, 2), `smol-toml parse ${f1(s.cpuMs, 2)}; example file (${e.rules} rules) ${f1(e.cpuMs, 3)}`, x(pa.ratioToSmol, 1), 'linear', '']);
  }
  if (cr) rows.push([`canRead per call, ${cr.rules} rules + ${cr.folders} guest folders (µs; ${ld(cr)})`, f1(cr.usPerCall, 2), `example root ${f1(cr.exampleUsPerCall, 2)}`, x((cr.usPerCall as number) / (cr.exampleUsPerCall as number), 1), '≪ 100 µs', ok((cr.usPerCall as number) < 100)]);
  if (cl) {
    const cr2 = (cl.checkMs as number) / (cl.exampleCheckMs as number); const ar = (cl.applyMs as number) / (cl.exampleApplyMs as number);
    rows.push([`warden check, 468 rules + 600 folders (ms wall, median of ${cl.runs} alternating; ${ld(cl)} → ${f1(cl.loadEnd, 2)})`, f1(cl.checkMs, 0), `example root ${f1(cl.exampleCheckMs, 0)}`, x(cr2), '≤ 1.05× the example', ok(cr2 <= 1.05)]);
    rows.push([`warden apply config/conditions.toml, 468 rules (ms wall, median of ${cl.runs} alternating)`, f1(cl.applyMs, 0), `example root ${f1(cl.exampleApplyMs, 0)}`, x(ar), '≤ 1.05× the example', ok(ar <= 1.05)]);
  }
  if (rl?.big && rl.example) {
    const b = rl.big as Json; const e = rl.example as Json; const bs = b.stallMs as Json; const es = e.stallMs as Json; const bd = b.driftMs as Json; const ed = e.driftMs as Json;
    rows.push([`hot reload via warden/runtime, 468 rules: longest event-loop stall (ms p50/max of ${rl.applies}; ${ld(b)})`, `${f1(bs.p50, 1)} / ${f1(bs.max, 1)}`, `example root ${f1(es.p50, 1)} / ${f1(es.max, 1)}`, x((bs.p50 as number) / (es.p50 as number), 1), '≈ example root', '']);
    rows.push(['  same, 1 ms timer drift (ms p50/max)', `${f1(bd.p50, 1)} / ${f1(bd.max, 1)}`, `example root ${f1(ed.p50, 1)} / ${f1(ed.max, 1)}`, '', '', '']);
    const bt = b.viewTaskMs as Json; const et = e.viewTaskMs as Json;
    const bv = b.serveMs as Json | undefined; const ev = e.serveMs as Json | undefined;
    if (bv && ev) rows.push(['  time until the new policy is served: apply\'s spawn to the view\'s adoption (ms p50/max)', `${f1(bv.p50, 0)} / ${f1(bv.max, 0)}`, `example root ${f1(ev.p50, 0)} / ${f1(ev.max, 0)}`, x((bv.p50 as number) / (ev.p50 as number)), '≈ example root', '']);
    rows.push(['  the view\'s own longest task on the loop (ms p50/max)', `${f1(bt.p50, 2)} / ${f1(bt.max, 2)}`, `example root ${f1(et.p50, 2)} / ${f1(et.max, 2)}`, x((bt.p50 as number) / (et.p50 as number), 1), 'a few ms', ok((bt.max as number) <= 5)]);
  }
  return rows;
}

/** The last complete `npm run bench:crash` (bench/crash-results.json), with its date: not measured in this run. */
function crashRows(c: Json | undefined): string[][] {
  if (!c?.available) return [['credential crash trials (npm run bench:crash)', '—', String(c?.note ?? c?.error ?? 'not run'), '', '≥ 1000; 0 mixed, missing, failed', '—']];
  const met = c.met as Json;
  const sf = c.seamFree as Json | undefined;
  const landed = c.landed as Record<string, Json> | undefined;
  const when = `last complete run ${String(c.lastRun ?? '?').slice(0, 16).replace('T', ' ')} UTC (${String(c.lastRunCommit || '?')}), ${f1((c.ms as number) / 1000, 0)} s, ${String(c.jobs ?? 1)} workers`;
  const rows = [
    ['credential crash trials (bench:crash)', `${c.trials}/${c.requested}: ${c.mixed} mixed, ${c.missingAlerts ?? '?'} missing alerts, ${c.failedStarts ?? '?'} failed starts`,
      when, '', '≥ 1000; 0 mixed, missing, failed', ok(met.trials === true && (met.passed ?? met.mixed) === true)],
    ['  interrupted (journal on disk at the kill)', String(c.interrupted), `rolled back ${c.rolledBack}, forward ${c.rolledForward}`, '', 'half-applied alert each', ok(Number(c.missingAlerts ?? NaN) === 0)],
  ];
  if (sf && landed) {
    const win = sf.byWindow as Record<string, Json> | undefined;
    rows.push([`  seam-free kills: before/inside/after`, `${sf.trials}: ${sf.before}/${sf.inside}/${sf.after}`,
      `${win ? `uniform ${fmtLanded(win.wide)}, journal-timed ${fmtLanded(win.journal)}; ` : ''}command ${fmtLanded(landed['kill-cli'])}, daemon ${fmtLanded(landed['kill-daemon'])}`, '', 'some inside', ok(Number(sf.inside) > 0)]);
    rows.push(['  seam kills: before/inside/after', `step ${fmtLanded(landed.step)}`, `delay ${fmtLanded(landed.delay)}`, '', '', '']);
  }
  return rows;
}

const fmtLanded = (l: Json | undefined) => l ? `${l.before}/${l.inside}/${l.after}` : '—';

/** BENCH_UPDATE_DOCS=1: put the table and the machine into docs/BENCHMARKS.md between its markers. */
export function updateDocs(): void {
  const doc = join(REPO, 'docs', 'BENCHMARKS.md');
  const text = readFileSync(doc, 'utf8');
  const m = results.machine as Json;
  const block = [
    '<!-- results:begin -->',
    `Run ${String(results.started).slice(0, 16).replace('T', ' ')} UTC at commit ${m.commit}, ${(results.totalSeconds as number).toFixed(0)} s in all.`,
    '',
    `Machine: ${m.nproc} cores (\`nproc\`), ${m.cpu}, ${m.memGB} GB RAM, ${m.os}, Linux ${m.kernel}, Node ${m.node};`,
    `disk: ${m.disk} (temp roots under ${m.tmpdir}).`,
    '',
    results.table as string,
    '<!-- results:end -->',
  ].join('\n');
  const next = text.replace(/<!-- results:begin -->[\s\S]*<!-- results:end -->/, block);
  writeFileSync(doc, next);
  log('docs/BENCHMARKS.md updated');
}
