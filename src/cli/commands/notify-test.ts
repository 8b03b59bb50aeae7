/** `warden notify test`: send a test message on every configured channel and report each. */
import { EXIT, WardenError } from '../../common/errors.js';
import { loadWardenConfig } from '../../store/approved-config.js';
import type { CommandSpec } from '../types.js';

export const notifyTestCommand: CommandSpec = {
  name: 'notify test',
  summary: 'Send a test message on every configured notification channel and report each result.',
  usage: 'notify test [--root DIR] [--json]',
  async run(ctx) {
    const config = loadWardenConfig(ctx.root);
    // Loaded lazily: only this command (and the notifier) needs the network clients.
    const { sendTestMessages, configuredChannels } = await import('../../notifier/index.js');
    if (configuredChannels(config).length === 0) {
      throw new WardenError('no notification channel is configured: add [notify.discord], [notify.desktop] or [notify.journal] to config/warden.toml', EXIT.usage);
    }
    const results = await sendTestMessages(ctx.root, config, (l) => ctx.out.err(l));
    const ok = results.every((r) => r.ok);
    if (ctx.json) ctx.out.json({ ok, results });
    for (const r of results) {
      ctx.out.line(r.ok ? `${ctx.out.color.green('ok')}    ${r.channel}` : `${ctx.out.color.red('FAIL')}  ${r.channel}: ${r.error}`);
    }
    return ok ? EXIT.ok : EXIT.finding;
  },
};
