/**
 * What an alert's quarantine holds now, for wording that tells the truth: a file seen empty
 * (`echo … > file` truncates first) is often written a moment later, and its quarantined
 * inode (hard-linked before the revert) then holds that content, not nothing.
 */
import { keptAt } from '../store/kept.js';
import { lstatAt, withDir } from '../fsx/beneath.js';
import type { Alert } from '../store/alert-types.js';
import { Store } from '../store/store.js';

/** Size of the alert's quarantined regular file; null when none is kept or it is not one. */
export function rejectedSize(store: Store, a: Alert): number | null {
  if (!a.quarantine) return null;
  const k = keptAt(a.quarantine, a.id, (rel) => store.label(rel));
  if (!k) return null;
  return withDir(store.fd, k.dir, (fd) => {
    const st = lstatAt(fd, k.name);
    return st && st.isFile() ? st.size : null;
  }, () => null);
}

/** For alerts that say "emptied": id → the bytes their rejected file holds now (only those that hold some). */
export function writtenAfterEmptied(root: string, alerts: readonly Alert[]): Map<string, number> {
  const out = new Map<string, number>();
  const emptied = alerts.filter((a) => a.quarantine && (a.reason === 'emptied' || a.also?.includes('emptied')));
  if (!emptied.length) return out;
  let store: Store;
  try { store = Store.open(root); } catch { return out; }
  try {
    for (const a of emptied) {
      const n = rejectedSize(store, a);
      if (n) out.set(a.id, n);
    }
  } finally { store.close(); }
  return out;
}
