import type { CommandSpec } from '../types.js';
import { WardenError } from '../../common/errors.js';
import { rehome } from '../../store/rehome.js';

/** A moved root gets its key, seal and store back under its new identity (src/store/rehome.ts). */
export const rehomeCommand: CommandSpec = {
  name: 'rehome',
  summary: "After moving a root: move its HMAC key, seal and store to the root's new path (--from OLD-PATH).",
  usage: 'rehome --from OLD-PATH [--root DIR] [--json]',
  options: { from: { type: 'string' } },
  async run(ctx) {
    const from = ctx.values.from;
    if (typeof from !== 'string' || !from.startsWith('/')) throw new WardenError('usage: warden rehome --from OLD-PATH (the absolute path the root had before it was moved)');
    const r = rehome(ctx.root, from.replace(/\/+$/, ''));
    if (ctx.json) ctx.out.json(r);
    else {
      ctx.out.line(`re-homed ${r.from} → ${r.to}:`);
      for (const m of r.moved) ctx.out.line(`  ${m}`);
      ctx.out.line("check with 'warden verify', then start the guard again");
    }
    return 0;
  },
};
