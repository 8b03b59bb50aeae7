import { ownerCodeRefusalAt } from '../../changes/owner-code.js';
import { escapeText } from '../../common/escape.js';
import type { CommandSpec } from '../types.js';
import { inspectAll } from '../../guard/inspect.js';
import { completeDirs } from '../../guard/dirs-on-the-way.js';
import { loadBaseline, octal } from '../../store/load-baseline.js';
import { pingDaemon } from '../daemon-client.js';
import { lastAlerts } from '../../store/alerts.js';
import { WardenError } from '../../common/errors.js';
import { policyFileHealth } from '../../policy/index.js';
import { channelsOff, deliveryReport, undeliveredOn } from '../delivery.js';
import { manifestStatus } from '../../store/manifest.js';
import { EXIT } from '../../common/errors.js';
import { clean } from '../../notifier/format.js';
import type { WitnessReport } from '../../daemon/witness-link.js';
import { credentialModeReport } from '../changes/cred-mode.js';
import { readPruned, storeUsage } from '../../store/prune.js';
import { sizeText } from '../../store/budget.js';
import { unreadableHere } from '../unreadable-here.js';
import { adviceCommandStyle, deployedAdvice } from '../../guard/classify.js';

/** What status says of a file this account may not read, its mode and owner as approved. */
const NOT_READ = 'content not checked: this account may not read it; mode and owner as approved';

/** Up to this many files, status lists each one; beyond it the summary and the drifted ones (each with --list). */
const LIST_AT_MOST = 50;

/** What approval = "tty" is worth where the agent runs as the owner's own user (docs/CHANGES.md, "tty"). */
export const TTY_NOTE = 'approval = "tty": a y/N on a terminal. It stops scripts and piped input that go through "warden approve", and an agent that cannot reach the guard (the deployment: another user); it does not stop a program running as you, which can send the guard its answer itself (the control socket is yours, and the guard takes the client\'s word that a terminal confirmed it) or give "warden approve ID" a pseudo-terminal of its own (script -c). Where the agent runs as you, nothing in your session can keep it from approving (approval = "owner-code" is refused there: the agent could read the code on its way); run the guard and notifier under an account of their own and use approval = "owner-code" (docs/DEPLOY.md, "The agent runs as you").';

export const statusCommand: CommandSpec = {
  name: 'status',
  summary: "Is the daemon running, each protected file's state, policy files that grant nothing, the last alert.",
  usage: 'status [--list] [--root DIR] [--json]',
  options: { list: { type: 'boolean', short: 'v', default: false } },
  // Exit 1 on drift, else 3 when no daemon runs (nothing reverts direct edits), else 0.
  async run(ctx) {
    const ping = await pingDaemon(ctx.root, 5000);
    const l = loadBaseline(ctx.root);
    try {
      completeDirs(l.rootFd, l.state, l.pset);
      const findings = inspectAll(l.rootFd, l.state, l.pset, l.config.max_bytes);
      const byPath = new Map(findings.map((f) => [f.path, f]));
      const files = l.state.paths().sort().map((p) => {
        const e = l.state.entry(p);
        const f = byPath.get(p);
        // A file this account may not read, all else as approved: not drift (cli/unreadable-here.ts).
        const notRead = f ? unreadableHere(f, e) : false;
        return { path: p, kind: e?.kind, state: f && !notRead ? 'drift' : 'ok', reason: f && !notRead ? f.verdict.reason : null, mode: e ? octal(e.mode) : null, size: e?.size ?? null, ...(notRead ? { content_checked: false } : {}) };
      });
      const unexpected = findings.filter((f) => !l.state.entry(f.path) && !f.isDir).map((f) => ({ path: f.path, state: 'unexpected', reason: f.verdict.reason }));
      const dirs: { path: string; state: string; reason: string; detail?: string }[] = findings.filter((f) => f.isDir).map((f) => ({ path: f.path, state: 'drift', reason: f.verdict.reason }));
      const replaced = l.store.rootReplaced(l.rootFd);
      if (replaced) dirs.unshift({ path: '', state: 'drift', reason: 'root-replaced', detail: replaced });
      // A damaged store (say a directory where alerts.jsonl belongs) is reported, never a crash.
      const storeProblems: string[] = [];
      const pathProblem = l.store.pathProblem();
      if (pathProblem) storeProblems.push(pathProblem);
      let last = null;
      try { last = lastAlerts(ctx.root, 1)[0] ?? null; }
      catch (err) { if (err instanceof WardenError) storeProblems.push(err.message); else throw err; }
      // A profile's root holds a runtime's files, none of the example runtime's policy (docs/PROFILES.md, "A profile's root").
      const profile = l.state.index.profile ?? null;
      const policy = profile ? [] : policyFileHealth(ctx.root);
      const warnings: string[] = [];
      if (l.config.approval === 'none') warnings.push('approval = "none": changes are applied without confirmation (tests and development only)');
      const codeRefused = l.config.approval === 'owner-code' ? ownerCodeRefusalAt(l.store.fd) : null;
      if (codeRefused) warnings.push(`${codeRefused}; requests are confirmed on a terminal (approval "tty") instead`);
      const notes: string[] = [];
      if (l.config.approval === 'tty') notes.push(TTY_NOTE);
      if (!profile) warnings.push(...credentialModeReport(ctx.root).map((f) => f.message));
      const report = deliveryReport(ctx.root);
      const delivery = report ? { outbox_depth: report.outboxDepth, last_error: report.lastDeliveryError ?? null, state_dir: report.stateDir, log_lines_ignored: report.logLinesIgnored } : null;
      const m = profile ? null : manifestStatus(ctx.root);
      // Behind the baseline: the runtime's view keeps an older approved state until the guard publishes.
      const runtimeManifest = m ? { path: m.path, setup: m.setup, present: m.present, generation: m.generation, current: m.generation === l.state.index.generation, problem: m.problem } : null;
      // docs/CONTRACT.md §Store budget: what the store costs on disk against store_max_bytes.
      const budget = storeBudgetFigure(l.store.fd, l.config.store_max_bytes);
      const daemon = ping?.ok ? { running: true, pid: ping.pid, polling: ping.polling, watcher_alive: ping.watcherAlive, failing: ping.failing, notifier: ping.notifier ?? null, witness: ping.witness ?? null } : { running: false };
      if (ctx.json) {
        ctx.out.json({ root: ctx.root, profile: profile ? { name: profile.profile, level: profile.level, files: profile.files } : null, store: { dir: l.store.dir, mode: l.store.mode, problems: storeProblems, used_bytes: budget.used, held_bytes: budget.held, budget_bytes: budget.budget, pruned: budget.pruned }, daemon, generation: l.state.index.generation, approval: l.config.approval, warnings, notes, files: [...files, ...unexpected], dirs, policy, last_alert: last, delivery, runtime_manifest: runtimeManifest });
      } else {
        const c = ctx.out.color;
        ctx.out.line(daemon.running ? c.green(`daemon: running (pid ${String(daemon.pid)})${daemon.polling ? ' — polling (inotify unavailable)' : ''}`) : c.yellow('daemon: not running — direct edits are not being reverted'));
        if (daemon.running) ctx.out.line(witnessLine(daemon.witness as WitnessReport | null));
        if (profile) ctx.out.line(`profile: ${profile.profile} (${profile.level} files: ${profile.files.map((f) => escapeText(f.path)).join(', ')})`);
        for (const w of warnings) ctx.out.line(c.yellow(`warning: ${w}`));
        for (const n of notes) ctx.out.line(`note: ${n}`);
        for (const p of storeProblems) ctx.out.line(c.red(`store damaged: ${p}`));
        ctx.out.line(budgetLine(budget, c.yellow));
        // The summary first; each file only for a small root or on request (--list): 10,000 ok lines bury the one that drifted.
        const drifted = files.filter((f) => f.state !== 'ok').length + unexpected.length + dirs.length;
        ctx.out.line(`files: ${files.length} protected, ${files.length - files.filter((f) => f.state !== 'ok').length} ok${drifted ? c.red(`, ${drifted} drift`) : ''}`);
        const listAll = Boolean(ctx.values.list) || files.length <= LIST_AT_MOST;
        for (const f of files) if (listAll || f.state !== 'ok') ctx.out.line(`  ${f.state === 'ok' ? c.green('ok   ') : c.red('DRIFT')} ${escapeText(f.path)}${f.reason ? ` (${f.reason})` : ''}${'content_checked' in f ? ` (${NOT_READ})` : ''}`);
        if (!listAll) ctx.out.line(c.dim(`  (each file: 'warden status --list')`));
        for (const u of [...unexpected, ...dirs]) ctx.out.line(`  ${c.red('DRIFT')} ${u.path ? escapeText(u.path) : '.'} (${u.reason})${'detail' in u && u.detail ? `: ${u.detail}` : ''}`);
        for (const p of policy.filter((x) => x.grantsNothing)) ctx.out.line(c.yellow(`  grants nothing: ${escapeText(p.path)} — ${p.reason ?? p.status}`));
        if (delivery) {
          const off = channelsOff(report);
          const owed = [...undeliveredOn(report, off)].map(([ch, n]) => `${n} on ${ch}`);
          ctx.out.line(`notifications: ${owed.length ? `not delivered yet: ${owed.join(', ')}` : off.size ? 'all delivered on the channels that are on' : 'all delivered'}`);
          for (const [ch, why] of off) ctx.out.line(`  ${ch}: off — ${clean(why, 200)}`);
          const e = report?.lastDeliveryError;
          if (e && !off.has(e.channel)) ctx.out.line(c.yellow(`  last delivery error: ${clean(e.channel, 20)} at ${clean(e.time, 40)}: ${clean(e.message, 300)}`));
          if (delivery.log_lines_ignored) ctx.out.line(c.yellow(`  delivery log: ${delivery.log_lines_ignored} incomplete or damaged line(s) ignored (a crash mid-write; those deliveries may be sent again)`));
        }
        const behind = m && runtimeManifest && m.generation !== null && !runtimeManifest.current ? c.yellow(` — behind the baseline (generation ${l.state.index.generation}): the runtime keeps the older approved state until the guard publishes`) : '';
        if (m) ctx.out.line(`runtime manifest: ${m.path}${m.present ? (m.generation !== null ? ` (generation ${m.generation})` : ` (${m.problem ?? 'invalid'})`) : ` (${m.problem ?? 'absent'})`}${behind}`);
        ctx.out.line(last ? `last alert: ${clean(last.time, 40)} ${clean(last.action, 20)} ${clean(last.path, 200)} (${clean(last.reason, 40)}), id ${clean(last.id, 80)}; see ${deployedAdvice(`'warden why ${clean(last.path, 200)}'`, adviceCommandStyle())}` : 'no alerts');
        const sel = profile ? ['profile', 'home', 'project'].filter((k) => typeof ctx.values[k] === 'string').map((k) => ` --${k} ${escapeText(String(ctx.values[k]))}`).join('') : '';
        if (!daemon.running) ctx.out.line(c.yellow(`start it with 'warden run${sel}' (or the warden-guard service)`));
      }
      if (storeProblems.length || files.some((f) => f.state !== 'ok') || unexpected.length || dirs.length) return EXIT.finding;
      return daemon.running ? EXIT.ok : EXIT.daemonDown;
    } finally {
      l.close();
    }
  },
};

interface BudgetFigure { used: number | null; held: number; budget: number; pruned: number }

function storeBudgetFigure(storeFd: Parameters<typeof storeUsage>[0], budget: number): BudgetFigure {
  let used: number | null = null;
  let held = 0;
  let pruned = 0;
  try { const u = storeUsage(storeFd); used = u.used; held = u.held; } catch { /* reported as unknown */ }
  try { pruned = readPruned(storeFd).size; } catch { /* none known */ }
  return { used, held, budget, pruned };
}

/**
 * `store: 12 MiB used of 512 MiB (store_max_bytes)`, what is held whole apart (never pruned,
 * not weighed: docs/CONTRACT.md §Store budget), and what was pruned.
 */
function budgetLine(f: BudgetFigure, warn: (s: string) => string): string {
  const used = f.used === null ? 'size unknown' : `${sizeText(f.used - f.held)} used`;
  const held = f.held ? `; besides, ${sizeText(f.held)} held whole (objects put at protected paths and moved aside as they were: not warden's to prune; 'warden alerts' names each, move or delete them yourself)` : '';
  const line = `store: ${used} of ${sizeText(f.budget)} (store_max_bytes)${held}${f.pruned ? `; ${f.pruned} quarantined content(s) pruned, oldest first ('warden alerts' says which)` : ''}`;
  return f.used !== null && f.used - f.held > f.budget ? warn(line) : line;
}

/** Whether a witness runs (docs/CONTRACT.md §Who did it), where, and what it can see. */
function witnessLine(w: WitnessReport | null): string {
  if (!w) return 'witness: unknown (the daemon did not say)';
  if (!w.running) return `witness: not running — alerts will not say who wrote (${clean(w.why ?? 'unknown', 200)})`;
  const mode = w.enforce ? 'refusing opens for writing (enforce = true)' : 'recording who opens protected files for writing';
  const s = w.status;
  const m = w.marked;
  const seen = s ? `; ${s.dirs} director(ies) and ${s.files} file(s) marked, ${s.writesSeen} write(s) seen${s.overflows ? `, ${s.overflows} queue overflow(s)` : ''}${s.recordsLost ? `, ${s.recordsLost} record(s) lost` : ''}`
    : `;${m ? ` ${Number(m.dirs)} director(ies) and ${Number(m.files)} file(s) marked,` : ''} last heartbeat ${clean(w.lastBeat ?? 'never', 40)}`;
  const names = w.names === null
    ? 'and, by name, chmod, chown, deletes and renames of the protected files (a file written elsewhere and moved in too); an actor that exits before it is read is named by pid only'
    : `but not chmod, chown, deletes or renames (${clean(w.names ?? 'unknown', 200)})`;
  return `witness: ${w.where === 'in-process' ? 'running in the daemon' : 'running (warden-witness)'}, ${mode}${seen}. It sees every open for writing in a protected directory: an edit in place, a new file (at its first open), a rename-over-save whose temp file was written there; ${names}`;
}
