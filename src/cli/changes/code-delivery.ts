/**
 * Whether a one-time code is on its way to the owner, or only queued (docs/CONTRACT.md §Changes: say
 * "queued" rather than "sent" while no notifier is running). The code always goes into
 * snapshots/outbox; a notifier — embedded in `warden run` or the warden-notify unit —
 * delivers it. We say "sent" only when we can see a live notifier with a Discord channel.
 */
import { deliveryReport } from '../delivery.js';
import { pidAlive } from '../../store/lock.js';

export type CodeDelivery = 'sent' | 'queued';

export function codeDelivery(root: string): CodeDelivery {
  try {
    const r = deliveryReport(root);
    if (!r?.notifier || !pidAlive(r.notifier.pid) || !r.channels.discord) return 'queued';
    return 'sent';
  } catch { return 'queued'; }
}

export function codeWhere(d: CodeDelivery): string {
  return d === 'sent'
    ? "sent to the owner's Discord"
    : "queued for the owner's Discord in the store's outbox, not sent: no notifier is running ('warden run', or the warden-notify unit, delivers it)";
}
