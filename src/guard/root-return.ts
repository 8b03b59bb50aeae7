/**
 * The root the store recorded, back at the root path (docs/ARCHITECTURE.md, invariant 19):
 * the guard started on a root path that named a foreign object it could not move aside (a
 * file system mounted there while it was stopped), waited, and now the path names the
 * recorded root directory again (the mount was removed). That directory is warden's own:
 * it is opened (no symlink followed anywhere on the way) and held, never made anew.
 */
import { basename } from 'node:path';
import { constants, fstatSync, openSync } from 'node:fs';
import { at, safeClose } from '../fsx/beneath.js';
import type { Store } from '../store/store.js';
import { openParentNoFollow } from './dir-repair.js';
import type { Ident } from './root-path.js';

/** The directory at `root`, held open, when it is the one `store` recorded; else null. */
export function openRecordedRoot(root: string, store: Pick<Store, 'rootReplaced'>): { fd: number; id: Ident } | null {
  let parent: number;
  try { parent = openParentNoFollow(root); } catch { return null; }
  try {
    let fd: number;
    try { fd = openSync(at(parent, basename(root)), constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW); } catch { return null; }
    const st = fstatSync(fd);
    if (store.rootReplaced(fd) !== null) { safeClose(fd); return null; }
    return { fd, id: { dev: st.dev, ino: st.ino } };
  } finally { safeClose(parent); }
}
