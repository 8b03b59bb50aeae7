import type { CommandSpec } from '../types.js';
import { inspectAll } from '../../guard/inspect.js';
import { loadBaseline, octal } from '../../store/load-baseline.js';

export const verifyCommand: CommandSpec = {
  name: 'verify',
  summary: 'Check every protected file against the baseline once, changing nothing (exit 1 on drift).',
  usage: 'verify [--root DIR] [--json]',
  async run(ctx) {
    const l = loadBaseline(ctx.root);
    try {
      const findings = inspectAll(l.rootFd, l.state, l.pset, l.config.max_bytes);
      const rows = findings.map((f) => {
        const d = f.isDir ? l.state.index.dirs[f.path] : undefined;
        const fe = f.isDir ? undefined : l.state.entry(f.path);
        const e = d ?? fe;
        return {
          path: f.path, directory: f.isDir, reason: f.verdict.reason, also: f.verdict.also,
          expected: e ? { mode: octal(e.mode), uid: e.uid, gid: e.gid, ...(fe ? { sha256: fe.sha256, size: fe.size } : {}) } : null,
          found: f.obs.type === 'absent' ? null : { type: f.obs.type, mode: octal(f.obs.mode), uid: f.obs.uid, gid: f.obs.gid, size: f.obs.size, ...(f.obs.sha256 ? { sha256: f.obs.sha256 } : {}) },
        };
      });
      if (ctx.json) ctx.out.json({ clean: rows.length === 0, checked: l.state.paths().length, drift: rows });
      else if (rows.length === 0) ctx.out.line(ctx.out.color.green(`clean: ${l.state.paths().length} file(s) match the baseline`));
      else {
        for (const r of rows) {
          const what = [r.reason, ...r.also].join(', ');
          const detail = r.found?.type && r.found.type !== 'file' && r.found.type !== 'dir' ? ` (now a ${r.found.type})` : '';
          ctx.out.line(`${ctx.out.color.red('DRIFT')} ${r.path || "."}: ${what}${detail}`);
        }
        ctx.out.line(`${rows.length} path(s) differ from the baseline`);
      }
      return rows.length === 0 ? 0 : 1;
    } finally {
      l.close();
    }
  },
};
