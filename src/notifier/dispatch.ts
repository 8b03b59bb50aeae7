/**
 * What a channel sends next, decided without I/O: owner codes first (one each, never
 * folded, no storm wait), then every pending alert folded into one message once the storm
 * interval has passed, else a liveness message when the channel has been quiet too long.
 */
import type { ChannelState } from './delivery-state.js';
import type { Item } from './inbox.js';

export type Next =
  | { what: 'message'; item: Extract<Item, { kind: 'owner-code' }> }
  | { what: 'alerts'; items: Extract<Item, { kind: 'alert' }>[] }
  | { what: 'liveness' }
  | null;

export interface DispatchRules {
  now: number;
  /** notify.min_interval_seconds, in ms: the storm interval between alert messages. */
  minIntervalMs: number;
  /** notify.liveness_hours (0 or undefined: never). */
  livenessHours: number | undefined;
  /** When this notifier started: liveness counts from there at the earliest. */
  startedAt: number;
}

export function nextDelivery(pending: readonly Item[], cs: ChannelState, r: DispatchRules): Next {
  const code = pending.find((i): i is Extract<Item, { kind: 'owner-code' }> => i.kind === 'owner-code');
  if (code) return { what: 'message', item: code };
  const alerts = pending.filter((i): i is Extract<Item, { kind: 'alert' }> => i.kind === 'alert');
  if (alerts.length) {
    // A last-message time in the future (clock set back) counts as now.
    const last = cs.last_alert_message ? Math.min(Date.parse(cs.last_alert_message), r.now) : 0;
    return r.now >= last + r.minIntervalMs ? { what: 'alerts', items: alerts } : null;
  }
  if (r.livenessHours) {
    const lastAny = Math.max(cs.last_success ? Date.parse(cs.last_success) : 0, r.startedAt);
    if (r.now - lastAny >= r.livenessHours * 3_600_000) return { what: 'liveness' };
  }
  return null;
}
