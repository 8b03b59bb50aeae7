/** `npm run bench`, section: table (see bench/run.ts). */
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO, log, median } from './lib.js';
import { N_FILES, RUNS, type Json, results, node, warden } from './config.js';
import { machine } from './machine.js';
import { startup } from './startup.js';
import { footprint } from './footprint.js';
import { storm } from './storm.js';

// ---------------------------------------------------------------- table

export const f1 = (x: unknown, d = 1) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(d) : '—');
export const ok = (b: unknown) => (b === true ? 'met' : b === false ? 'MISSED' : '—');

export function table(): string {
  const rows: string[][] = [['measurement', 'warden', 'reference', 'ratio', 'target', 'result']];
  const rl = results.revert as Json | undefined;
  if (rl && !rl.error) {
    const w = rl.warden as Json; const fl = rl.floor as Json; const ra = rl.ratio as Json; const met = rl.met as Json;
    for (const k of ['p50', 'p90', 'p99', 'max']) {
      rows.push([`revert latency ${k} (ms, n=${rl.writes})`, f1(w[k], 2), `floor ${f1(fl[k], 2)}`, `${f1(ra[k], 2)}×`,
        k === 'p50' ? '≤ 1.5× floor' : k === 'p99' ? '≤ 2× floor' : '', k === 'p50' ? ok(met.p50) : k === 'p99' ? ok(met.p99) : '']);
    }
  } else rows.push(['revert latency', 'error', String(rl?.error ?? 'not run'), '', '', '']);
  const v = results.verify as Json | undefined;
  if (v && !v.error) {
    const met = v.met as Json;
    rows.push([`verify ${N_FILES} × 1 KiB (ms, median of ${RUNS})`, f1(v.wardenMs, 0), `sha256sum ${f1(v.sha256sumMs, 0)}`, `${f1(v.ratioToSha256sum, 2)}×`, '≤ 3× sha256sum', ok(met.sha256sum)]);
    rows.push([`verify vs AIDE (ms, median of ${RUNS})`, f1(v.wardenMs, 0), v.aideMs !== undefined ? `aide ${f1(v.aideMs, 0)}` : `aide skipped: ${v.aideNote}`, v.aideMs !== undefined ? `${f1(v.aideOverWarden, 1)}× faster` : '—', '≥ 15× faster', ok(met.aide)]);
    const init = results.init10k as Json | undefined;
    if (init && v.aideInitMs !== undefined) {
      const ratio = (init.ms as number) / (v.aideInitMs as number);
      rows.push([`init ${N_FILES} × 1 KiB (ms, one run)`, f1(init.ms, 0), `aide --init ${f1(v.aideInitMs, 0)}`, `${f1(ratio, 2)}×`, '≤ 1× aide --init', ok(ratio <= 1)]);
    }
  } else rows.push(['verify', 'error', String(v?.error ?? 'not run'), '', '', '']);
  const s = results.startup as Json | undefined;
  if (s && !s.error) rows.push([`startup to ready, ${N_FILES} files (ms, median)`, f1(s.medianMs, 0), '', '', '≤ 1000 ms', ok(s.met)]);
  else rows.push(['startup', 'error', String(s?.error ?? 'not run'), '', '', '']);
  const fp = results.footprint as Json | undefined;
  if (fp && !fp.error) {
    const g = fp.guard as Json; const n = fp.notifier as Json; const met = fp.met as Json;
    rows.push([`guard RSS, ${f1(fp.seconds, 0)} s idle (MB, max/mean)`, `${f1(g.rssMaxMB)} / ${f1(g.rssMeanMB)}`, '', '', '≤ 60 MB', ok(met.guardRss)]);
    rows.push([`guard CPU, ${f1(fp.seconds, 0)} s idle (% avg)`, f1(g.cpuPercent, 2), '', '', '≤ 0.5 %', ok(met.guardCpu)]);
    rows.push([`notifier RSS, ${f1(fp.seconds, 0)} s idle (MB, max/mean)`, `${f1(n.rssMaxMB)} / ${f1(n.rssMeanMB)}`, '', '', '≤ 90 MB', ok(met.notifierRss)]);
    rows.push([`notifier CPU, ${f1(fp.seconds, 0)} s idle (% avg)`, f1(n.cpuPercent, 2), '', '', '', '']);
  } else rows.push(['idle footprint', 'error', String(fp?.error ?? 'not run'), '', '', '']);
  const st = results.storm as Json | undefined;
  if (st && !st.error) {
    const met = st.met as Json;
    rows.push([`storm ${st.rate}/s × ${st.seconds} s: converge (ms)`, f1(st.convergeMs, 1), `${st.writes} writes`, '', '≤ 100 ms', ok(met.converge)]);
    rows.push(['storm: alerts recorded / reverts done', `${st.alertsRecorded} / ${st.journalReverts}`, '', '', 'equal', ok(met.everyRevertRecorded)]);
    rows.push(['storm: Discord messages (min gap s)', `${st.messages} (${f1(st.minGapSeconds, 1)})`, `alerts per msg ${(st.messageAlertCounts as number[]).join('+')}`, '', '≤ 1 per 10 s', ok(met.perInterval)]);
  } else rows.push(['storm', 'error', String(st?.error ?? 'not run'), '', '', '']);
  const c = results.crash as Json | undefined;
  if (c && c.available) {
    const met = c.met as Json;
    rows.push([`credential crash trials (npm run bench:crash, last complete run ${String(c.lastRun ?? '?').slice(0, 16)}, ${f1((c.ms as number) / 1000, 0)} s)`, `${c.trials}/${c.requested} trials, ${c.mixed} mixed`, `interrupted ${c.interrupted}, rolled back ${c.rolledBack}, forward ${c.rolledForward}`, '', '≥ 1000, 0 mixed', ok(met.trials === true && met.mixed === true)]);
  } else rows.push(['credential crash trials', '—', String(c?.note ?? c?.error ?? 'not run'), '', '≥ 1000, 0 mixed', '—']);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((c2, i) => c2.padEnd(widths[i]!)).join(' | ')} |`;
  return [line(rows[0]!), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

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
