import type { CommandContext, CommandSpec } from '../types.js';
import { EXIT, WardenError } from '../../common/errors.js';
import { approveLoop } from '../changes/flow.js';
import { runChangeOp } from '../changes/writer.js';
import type { PendingView } from '../../changes/approvals.js';
import { refusing } from './apply.js';
import { grantLines } from '../../grants/lines.js';

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
        else {
          for (const p of list) {
            ctx.out.line(`${p.id}  ${p.approval}  ${p.paths.join(', ')}  'warden ${p.command}' by ${p.user}, expires ${p.expires}`);
            // What each grants (docs/PROFILES.md, "Grants in alerts, diffs and prompts"); 'warden approve ID' shows all of it.
            if (p.grants?.length) for (const l of grantLines({ grants: p.grants, left_off: p.grants_left_off }, 3)) ctx.out.line(`    ${l}`);
          }
        }
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
  usage: 'deny ID [--root DIR] [--json]\ndeny --all [--root DIR] [--json]',
  allowPositionals: true,
  options: { all: { type: 'boolean', default: false } },
  async run(ctx) {
    const [id, ...extra] = ctx.positionals;
    const all = Boolean(ctx.values.all);
    if (all ? id !== undefined : !id || extra.length) throw new WardenError('usage: warden deny ID, or warden deny --all');
    if (all || id === undefined) return refusing(ctx, 'deny', async () => denyAll(ctx));
    return refusing(ctx, 'deny', async () => {
      const r = await runChangeOp(ctx.root, { action: 'answer', id, answer: 'deny' });
      if (!r.ok) throw new WardenError(String(r.error), Number(r.exitCode ?? 1));
      if (ctx.json) ctx.out.json({ ok: true, denied: id });
      else ctx.out.line(`request ${id} denied; nothing was changed`);
      return EXIT.ok;
    });
  },
};

/** `deny --all`: every pending request is dropped; nothing is applied. */
async function denyAll(ctx: CommandContext): Promise<number> {
  const r = await runChangeOp(ctx.root, { action: 'list' });
  if (!r.ok) throw new WardenError(String(r.error), Number(r.exitCode ?? 1));
  const denied: string[] = [];
  for (const p of r.pending as PendingView[]) {
    const d = await runChangeOp(ctx.root, { action: 'answer', id: p.id, answer: 'deny' });
    if (!d.ok) throw new WardenError(`${String(d.error)} (denied before it: ${denied.join(', ') || 'none'})`, Number(d.exitCode ?? 1));
    denied.push(p.id);
    if (!ctx.json) ctx.out.line(`request ${p.id} denied (${p.paths.join(', ')})`);
  }
  if (ctx.json) ctx.out.json({ ok: true, denied });
  else ctx.out.line(denied.length ? `${denied.length} request(s) denied; nothing was changed` : 'no pending approvals');
  return EXIT.ok;
}
