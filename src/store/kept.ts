/**
 * Where an alert's kept content is in the store, from the label the alert names it by
 * (docs/CONTRACT.md §Revert): a rejected regular file is kept flat, as quarantine/<id>; an
 * object moved whole (a directory, a link, a FIFO) as quarantine/<id>/<name>. Pure.
 */
import { QUARANTINE_DIR } from './layout.js';

/** The directory (store-relative) and name to lstat; null when the label is neither form. */
export function keptAt(label: string, id: string, storeLabel: (rel: string) => string): { dir: string; name: string } | null {
  if (!/^[A-Za-z0-9._-]+$/.test(id) || id === '.' || id === '..') return null;
  if (label === storeLabel(`${QUARANTINE_DIR}/${id}`)) return { dir: QUARANTINE_DIR, name: id };
  const prefix = storeLabel(`${QUARANTINE_DIR}/${id}/`);
  if (!label.startsWith(prefix)) return null;
  const name = label.slice(prefix.length);
  if (!name || name.includes('/')) return null;
  return { dir: `${QUARANTINE_DIR}/${id}`, name };
}
