import type { CommandSpec } from '../types.js';
import { WardenError } from '../../common/errors.js';
import { normalizeRelPath } from '../../changes/apply.js';
import { proposeAndApprove } from '../changes/flow.js';
import { refusing } from './apply.js';

export const rmCommand: CommandSpec = {
  name: 'rm',
  summary: 'Remove org or block files (or extra [[protect]] files) through the sanctioned path, as one change.',
  usage: 'rm PATH [PATH …] [--root DIR] [--json]',
  allowPositionals: true,
  async run(ctx) {
    if (!ctx.positionals.length) throw new WardenError('usage: warden rm PATH [PATH …]');
    const paths = ctx.positionals.map(normalizeRelPath);
    return refusing(ctx, 'rm', () => proposeAndApprove(ctx, paths.map((path) => ({ path, content: null })), `rm ${paths.join(' ')}`));
  },
};
