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
