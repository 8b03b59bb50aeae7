/**
 * The one-writer lock (SPEC §8): snapshots/control/warden.lock holds the pid of the daemon, or of
 * a command applying a change while the daemon is down. A lock whose pid is gone is stale.
 */
import { randomBytes } from 'node:crypto';
import { WardenError, errnoCode } from '../common/errors.js';
import { createFileAt, ensureDirBeneath, moveAt, readSmallAt, safeClose, unlinkAt } from '../fsx/beneath.js';
import { CONTROL_DIR } from './layout.js';
import type { StoreFd } from './store.js';

const NAME = 'warden.lock';

export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try { process.kill(pid, 0); return true; } catch (err) { return errnoCode(err) === 'EPERM'; }
}

function holder(dirFd: number): number | null {
  try {
    const b = readSmallAt(dirFd, NAME, 4096);
    if (!b) return null;
    const pid = Number.parseInt(b.toString('utf8'), 10);
    return Number.isFinite(pid) ? pid : -1;
  } catch { return -1; }
}

export interface Lock { release(): void }

export async function acquireLock(storeFd: StoreFd, waitMs: number): Promise<Lock> {
  const deadline = Date.now() + waitMs;
  const fd = ensureDirBeneath(storeFd, CONTROL_DIR);
  try {
    for (;;) {
      try {
        createFileAt(fd, NAME, Buffer.from(`${process.pid}\n`), 0o600, false);
        const dirFdCopy = ensureDirBeneath(storeFd, CONTROL_DIR);
        return {
          release() {
            try { if (holder(dirFdCopy) === process.pid) unlinkAt(dirFdCopy, NAME); } catch { /* gone */ }
            safeClose(dirFdCopy);
          },
        };
      } catch (err) {
        if (errnoCode(err) !== 'EEXIST') throw err;
      }
      const pid = holder(fd);
      if (pid !== null && pid !== -1 && !pidAlive(pid)) {
        // Stale: move it aside atomically; put it back if someone else's fresh lock was taken instead.
        const aside = `${NAME}.stale-${randomBytes(4).toString('hex')}`;
        try {
          moveAt(fd, NAME, fd, aside);
          const moved = Number.parseInt((readSmallAt(fd, aside, 4096) ?? Buffer.from('')).toString('utf8'), 10);
          if (moved !== pid) moveAt(fd, aside, fd, NAME); else unlinkAt(fd, aside);
        } catch { /* raced: loop */ }
        continue;
      }
      if (Date.now() >= deadline) {
        throw new WardenError(`snapshots/control/warden.lock is held by pid ${pid ?? '?'} (a running warden daemon or command); try again, or stop it first`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  } finally {
    safeClose(fd);
  }
}
