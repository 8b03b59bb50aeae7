import type { CommandSpec } from '../types.js';
import { EXIT, WardenError } from '../../common/errors.js';
import { approveLoop } from '../changes/flow.js';
import { runChangeOp } from '../changes/writer.js';
import type { PendingView } from '../../changes/approvals.js';
import { refusing } from './apply.js';

export const approveCommand: CommandSpec = {
  name: 'approve',
  summary: 'Answer a pending approval: confirm on the terminal, or give the one-time code; without ID, list pending requests.',
  usage: 'approve [ID] [--code CODE] [--root DIR] [--json]',
  allowPositionals: true,
  options: { code: { type: 'string' } },
  async run(ctx) {
    const [id, ...extra] = ctx.positionals;
    if (extra.length) throw new WardenError('usage: warden approve [ID] [--code CODE]');
    return refusing(ctx, 'approve', async () => {
      if (!id) {
        const r = await runChangeOp(ctx.root, { action: 'list' });
        if (!r.ok) throw new WardenError(String(r.error), Number(r.exitCode ?? 1));
        const list = r.pending as PendingView[];
        if (ctx.json) ctx.out.json(list);
        else if (!list.length) ctx.out.line('no pending approvals');
        else for (const p of list) ctx.out.line(`${p.id}  ${p.approval}  ${p.paths.join(', ')}  'warden ${p.command}' by ${p.user}, expires ${p.expires}`);
        return EXIT.ok;
      }
      const r = await runChangeOp(ctx.root, { action: 'show', id });
      // Decided before asking: a stale request was replaced by a fresh one (new id, new code).
      if (r.stale && r.pending) {
        if (!ctx.json) ctx.out.err(`warden: ${String(r.error)}`);
        return approveLoop(ctx, r.pending as PendingView, undefined, true);
      }
      if (!r.ok) throw new WardenError(String(r.error), Number(r.exitCode ?? 1));
      return approveLoop(ctx, r.pending as PendingView, ctx.values.code as string | undefined, true);
    });
  },
};

export const denyCommand: CommandSpec = {
  name: 'deny',
  summary: 'Refuse a pending approval: the change is dropped and nothing is applied.',
  usage: 'deny ID [--root DIR] [--json]',
  allowPositionals: true,
  async run(ctx) {
    const [id, ...extra] = ctx.positionals;
    if (!id || extra.length) throw new WardenError('usage: warden deny ID');
    return refusing(ctx, 'deny', async () => {
      const r = await runChangeOp(ctx.root, { action: 'answer', id, answer: 'deny' });
      if (!r.ok) throw new WardenError(String(r.error), Number(r.exitCode ?? 1));
      if (ctx.json) ctx.out.json({ ok: true, denied: id });
      else ctx.out.line(`request ${id} denied; nothing was changed`);
      return EXIT.ok;
    });
  },
};
