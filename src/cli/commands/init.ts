import type { CommandSpec } from '../types.js';
import { initRoot } from '../../changes/init.js';
import { keyPath } from '../../store/keys.js';

export const initCommand: CommandSpec = {
  name: 'init',
  summary: 'Record the first baseline of every protected file (refuses to replace one without --force).',
  usage: 'init [--force] [--root DIR] [--json]',
  options: { force: { type: 'boolean', default: false } },
  async run(ctx) {
    const r = await initRoot(ctx.root, { force: Boolean(ctx.values.force) });
    const paths = r.state.paths();
    if (ctx.json) ctx.out.json({ root: ctx.root, files: paths, dirs: Object.keys(r.state.index.dirs), key: keyPath(ctx.root), store: r.storeDir });
    else {
      ctx.out.line(`Baseline recorded: ${r.files} file(s), ${r.dirs} protected director${r.dirs === 1 ? 'y' : 'ies'} in ${r.storeDir}`);
      for (const p of paths) ctx.out.line(`  ${p}`);
      ctx.out.line(`HMAC key: ${keyPath(ctx.root)} (keep it; it authenticates the baseline)`);
    }
    return 0;
  },
};
