import { readDeliveryState, findNotifierStateDir, type DeliveryReport } from '../notifier/delivery-state.js';

/** The notifier's delivery state: the embedded one (`warden run`), else the standalone unit's. */
export function deliveryReport(root: string): DeliveryReport | null {
  // findNotifierStateDir: the embedded notifier's, else the deployment unit's StateDirectory=
  // (/var/lib/warden-notify for the warden account), else this account's own.
  try {
    const r = readDeliveryState(root, findNotifierStateDir(root));
    return r.stateFound ? r : null;
  } catch { return null; /* unreadable: no report */ }
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

/**
 * Items not delivered yet, per channel that is on: a channel that is off (absent on this
 * machine) owes nothing, so it is never counted as "not delivered yet".
 */
export function undeliveredOn(report: DeliveryReport | null, off: ReadonlyMap<string, string>): Map<string, number> {
  const owed = new Map<string, number>();
  for (const items of [report?.alerts ?? {}, report?.messages ?? {}]) {
    for (const per of Object.values(items)) {
      for (const [ch, s] of Object.entries(per)) {
        if (off.has(ch) || !s || (s.state !== 'pending' && s.state !== 'failed')) continue;
        owed.set(ch, (owed.get(ch) ?? 0) + 1);
      }
    }
  }
  return owed;
}
