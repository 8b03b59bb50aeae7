/** `warden notify test`: send a test message on every configured channel and report each. */
import { fstatSync } from 'node:fs';
import { isatty } from 'node:tty';
import { EXIT, WardenError } from '../../common/errors.js';
import { loadWardenConfig } from '../../store/approved-config.js';
import type { CommandSpec } from '../types.js';
import { relayingNotifier, relayTest } from '../notify-relay.js';

/**
 * Where a line on stderr lands: the journal only when stderr is the journal's stream
 * (systemd sets $JOURNAL_STREAM to its device:inode), else this command's own stderr.
 */
export function journalWhere(env: NodeJS.ProcessEnv, fd: number): string {
  let st;
  try { st = fstatSync(fd); } catch { return 'stderr (closed)'; }
  if (env.JOURNAL_STREAM && env.JOURNAL_STREAM === `${st.dev}:${st.ino}`) return 'the journal (stderr is its stream)';
  return `this command's stderr${isatty(fd) ? ' (the terminal, above)' : ''}, not the journal; the guard's journal lines reach the journal when it runs under systemd ('journalctl -u warden-guard')`;
}

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
    // In the deployment the token is the running notifier's alone: Discord's test goes through it (cli/notify-relay.ts).
    const relay = config.notify.discord ? relayingNotifier(ctx.root) : null;
    const viaNotifier = [];
    if (relay) {
      const { formatTest } = await import('../../notifier/format.js');
      const m = formatTest(ctx.root, new Date());
      viaNotifier.push(await relayTest(ctx.root, `${m.title}: ${m.body}`, relay.pid));
    }
    const here = relay ? { ...config, notify: { ...config.notify, discord: undefined } } : config;
    const sent = [...viaNotifier, ...await sendTestMessages(ctx.root, here, (l) => ctx.out.err(l))];
    // The journal channel is a line on stderr: say where that went, not "journal ok".
    const where = journalWhere(process.env, 2);
    const results = sent.map((r) => (r.channel === 'journal' && r.ok ? { ...r, where } : 'via' in r && r.via ? { ...r, where: r.via } : r));
    // A channel that is off here (no desktop session) is reported as off, not as a failure:
    // the command succeeds when every channel that can run works, and one at least does.
    const ok = results.every((r) => r.state !== 'failed') && results.some((r) => r.state === 'ok');
    if (ctx.json) ctx.out.json({ ok, results });
    for (const r of results) {
      const at = 'where' in r && r.where ? (r.channel === 'journal' ? `: the line went to ${r.where}` : `: ${r.where}`) : '';
      if (r.state === 'ok') ctx.out.line(`${ctx.out.color.green('ok')}    ${r.channel}${at}`);
      else if (r.state === 'off') ctx.out.line(`${ctx.out.color.yellow('off')}   ${r.channel}: ${r.error}`);
      else ctx.out.line(`${ctx.out.color.red('FAIL')}  ${r.channel}: ${r.error}`);
    }
    return ok ? EXIT.ok : EXIT.finding;
  },
};
