/**
 * The approved content of a path, for a restore (docs/ARCHITECTURE.md, "The pipeline", step
 * "act"). Approved bytes are not held in memory: the blob is read and used only if it hashes
 * to the authenticated sha256. Missing or altered: the store check rebuilds it from another
 * live file that still has that content, if any; else the revert fails closed.
 */
import type { BaselineState } from '../store/baseline-state.js';
import type { StoreFd } from '../store/store.js';
import type { Approved } from './revert.js';

export interface ApprovedSource {
  state: BaselineState;
  storeFd: StoreFd;
  /** The store check: rebuild the blob of `sha256` from a live file that has it. */
  rebuild(sha256: string): void;
  /** Paths whose approved content is gone (a start fails closed on them). */
  unavailable: Set<string>;
  /** The tamper alert. */
  tamper(detail: string): void;
}

/** The approved entry and bytes of `path`; throws EBADBASELINE (after the tamper alert) when there are none. */
export function approvedFor(s: ApprovedSource, path: string): Approved {
  const entry = s.state.entry(path);
  let bytes = s.state.bytesOf(s.storeFd, path);
  if (entry && !bytes) { s.rebuild(entry.sha256); bytes = s.state.bytesOf(s.storeFd, path); }
  if (!entry || !bytes) {
    s.unavailable.add(path);
    s.tamper(`the store copy of the approved content of ${path} is missing or altered, and no live file has it; ${path} cannot be reverted`);
    throw Object.assign(new Error('approved content unavailable'), { code: 'EBADBASELINE' });
  }
  s.unavailable.delete(path);
  return { entry, bytes };
}
