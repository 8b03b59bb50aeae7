/**
 * Make many writes durable together. Node has no syncfs(2); coreutils `sync -f` is that
 * one call. A per-file fsync costs a journal commit each (10,000 blobs took minutes on a
 * loaded disk); one syncfs flushes every file and directory entry of the filesystem at once.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, constants, existsSync, fsyncSync, openSync } from 'node:fs';
import { at } from './beneath.js';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = constants;

/** An absolute path: PATH is not consulted for a tool warden relies on for durability. */
const SYNC = ['/usr/bin/sync', '/bin/sync'].find((p) => existsSync(p)) ?? null;

/**
 * When this returns, `names` in dirFd (already written and renamed into place) and the
 * directory itself are on stable storage. One syncfs of the filesystem holding dirFd when
 * `sync -f` works (it reaches the directory through /proc/<pid>/fd, our own descriptor);
 * otherwise an fsync of each file and then of the directory. Any I/O error throws.
 */
export function syncNamesIn(dirFd: number, names: readonly string[]): 'syncfs' | 'fsync' {
  if (SYNC && names.length > 1) {
    const r = spawnSync(SYNC, ['-f', `/proc/${process.pid}/fd/${dirFd}`], { stdio: 'ignore', timeout: 300_000 });
    if (r.status === 0) return 'syncfs';
  }
  for (const n of names) {
    const fd = openSync(at(dirFd, n), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    try { fsyncSync(fd); } finally { closeSync(fd); }
  }
  fsyncSync(dirFd);
  return 'fsync';
}
