/** Create snapshots/ and its fixed directories (layout.ts STORE_DIRS), 0700, never following a link. */
import { ensureDirBeneath, safeClose } from '../fsx/beneath.js';
import { STORE_DIRS } from './layout.js';

export function ensureStoreDirs(rootFd: number): void {
  for (const d of STORE_DIRS) safeClose(ensureDirBeneath(rootFd, d, 0o700));
}
