import type { CommandSpec } from '../types.js';
import { WardenError } from '../../common/errors.js';
import { escapeText } from '../../common/escape.js';
import { rehome } from '../../store/rehome.js';

/**
 * A moved root gets its key, seal and store back under its new identity (src/store/rehome.ts);
 * `--here`: the directory now at the root path (a file system mounted there) becomes the
 * root (src/changes/rehome-here.ts).
 */
export const rehomeCommand: CommandSpec = {
  name: 'rehome',
  summary: "After moving a root: move its HMAC key, seal and store to the root's new path (--from OLD-PATH), or adopt the directory now at the root path (--here).",
  usage: 'rehome --from OLD-PATH [--root DIR] [--json]\nrehome --here [--root DIR] [--json]',
  options: { from: { type: 'string' }, here: { type: 'boolean', default: false } },
  async run(ctx) {
    const from = ctx.values.from;
    if (ctx.values.here) {
      if (from !== undefined) throw new WardenError('--here and --from exclude each other');
      const { rehomeHere } = await import('../../changes/rehome-here.js');
      const r = await rehomeHere(ctx.root, (l) => ctx.out.err(l));
      if (ctx.json) ctx.out.json(r);
      else {
        ctx.out.line(r.already
          ? `${escapeText(r.root)} is already the recorded root (device ${r.dev}, inode ${r.ino}); recorded again`
          : `${escapeText(r.root)}: the directory now at the path (device ${r.dev}, inode ${r.ino}, owned by uid ${r.uid}) is recorded as the root`);
        if (r.written.length) ctx.out.line(`wrote ${r.written.length} approved entr${r.written.length === 1 ? 'y' : 'ies'} it lacked:`);
        for (const p of r.written) ctx.out.line(`  ${escapeText(p)}`);
        if (r.left.length) ctx.out.line(`left to the guard (it puts them right at its start, with an alert each):`);
        for (const p of r.left) ctx.out.line(`  ${escapeText(p)}`);
        ctx.out.line("check with 'warden verify', then start the guard again");
      }
      return 0;
    }
    if (typeof from !== 'string' || !from.startsWith('/')) throw new WardenError('usage: warden rehome --from OLD-PATH (the absolute path the root had before it was moved), or warden rehome --here (adopt the directory now at the root path)');
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
