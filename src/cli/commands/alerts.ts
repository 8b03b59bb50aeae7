import { watch } from 'node:fs';
import type { CommandContext, CommandSpec } from '../types.js';
import { EXIT, WardenError } from '../../common/errors.js';
import { prunedOf, readAlerts } from '../../store/alerts.js';
import { prunedNote, type PruneRecord } from '../../store/budget.js';
import { storeDirOf } from '../../store/location.js';
import { loadBaseline } from '../../store/load-baseline.js';
import { safeClose } from '../../fsx/beneath.js';
import { channelsOff, deliveryReport } from '../delivery.js';
import { rootRelative } from '../root.js';
import { clean } from '../../notifier/format.js';
import type { Alert } from '../../store/alert-types.js';
import { escapeText, nameText } from '../../common/escape.js';
import { windowOf } from '../when.js';
import { writtenAfterEmptied } from '../rejected.js';
import { describeBy } from '../../store/writer-words.js';
import { grantLines } from '../../grants/lines.js';
import { adviceCommandStyle, deployedAdvice } from '../../guard/classify.js';

/** One line per alert; every field comes from alerts.jsonl, which names attacker-chosen paths: escaped. */
function describe(a: Alert, written?: number, pruned?: Map<string, PruneRecord>): string {
  const keys = a.credential_changes?.length ? ` keys ${a.credential_changes.map((c) => `${clean(c.group, 80)}.${clean(c.key, 80)} ${clean(c.before ?? '-', 16)}→${clean(c.after ?? '-', 16)}`).join(', ')}` : '';
  // "content, while warden was stopped" reads better than "changed-while-stopped (+content)".
  const stopped = a.reason === 'changed-while-stopped' && a.also?.length;
  const reasons = stopped ? a.also! : [a.reason, ...(a.also ?? [])];
  const emptiedThen = written ? ` (then written: the rejected file holds ${written} byte(s); 'warden diff ${clean(a.id, 80)}')` : '';
  const why = `${reasons.map((x) => clean(x, 40) + (x === 'emptied' ? emptiedThen : '')).join(', ')}${stopped ? ', while warden was stopped' : ''}`;
  const count = a.count && a.count > 1 ? ` (${a.count} alerts folded)` : '';
  return `${clean(a.time, 40)}  ${clean(a.id, 80)}  ${clean(a.action, 20)} ${clean(nameText(a.path), 300)}: ${why}${count}${keys}${a.quarantine ? `  kept: ${clean(a.quarantine, 300)}${prunedText(a.id, pruned)}` : ''}${a.detail && (a.count || a.reason === 'content') ? `  ${clean(a.detail, 300)}` : ''}${a.by ? `  ${describeBy(a.by)}` : ''}`;
}

/** ` (content pruned at …, N bytes, sha256 …)` when the store budget pruned what the alert kept. */
function prunedText(id: string, pruned?: Map<string, PruneRecord>): string {
  const r = pruned?.get(id);
  return r ? ` (${clean(prunedNote(r), 200)})` : '';
}

/**
 * What the alert's rejected content granted or took away (docs/PROFILES.md, "Grants in
 * alerts, diffs and prompts"): its summary, then at most `max` changes. Read back from
 * alerts.jsonl: every field is data, escaped (grantLines, clean).
 */
export function grantsBlock(a: Alert, max: number, indent: string): string {
  if (!Array.isArray(a.grants)) return '';
  const list = a.grants.filter((g): g is NonNullable<typeof g> => g !== null && typeof g === 'object');
  const head = `\n${indent}what it granted or took away: ${clean(a.grants_summary ?? `${list.length} change(s)`, 300)}`;
  return head + grantLines({ grants: list, left_off: a.grants_left_off }, max).map((l) => `\n${indent}  ${l}`).join('');
}

/** A folded alert's members that kept content, one line each: every quarantine folder is named. */
function foldedLines(a: Alert, pruned?: Map<string, PruneRecord>): string {
  if (!Array.isArray(a.folded) || a.folded.length === 0) return '';
  return a.folded.map((m) => `\n    folded ${clean(String(m?.id), 80)}  ${clean(String(m?.path), 300)}  kept: ${clean(String(m?.quarantine), 300)}${prunedText(String(m?.id), pruned)}`).join('');
}

const under = (p: string) => (a: Alert) => a.path === p || a.path.startsWith(p + '/');

function filterOf(ctx: CommandContext): (a: Alert) => boolean {
  const inWindow = windowOf(ctx.values);
  const path = typeof ctx.values.path === 'string' ? rootRelative(ctx.root, ctx.values.path.replace(/\/+$/, '')) : null;
  return (a) => inWindow(a.time) && (path === null || under(path)(a));
}

/** Print each new alert as it is appended; runs until SIGINT/SIGTERM. */
async function follow(ctx: CommandContext, keep: (a: Alert) => boolean, seen: Set<string>): Promise<number> {
  const print = () => {
    for (const a of readAlerts(ctx.root).alerts) {
      if (seen.has(a.id)) continue;
      seen.add(a.id);
      if (!keep(a)) continue;
      if (ctx.json) process.stdout.write(JSON.stringify(a) + '\n'); else ctx.out.line(describe(a) + grantsBlock(a, 5, '    ') + foldedLines(a));
    }
  };
  return new Promise((resolve) => {
    // The directory watch is a hint; the interval is the backstop (the file may not exist yet).
    let w: ReturnType<typeof watch> | null = null;
    try { w = watch(storeDirOf(ctx.root), () => print()); } catch { w = null; }
    const timer = setInterval(print, 500);
    const stop = () => { clearInterval(timer); w?.close(); resolve(EXIT.ok); };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

export const alertsCommand: CommandSpec = {
  name: 'alerts',
  summary: 'Every alert, oldest first, with its delivery state per channel.',
  usage: 'alerts [--since WHEN] [--until WHEN] [--path PATH] [--follow] [--root DIR] [--json]',
  options: { since: { type: 'string' }, until: { type: 'string' }, path: { type: 'string' }, follow: { type: 'boolean', short: 'f', default: false } },
  async run(ctx) {
    const keep = filterOf(ctx);
    const { alerts: all, skipped } = readAlerts(ctx.root);
    const alerts = all.filter(keep);
    const report = deliveryReport(ctx.root);
    const pruned = prunedOf(ctx.root);
    const off = channelsOff(report);
    // A channel that is off here (README, "Notifications") owes nothing: "off" and why, in
    // --json as in the text, never "pending" for ever.
    const deliveryOf = (id: string): Record<string, unknown> => Object.fromEntries(Object.entries(report?.alerts[id] ?? {})
      .map(([ch, s]) => [ch, off.has(ch) && s?.state !== 'delivered' ? { state: 'off', reason: off.get(ch) } : s]));
    const withDelivery = alerts.map((a) => ({ ...a, delivery: deliveryOf(a.id), ...(pruned.has(a.id) ? { pruned: pruned.get(a.id) } : {}) }));
    if (ctx.values.follow) {
      // One JSON object per line while following: an array never ends.
      for (const a of withDelivery) {
        if (ctx.json) process.stdout.write(JSON.stringify(a) + '\n'); else ctx.out.line(describe(a, undefined, pruned) + grantsBlock(a, 5, '    ') + foldedLines(a, pruned));
      }
      return follow(ctx, keep, new Set(all.map((a) => a.id)));
    }
    if (ctx.json) { ctx.out.json(withDelivery); return EXIT.ok; }
    if (alerts.length === 0) ctx.out.line(all.length ? `no alerts match (${all.length} in all)` : 'no alerts');
    const written = writtenAfterEmptied(ctx.root, alerts);
    for (const [ch, why] of off) ctx.out.err(`note: ${ch} notifications are off: ${why} (see the README, "Notifications")`);
    for (const a of withDelivery) {
      const d = Object.entries(a.delivery).map(([ch, s]) => `${ch}: ${(s as { state?: unknown } | undefined)?.state}`).join(', ');
      ctx.out.line(`${describe(a, written.get(a.id), pruned)}${d ? `  [${escapeText(d)}]` : ''}${grantsBlock(a, 5, '    ')}${foldedLines(a, pruned)}`);
    }
    if (skipped) ctx.out.err(`warning: ${skipped} line(s) of snapshots/alerts.jsonl are not alerts and were skipped`);
    return EXIT.ok;
  },
};

/** Is `path` something warden guards: a protected file (approved or by pattern), or a directory holding some? */
function isProtected(root: string, path: string): boolean {
  const l = loadBaseline(root);
  safeClose(l.rootFd);
  if (l.state.entry(path) || l.pset.kindOf(path) || Object.hasOwn(l.state.index.dirs, path) || l.pset.dirs.includes(path)) return true;
  return l.state.paths().some((p) => p.startsWith(path + '/'));
}

/** Advice as `why` prints it: without the clause that tells the reader to run `why`. */
export function withoutWhy(advice: string): string {
  return advice
    .replace(/\s*If it vanished, check the alert first: 'warden why [^']*';\s*/, ' ')
    .replace(/\s*See 'warden why [^']*'\./, '')
    .replace(/;?\s*details: `warden why [^`]*`\.?/, '.')
    .trim();
}

export const whyCommand: CommandSpec = {
  name: 'why',
  summary: 'Recent alerts for a path and how to make the change properly ("if it vanished, check the alert first").',
  usage: 'why PATH [--root DIR] [--json]',
  allowPositionals: true,
  async run(ctx) {
    const [path] = ctx.positionals;
    if (!path || ctx.positionals.length > 1) throw new WardenError('usage: warden why PATH');
    const mine = readAlerts(ctx.root).alerts.filter(under(path)).slice(-10);
    const guarded = mine.length > 0 || isProtected(ctx.root, path);
    if (ctx.json) { const pr = prunedOf(ctx.root); ctx.out.json({ path, protected: guarded, alerts: mine.map((a) => (pr.has(a.id) ? { ...a, pruned: pr.get(a.id) } : a)) }); return guarded ? EXIT.ok : EXIT.finding; }
    if (!guarded) {
      ctx.out.line(`${escapeText(path)} is not protected by warden: no alert can concern it. Protected are config/{warden,conditions,guests,credentials}.toml, orgs/*.toml, blocks/conditional/*.md and the [[protect]] entries of config/warden.toml.`);
      return EXIT.finding;
    }
    if (mine.length === 0) { ctx.out.line(`No alerts for ${escapeText(path)}: warden has not reverted it.`); return EXIT.ok; }
    ctx.out.line(`${mine.length} recent alert(s) for ${escapeText(path)}, newest last:`);
    const written = writtenAfterEmptied(ctx.root, mine);
    const pruned = prunedOf(ctx.root);
    for (const a of mine) {
      ctx.out.line(`  ${describe(a, written.get(a.id), pruned)}${grantsBlock(a, 10, '    ')}`);
      // The stored advice ends by pointing at 'warden why': this is it.
      ctx.out.line(`    ${clean(withoutWhy(a.advice), 600)}`);
      // The command that works where it is run (the deployment: as the guard's account, with the root).
      if (a.quarantine && !pruned.has(a.id)) ctx.out.line(`    what was rejected: ${deployedAdvice(`'warden diff ${clean(a.id, 80)}'`, adviceCommandStyle())}`);
    }
    return EXIT.ok;
  },
};
