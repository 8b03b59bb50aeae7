/**
 * `warden desktop`: show the deployment's alerts as desktop notifications, in the owner's
 * own session (the user unit that `install-units --desktop-user NAME` renders). See
 * notifier/desktop-feed.ts for what it reads (the guard's journal entries only) and writes.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { WardenError } from '../../common/errors.js';
import { rootId } from '../../store/location.js';
import type { CommandSpec } from '../types.js';

const ROOT_ID = /^[0-9a-f]{16}$/;

/** The uid of a local account, from /etc/passwd (the guard's account, e.g. warden). */
export function uidOf(user: string, passwd = '/etc/passwd'): number | null {
  if (/^\d+$/.test(user)) return Number(user);
  try {
    for (const line of readFileSync(passwd, 'utf8').split('\n')) {
      const [name, , uid] = line.split(':');
      if (name === user && uid !== undefined && /^\d+$/.test(uid)) return Number(uid);
    }
  } catch { /* no passwd file */ }
  return null;
}

export const desktopCommand: CommandSpec = {
  name: 'desktop',
  summary: "Show the deployment's alerts as desktop notifications, as the owner in the owner's session (read from the guard's journal entries).",
  usage: 'desktop (--root-id ID | --root DIR) [--guard-user NAME] [--guard-unit UNIT]',
  options: {
    'root-id': { type: 'string' },
    'guard-user': { type: 'string' },
    'guard-unit': { type: 'string' },
  },
  rootOptional: true,
  async run(ctx) {
    // The unit names the root by its id: the owner may not be allowed into the agent's home.
    const given = ctx.values['root-id'] as string | undefined;
    const id = given ?? (existsSync(join(ctx.root, 'config', 'warden.toml')) ? rootId(ctx.root) : undefined);
    if (!id || !ROOT_ID.test(id)) throw new WardenError('--root-id ID (the root\'s identity, 16 hex digits; install-units --desktop-user renders it into the unit) or --root DIR is required');
    const user = (ctx.values['guard-user'] as string | undefined) ?? 'warden';
    const unit = (ctx.values['guard-unit'] as string | undefined) ?? 'warden-guard.service';
    if (!/^[A-Za-z0-9:_.@-]+\.service$/.test(unit)) throw new WardenError(`--guard-unit "${unit}" is not a service unit name`);
    const uid = uidOf(user);
    if (uid === null) throw new WardenError(`no account "${user}" on this machine (--guard-user: the account the guard runs as)`);
    const [{ runDesktopFeed }, { DesktopChannel }] = await Promise.all([import('../../notifier/desktop-feed.js'), import('../../notifier/desktop.js')]);
    const xdg = process.env.XDG_STATE_HOME;
    const stateDir = process.env.STATE_DIRECTORY?.split(':')[0] || join(xdg && xdg.startsWith('/') ? xdg : join(homedir(), '.local', 'state'), 'warden');
    const feed = runDesktopFeed({
      src: { unit, uid, rootId: id },
      cursorFile: join(stateDir, `desktop-${id}.cursor`),
      channel: new DesktopChannel(),
      log: (l) => process.stderr.write(`${process.stderr.isTTY ? l.replace(/^<[0-7]>/, '') : l}\n`),
    });
    const stop = () => feed.stop();
    process.on('SIGTERM', stop);
    process.on('SIGINT', stop);
    ctx.out.line(`following ${unit}'s alerts for root ${id} (uid ${uid}) in the system journal`);
    return feed.done;
  },
};
