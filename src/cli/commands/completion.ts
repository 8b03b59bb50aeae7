/** `warden completion bash|zsh|fish` (and `man`: the man page), from the --help table. */
import { EXIT, WardenError } from '../../common/errors.js';
import type { CommandSpec } from '../types.js';
import { bashCompletion, fishCompletion, manPage, zshCompletion } from '../completion.js';
import { version } from '../version.js';

export const completionCommand: CommandSpec = {
  name: 'completion',
  summary: 'Print shell completion for bash, zsh or fish (or the man page: man), generated from the --help table.',
  usage: 'completion bash|zsh|fish|man [--root DIR] [--json]',
  allowPositionals: true,
  rootOptional: true,
  async run(ctx) {
    const [shell, ...extra] = ctx.positionals;
    const gen = { bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion, man: () => manPage(version()) }[shell ?? ''];
    if (!gen || extra.length) throw new WardenError('usage: warden completion bash|zsh|fish|man (e.g. source <(warden completion bash))', EXIT.usage);
    process.stdout.write(gen());
    return EXIT.ok;
  },
};
