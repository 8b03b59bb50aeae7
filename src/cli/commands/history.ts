import type { CommandSpec } from '../types.js';
import { modeChangesOf, readHistory, readPatch } from '../../store/history.js';
import { loadBaseline } from '../../store/load-baseline.js';
import { colorDiff, printable } from '../output.js';
import { parseCount, windowOf } from '../when.js';
import { page, pagerCommand } from '../pager.js';

export const historyCommand: CommandSpec = {
  name: 'history',
  summary: 'Accepted states, newest first (one git commit each), for the root or one path.',
  usage: 'history [PATH] [-p] [--since WHEN] [--until WHEN] [-n N] [--no-pager] [--root DIR] [--json]',
  allowPositionals: true,
  options: {
    patch: { type: 'boolean', short: 'p', default: false },
    since: { type: 'string' },
    until: { type: 'string' },
    'max-count': { type: 'string', short: 'n' },
    'no-pager': { type: 'boolean', default: false },
  },
  async run(ctx) {
    const path = ctx.positionals[0];
    // Refuse bad values before any work.
    const inWindow = windowOf(ctx.values);
    const max = parseCount(ctx.values['max-count'], '-n');
    const l = loadBaseline(ctx.root);
    const kind = path ? (l.state.entry(path)?.kind ?? l.pset.kindOf(path) ?? 'text') : undefined;
    let entries;
    const withPatch = ctx.values.patch;
    const lines: string[] = [];
    try {
      entries = (await readHistory(l.store, path, kind)).filter((e) => inWindow(e.date));
      if (max !== null) entries = entries.slice(0, max);
      if (ctx.json) {
        ctx.out.json(withPatch ? await Promise.all(entries.map(async (e) => ({ ...e, patch: await readPatch(l.store, e.commit, path, kind) }))) : entries);
        return 0;
      }
      for (const e of entries) {
        lines.push(`${ctx.out.color.yellow(e.commit.slice(0, 10))} ${e.date}`);
        for (const line of e.message.split('\n')) lines.push(`    ${printable(line)}`);
        if (withPatch) {
          const patch = (await readPatch(l.store, e.commit, path, kind)).replace(/\n$/, '');
          if (patch) lines.push(colorDiff(patch.split('\n').map(printable).join('\n'), ctx.out.color));
          else if (path) for (const m of modeChangesOf(e.message, path)) lines.push(`  mode only: ${printable(path)} ${m} (the content did not change)`);
          lines.push('');
        }
      }
    } finally { l.close(); }
    if (entries.length === 0) lines.push('no history');
    await page(lines, pagerCommand(process.env, Boolean(process.stdout.isTTY), ctx.json, Boolean(ctx.values['no-pager'])));
    return 0;
  },
};
