import type { CommandSpec } from '../types.js';
import { inspectAll } from '../../guard/inspect.js';
import { loadBaseline, octal } from '../../store/load-baseline.js';
import { safeClose } from '../../fsx/beneath.js';
import { askDaemon } from '../daemon-client.js';
import { readAlerts } from '../../store/alerts.js';
import { policyFileHealth } from '../../policy/index.js';
import { deliveryReport } from '../delivery.js';

export const statusCommand: CommandSpec = {
  name: 'status',
  summary: "Is the daemon running, each protected file's state, policy files that grant nothing, the last alert.",
  usage: 'status [--root DIR] [--json]',
  async run(ctx) {
    const ping = await askDaemon(ctx.root, { op: 'ping' }, 5000);
    const l = loadBaseline(ctx.root);
    try {
      const findings = inspectAll(l.rootFd, l.state, l.pset, l.config.max_bytes);
      const byPath = new Map(findings.map((f) => [f.path, f]));
      const files = l.state.paths().sort().map((p) => {
        const e = l.state.entry(p);
        const f = byPath.get(p);
        return { path: p, kind: e?.kind, state: f ? 'drift' : 'ok', reason: f?.verdict.reason ?? null, mode: e ? octal(e.mode) : null, size: e?.size ?? null };
      });
      const unexpected = findings.filter((f) => !l.state.entry(f.path) && !f.isDir).map((f) => ({ path: f.path, state: 'unexpected', reason: f.verdict.reason }));
      const dirs = findings.filter((f) => f.isDir).map((f) => ({ path: f.path, state: 'drift', reason: f.verdict.reason }));
      const { alerts } = readAlerts(ctx.root);
      const last = alerts[alerts.length - 1] ?? null;
      const policy = policyFileHealth(ctx.root);
      const warnings: string[] = [];
      if (l.config.approval === 'none') warnings.push('approval = "none": changes are applied without confirmation (tests and development only)');
      const report = deliveryReport(ctx.root);
      const delivery = report ? { outbox_depth: report.outboxDepth, last_error: report.lastDeliveryError ?? null, state_dir: report.stateDir } : null;
      const daemon = ping?.ok ? { running: true, pid: ping.pid, polling: ping.polling, watcher_alive: ping.watcherAlive, failing: ping.failing, notifier: ping.notifier ?? null } : { running: false };
      if (ctx.json) {
        ctx.out.json({ root: ctx.root, daemon, generation: l.state.index.generation, approval: l.config.approval, warnings, files: [...files, ...unexpected], dirs, policy, last_alert: last, delivery });
      } else {
        const c = ctx.out.color;
        ctx.out.line(daemon.running ? c.green(`daemon: running (pid ${String(daemon.pid)})${daemon.polling ? ' — polling (inotify unavailable)' : ''}`) : c.yellow('daemon: not running — direct edits are not being reverted'));
        for (const w of warnings) ctx.out.line(c.yellow(`warning: ${w}`));
        for (const f of files) ctx.out.line(`  ${f.state === 'ok' ? c.green('ok   ') : c.red('DRIFT')} ${f.path}${f.reason ? ` (${f.reason})` : ''}`);
        for (const u of [...unexpected, ...dirs]) ctx.out.line(`  ${c.red('DRIFT')} ${u.path || "."} (${u.reason})`);
        for (const p of policy.filter((x) => x.grantsNothing)) ctx.out.line(c.yellow(`  grants nothing: ${p.path} — ${p.reason ?? p.status}`));
        if (delivery) ctx.out.line(`outbox: ${delivery.outbox_depth} undelivered${delivery.last_error ? `; last delivery error: ${JSON.stringify(delivery.last_error)}` : ''}`);
        ctx.out.line(last ? `last alert: ${last.time} ${last.action} ${last.path} (${last.reason}) id ${last.id}` : 'no alerts');
      }
      return 0;
    } finally {
      safeClose(l.rootFd);
    }
  },
};
