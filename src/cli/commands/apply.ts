import type { CommandSpec } from '../types.js';
import { WardenError } from '../../common/errors.js';
import { normalizeRelPath } from '../../changes/apply.js';
import { loadWardenConfig } from '../../store/approved-config.js';
import { printRefusal, proposeAndApprove } from '../changes/flow.js';
import { readProposal } from './apply-input.js';

export { readProposal } from './apply-input.js';

/** Run a change command, printing refusals (located errors) the usual way. */
export async function refusing(ctx: Parameters<CommandSpec['run']>[0], name: string, fn: () => Promise<number>): Promise<number> {
  try { return await fn(); }
  catch (err) { if (err instanceof WardenError) return printRefusal(ctx, name, err); throw err; }
}

export const applyCommand: CommandSpec = {
  name: 'apply',
  summary: 'Propose a new version of a protected file: validate, show the diff, ask approval, install it atomically.',
  usage: 'apply PATH --from FILE|- [--root DIR] [--json]',
  allowPositionals: true,
  options: { from: { type: 'string' } },
  async run(ctx) {
    const [given, ...extra] = ctx.positionals;
    const from = ctx.values.from as string | undefined;
    if (!given || extra.length || !from) throw new WardenError('usage: warden apply PATH --from FILE|-');
    const path = normalizeRelPath(given);
    const config = loadWardenConfig(ctx.root);
    const content = readProposal(from, config.max_bytes);
    return refusing(ctx, 'apply', () => proposeAndApprove(ctx, [{ path, content }], `apply ${path}`));
  },
};
