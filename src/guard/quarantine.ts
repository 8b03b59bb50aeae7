/**
 * Rejected content is kept under the store's quarantine/<alert-id>/ (SPEC §5): moved there
 * (links, directories, FIFOs, unexpected files), hard-linked (too-large files), or written
 * from the bytes already read (content edits, after the restore to keep the revert short).
 */
import { fsyncSync } from 'node:fs';
import { errnoCode } from '../common/errors.js';
import { createFileAt, ensureDirBeneath, linkAt, moveAt, safeClose } from '../fsx/beneath.js';
import { QUARANTINE_DIR } from '../store/layout.js';
import type { Store } from '../store/store.js';

export class Quarantine {
  constructor(
    private readonly store: Store,
    private readonly log: (line: string) => void,
    /** Repair a damaged layout entry (quarantine/ planted as a link or a file); true when it did. */
    private readonly repair: (name: string) => boolean = () => false,
  ) {}

  private dir(id: string): number {
    try {
      return ensureDirBeneath(this.store.fd, `${QUARANTINE_DIR}/${id}`, 0o700);
    } catch (err) {
      // Never followed: a quarantine/ that is a link or a file is moved aside and recreated.
      if (!this.repair(QUARANTINE_DIR)) throw err;
      return ensureDirBeneath(this.store.fd, `${QUARANTINE_DIR}/${id}`, 0o700);
    }
  }

  /** Move `name` out of `dirFd` into the alert's quarantine directory. */
  move(id: string, dirFd: number, name: string): string {
    const q = this.dir(id);
    try { moveAt(dirFd, name, q, name); fsyncQuiet(q); } finally { safeClose(q); }
    return this.store.label(`${QUARANTINE_DIR}/${id}/${name}`);
  }

  /** Keep a file we will not read whole: a hard link, or a move when linking is refused. */
  linkOrMove(id: string, dirFd: number, name: string): string {
    const q = this.dir(id);
    try {
      try { linkAt(dirFd, name, q, name); } catch { moveAt(dirFd, name, q, name); }
    } finally { safeClose(q); }
    return this.store.label(`${QUARANTINE_DIR}/${id}/${name}`);
  }

  /** Keep bytes already read. A failure is logged; the revert itself has happened. */
  write(id: string, name: string, bytes: Buffer): string | null {
    try {
      const q = this.dir(id);
      try { createFileAt(q, name, bytes, 0o600); } finally { safeClose(q); }
      return this.store.label(`${QUARANTINE_DIR}/${id}/${name}`);
    } catch (err) {
      this.log(`<3>warden: could not keep rejected content of ${name} in quarantine: ${errnoCode(err) ?? err}`);
      return null;
    }
  }
}

/** Durability of a move is best effort: the alert, fsynced, is the record that matters. */
export function fsyncQuiet(fd: number): void {
  try { fsyncSync(fd); } catch { /* e.g. EINVAL on odd filesystems */ }
}
