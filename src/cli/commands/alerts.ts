import type { CommandSpec } from '../types.js';
import { readAlerts } from '../../store/alerts.js';
import { deliveryReport } from '../delivery.js';
import { normalizeRelPath } from '../../changes/apply.js';
import type { Alert } from '../../store/alert-types.js';
import { escapeText } from '../../common/escape.js';

/** One line per alert; every field comes from alerts.jsonl, which names attacker-chosen paths: escaped. */
function describe(a: Alert): string {
  return escapeText(rawDescribe(a));
}

function rawDescribe(a: Alert): string {
  const keys = a.credential_changes?.length ? ` keys ${a.credential_changes.map((c) => `${c.group}.${c.key} ${c.before ?? '-'}→${c.after ?? '-'}`).join(', ')}` : '';
  const count = a.count && a.count > 1 ? ` (${a.count} alerts folded)` : '';
  return `${a.time}  ${a.id}  ${a.action} ${a.path}: ${a.reason}${a.also?.length ? ` (+${a.also.join(', ')})` : ''}${count}${keys}${a.quarantine ? `  kept: ${a.quarantine}` : ''}${a.detail && a.count ? `  ${a.detail}` : ''}`;
}

export const alertsCommand: CommandSpec = {
  name: 'alerts',
  summary: 'Every alert, oldest first, with its delivery state per channel.',
  usage: 'alerts [--root DIR] [--json]',
  async run(ctx) {
    const { alerts, skipped } = readAlerts(ctx.root);
    const report = deliveryReport(ctx.root);
    const withDelivery = alerts.map((a) => ({ ...a, delivery: report?.alerts[a.id] ?? {} }));
    if (ctx.json) { ctx.out.json(withDelivery); return 0; }
    if (alerts.length === 0) ctx.out.line('no alerts');
    for (const a of withDelivery) {
      const d = Object.entries(a.delivery).map(([ch, s]) => `${ch}: ${s?.state}`).join(', ');
      ctx.out.line(`${describe(a)}${d ? `  [${escapeText(d)}]` : ''}`);
    }
    if (skipped) ctx.out.err(`warning: ${skipped} line(s) of snapshots/alerts.jsonl are not alerts and were skipped`);
    return 0;
  },
};

export const whyCommand: CommandSpec = {
  name: 'why',
  summary: 'Recent alerts for a path and how to make the change properly ("if it vanished, check the alert first").',
  usage: 'why PATH [--root DIR] [--json]',
  allowPositionals: true,
  async run(ctx) {
    const [given] = ctx.positionals;
    if (!given || ctx.positionals.length > 1) throw new (await import('../../common/errors.js')).WardenError('usage: warden why PATH');
    const path = normalizeRelPath(given);
    const mine = readAlerts(ctx.root).alerts.filter((a) => a.path === path || a.path.startsWith(path + '/')).slice(-10);
    if (ctx.json) { ctx.out.json({ path, alerts: mine }); return 0; }
    if (mine.length === 0) { ctx.out.line(`No alerts for ${escapeText(path)}: warden has not reverted it.`); return 0; }
    ctx.out.line(`${mine.length} recent alert(s) for ${escapeText(path)}, newest last:`);
    for (const a of mine) {
      ctx.out.line(`  ${describe(a)}`);
      ctx.out.line(`    ${escapeText(a.advice)}`);
    }
    return 0;
  },
};
