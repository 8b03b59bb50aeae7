import type { CommandSpec } from '../types.js';
import { readHistory } from '../../store/history.js';
import { normalizeRelPath } from '../../changes/apply.js';
import { loadBaseline } from '../../store/load-baseline.js';

export const historyCommand: CommandSpec = {
  name: 'history',
  summary: 'Accepted states, newest first (one git commit each), for the root or one path.',
  usage: 'history [PATH] [--root DIR] [--json]',
  allowPositionals: true,
  async run(ctx) {
    const path = ctx.positionals[0] ? normalizeRelPath(ctx.positionals[0]) : undefined;
    const l = loadBaseline(ctx.root);
    const kind = path ? (l.state.entry(path)?.kind ?? l.pset.kindOf(path) ?? 'text') : undefined;
    let entries;
    try { entries = await readHistory(l.store, path, kind); } finally { l.close(); }
    if (ctx.json) { ctx.out.json(entries); return 0; }
    for (const e of entries) {
      ctx.out.line(`${ctx.out.color.yellow(e.commit.slice(0, 10))} ${e.date}`);
      for (const line of e.message.split('\n')) ctx.out.line(`    ${line}`);
    }
    if (entries.length === 0) ctx.out.line('no history');
    return 0;
  },
};
