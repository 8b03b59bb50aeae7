import type { CommandSpec } from '../types.js';
import { readHistory, readPatch } from '../../store/history.js';
import { loadBaseline } from '../../store/load-baseline.js';
import { colorDiff, printable } from '../output.js';

export const historyCommand: CommandSpec = {
  name: 'history',
  summary: 'Accepted states, newest first (one git commit each), for the root or one path.',
  usage: 'history [PATH] [-p] [--root DIR] [--json]',
  allowPositionals: true,
  options: { patch: { type: 'boolean', short: 'p', default: false } },
  async run(ctx) {
    const path = ctx.positionals[0];
    const l = loadBaseline(ctx.root);
    const kind = path ? (l.state.entry(path)?.kind ?? l.pset.kindOf(path) ?? 'text') : undefined;
    let entries;
    const withPatch = ctx.values.patch;
    try {
      entries = await readHistory(l.store, path, kind);
      if (ctx.json) {
        ctx.out.json(withPatch ? await Promise.all(entries.map(async (e) => ({ ...e, patch: await readPatch(l.store, e.commit, path, kind) }))) : entries);
        return 0;
      }
      for (const e of entries) {
        ctx.out.line(`${ctx.out.color.yellow(e.commit.slice(0, 10))} ${e.date}`);
        for (const line of e.message.split('\n')) ctx.out.line(`    ${printable(line)}`);
        if (withPatch) {
          const patch = (await readPatch(l.store, e.commit, path, kind)).replace(/\n$/, '');
          if (patch) ctx.out.line(colorDiff(patch.split('\n').map(printable).join('\n'), ctx.out.color));
          ctx.out.line();
        }
      }
    } finally { l.close(); }
    if (entries.length === 0) ctx.out.line('no history');
    return 0;
  },
};
