/**
 * The restore's step for a file's ACL and extended attributes (docs/ARCHITECTURE.md, "What a
 * protected file's approved state is"): on the file warden just wrote, before the rename, make
 * the kept attributes exactly the approved ones. A new file can inherit an ACL from its
 * directory's default ACL; that goes too. Where extended attributes cannot be read at all (no
 * binding) nothing is done: nothing is claimed about them either (classify).
 */
import { setXattrsFd, xattrsAvailable, type XattrSet } from '../fsx/xattrs.js';

export function approvedAttrs(entry: { xattrs?: XattrSet }): ((fd: number) => void) | undefined {
  if (!xattrsAvailable()) return undefined;
  const want = entry.xattrs ?? {};
  return (fd) => setXattrsFd(fd, want);
}
