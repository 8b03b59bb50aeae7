/**
 * Desktop notifications through node-notifier's notify-send backend, critical urgency.
 * node-notifier caches "notify-send not found" for the life of the process and gives
 * the callback a plain string (stderr) on success, so only an Error means failure.
 */
import nodeNotifier from 'node-notifier';
import { DeliveryError, type Channel } from './channel.js';
import { DESKTOP_LIMIT, type OutgoingMessage } from './format.js';

const TIMEOUT_MS = 15_000;

export class DesktopChannel implements Channel {
  readonly name = 'desktop' as const;
  readonly limit = DESKTOP_LIMIT;
  private notifier = new nodeNotifier.NotifySend({ withFallback: false });

  send(msg: OutgoingMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      let done = false;
      const finish = (err?: DeliveryError) => { if (done) return; done = true; clearTimeout(timer); if (err) reject(err); else resolve(); };
      // A hung D-Bus must not wedge the channel.
      const timer = setTimeout(() => finish(new DeliveryError('notify-send did not finish within 15 s', 'unavailable')), TIMEOUT_MS);
      try {
        this.notifier.notify(
          { title: msg.title, message: msg.body.slice(0, this.limit), urgency: 'critical', 'app-name': 'warden' } as Parameters<typeof this.notifier.notify>[0],
          (err: Error | null) => {
            if (err instanceof Error) {
              // exec's message is "Command failed: <command line>\n<stderr>": keep the stderr part.
              const [first = '', ...rest] = err.message.trim().split('\n');
              const m = first.startsWith('Command failed') ? rest.join(' ').trim() || `exit code ${String((err as { code?: unknown }).code)}` : first;
              const missing = /not found|must be installed|ENOENT/i.test(first);
              finish(new DeliveryError(missing ? 'notify-send is not installed (desktop notifications are off; install it, e.g. libnotify-bin, and restart warden)' : `notify-send failed (no desktop session / D-Bus?): ${m.slice(0, 200)}`, 'unavailable'));
            } else finish();
          },
        );
      } catch (err) {
        finish(new DeliveryError(`notify-send failed: ${(err as Error).message}`, 'unavailable'));
      }
    });
  }
}
