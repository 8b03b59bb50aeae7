/**
 * Desktop notifications through node-notifier's notify-send backend, critical urgency.
 * node-notifier caches "notify-send not found" for the life of the process and gives
 * the callback a plain string (stderr) on success, so only an Error means failure.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import nodeNotifier from 'node-notifier';
import { DeliveryError, type Channel } from './channel.js';
import { DESKTOP_LIMIT, type OutgoingMessage } from './format.js';

const TIMEOUT_MS = 15_000;
const NOT_INSTALLED = 'notify-send is not installed (desktop notifications are off; install it, e.g. libnotify-bin, and restart warden)';
const NO_SESSION = 'no desktop session here (no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is not set, $XDG_RUNTIME_DIR/bus is missing and there is no DISPLAY): desktop notifications are off; in the deployment the owner\'s own unit shows them (warden desktop, docs/DEPLOY.md §2.8)';

function onPath(cmd: string, env: NodeJS.ProcessEnv): boolean {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try { accessSync(join(dir, cmd), constants.X_OK); return true; } catch { /* next */ }
  }
  return false;
}

function isSocket(path: string): boolean {
  try { return statSync(path).isSocket(); } catch { return false; }
}

/**
 * A notification's body is markup to the notification server (the Desktop Notifications
 * spec's body-markup: `<b>`, `<i>`, `<u>`, `<a href>`, `<img>`, entities), its title is
 * not. warden's body is plain text that quotes names the agent chose, so `&`, `<` and `>`
 * become entities: a file named `<a href="…">` is shown, never a link (docs/NOTIFY.md).
 */
export function bodyText(s: string): string {
  return s.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

/**
 * Why desktop notifications cannot work in this process, known before any send (shown at
 * the notifier's start, docs/NOTIFY.md), or null when they may: notify-send must be on
 * PATH and a session bus reachable the way libnotify finds one.
 */
export function desktopOffReason(env: NodeJS.ProcessEnv = process.env): string | null {
  if (!onPath('notify-send', env)) return NOT_INSTALLED;
  if (env.DBUS_SESSION_BUS_ADDRESS || env.DISPLAY || env.WAYLAND_DISPLAY) return null;
  if (env.XDG_RUNTIME_DIR && isSocket(join(env.XDG_RUNTIME_DIR, 'bus'))) return null;
  return NO_SESSION;
}

export class DesktopChannel implements Channel {
  readonly name = 'desktop' as const;
  readonly limit = DESKTOP_LIMIT;
  private notifier = new nodeNotifier.NotifySend({ withFallback: false });

  probe(): string | null { return desktopOffReason(); }

  send(msg: OutgoingMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      let done = false;
      const finish = (err?: DeliveryError) => { if (done) return; done = true; clearTimeout(timer); if (err) reject(err); else resolve(); };
      // A hung D-Bus must not wedge the channel.
      const timer = setTimeout(() => finish(new DeliveryError('notify-send did not finish within 15 s', 'unavailable')), TIMEOUT_MS);
      try {
        this.notifier.notify(
          { title: msg.title, message: bodyText(msg.body.slice(0, this.limit)), urgency: 'critical', 'app-name': 'warden' } as Parameters<typeof this.notifier.notify>[0],
          (err: Error | null) => {
            if (err instanceof Error) {
              // exec's message is "Command failed: <command line>\n<stderr>": keep the stderr part.
              const [first = '', ...rest] = err.message.trim().split('\n');
              const m = first.startsWith('Command failed') ? rest.join(' ').trim() || `exit code ${String((err as { code?: unknown }).code)}` : first;
              const missing = /not found|must be installed|ENOENT/i.test(first);
              finish(new DeliveryError(missing ? NOT_INSTALLED : `notify-send failed (no desktop session / D-Bus?): ${m.slice(0, 200)}`, 'unavailable'));
            } else finish();
          },
        );
      } catch (err) {
        finish(new DeliveryError(`notify-send failed: ${(err as Error).message}`, 'unavailable'));
      }
    });
  }
}
