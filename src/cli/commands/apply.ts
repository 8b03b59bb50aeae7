import type { CommandSpec } from '../types.js';
import { WardenError } from '../../common/errors.js';
import { normalizeRelPath, type ChangeRequest } from '../../changes/apply.js';
import { loadWardenConfig } from '../../store/approved-config.js';
import { printRefusal, proposeAndApprove } from '../changes/flow.js';
import { readProposal } from './apply-input.js';

export { readProposal } from './apply-input.js';

/** Run a change command, printing refusals (located errors) the usual way. */
export async function refusing(ctx: Parameters<CommandSpec['run']>[0], name: string, fn: () => Promise<number>): Promise<number> {
  try { return await fn(); }
  catch (err) { if (err instanceof WardenError) return printRefusal(ctx, name, err); throw err; }
}

/** "0600", "600", "0o600" → 0o600; anything else is a usage error. */
export function parseMode(s: string): number {
  const m = /^(?:0o?)?([0-7]{3,4})$/.exec(s.trim());
  const v = m ? parseInt(m[1] as string, 8) : NaN;
  if (!m || v > 0o777) throw new WardenError(`--mode ${JSON.stringify(s)}: give an octal file mode from 0000 to 0777, like 0600 (no setuid, setgid or sticky bits)`);
  return v;
}

const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : v === undefined ? [] : [String(v)]);

const USAGE = 'usage: warden apply PATH (--from FILE|- | --mode MODE | --from FILE --mode MODE) [PATH --from FILE …]';

export const applyCommand: CommandSpec = {
  name: 'apply',
  summary: 'Propose new versions (or modes) of protected files: validate them together, show the diff, ask approval, install them as one change.',
  usage: 'apply PATH --from FILE|- [--mode MODE] [PATH --from FILE …] [--rm PATH …] [--root DIR] [--json]\napply PATH --mode MODE [--root DIR] [--json]',
  allowPositionals: true,
  options: { from: { type: 'string', multiple: true }, mode: { type: 'string', multiple: true }, rm: { type: 'string', multiple: true } },
  async run(ctx) {
    // Several paths pair with their --from (and --mode) in order: PATH1 --from F1 PATH2 --from F2.
    const paths = ctx.positionals.map(normalizeRelPath);
    const froms = list(ctx.values.from);
    const modes = list(ctx.values.mode).map(parseMode);
    if (!paths.length) throw new WardenError(USAGE);
    if (paths.length === 1 && froms.length > 1) throw new WardenError(`${USAGE}\n(one --from per PATH)`);
    if (paths.length > 1 && froms.length !== paths.length) throw new WardenError(`${USAGE}\n(with several paths, each PATH needs its own --from, in the same order)`);
    if (modes.length > 1 && modes.length !== paths.length) throw new WardenError(`${USAGE}\n(--mode is given once per PATH, in the same order, or once for a single PATH)`);
    if (paths.length === 1 && !froms.length && !modes.length) throw new WardenError(USAGE);
    if (froms.filter((f) => f === '-').length > 1) throw new WardenError('only one --from may read stdin (-)');
    const config = loadWardenConfig(ctx.root);
    const changes: ChangeRequest[] = paths.map((path, i) => {
      const from = froms[i];
      const mode = paths.length === 1 ? modes[0] : modes[i];
      return from === undefined
        ? { path, content: null, keep: true, ...(mode !== undefined ? { mode } : {}) }
        : { path, content: readProposal(from, config.max_bytes), ...(mode !== undefined ? { mode } : {}) };
    });
    const removed = list(ctx.values.rm).map(normalizeRelPath);
    for (const path of removed) changes.push({ path, content: null });
    const what = paths.map((p, i) => `${p}${modes.length ? ` --mode ${(paths.length === 1 ? modes[0] : modes[i])!.toString(8).padStart(4, '0')}` : ''}`).join(' ') + removed.map((p) => ` --rm ${p}`).join('');
    return refusing(ctx, 'apply', () => proposeAndApprove(ctx, changes, `apply ${what}`));
  },
};
