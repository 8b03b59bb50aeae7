import { readDeliveryState, defaultNotifierStateDir, type DeliveryReport } from '../notifier/delivery-state.js';

/** The notifier's delivery state: the embedded one (`warden run`), else the standalone unit's. */
export function deliveryReport(root: string): DeliveryReport | null {
  for (const embedded of [true, false]) {
    try {
      const r = readDeliveryState(root, defaultNotifierStateDir(root, embedded));
      if (r.stateFound) return r;
    } catch { /* unreadable: try the other */ }
  }
  return null;
}

/**
 * Channels that are simply absent on this machine (the desktop channel without
 * notify-send): shown as "off" with the reason, once, rather than as a failure per alert.
 */
export function channelsOff(report: DeliveryReport | null): Map<string, string> {
  const off = new Map<string, string>();
  for (const [name, ch] of Object.entries(report?.channels ?? {})) {
    if (ch?.status === 'unavailable' && ch.last_error && /not installed/.test(ch.last_error.message)) off.set(name, ch.last_error.message.replace(/\s*\(.*\)$/, ''));
  }
  return off;
}
