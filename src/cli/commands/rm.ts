import type { CommandSpec } from '../types.js';
import { WardenError } from '../../common/errors.js';
import { normalizeRelPath } from '../../changes/apply.js';
import { proposeAndApprove } from '../changes/flow.js';
import { refusing } from './apply.js';

export const rmCommand: CommandSpec = {
  name: 'rm',
  summary: 'Remove an org or block file (or an extra [[protect]] file) through the sanctioned path.',
  usage: 'rm PATH [--root DIR] [--json]',
  allowPositionals: true,
  async run(ctx) {
    const [given, ...extra] = ctx.positionals;
    if (!given || extra.length) throw new WardenError('usage: warden rm PATH');
    const path = normalizeRelPath(given);
    return refusing(ctx, 'rm', () => proposeAndApprove(ctx, [{ path, content: null }], `rm ${path}`));
  },
};
