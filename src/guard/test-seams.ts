/**
 * The watch layers' test seams (docs/ARCHITECTURE.md, "Test seams"): each drops one layer's
 * events, as if the kernel had raised none, so a test can prove that the next layer finds
 * what that one missed. Set only by code running in this process before the guard starts
 * (test/helpers/seamed-main.ts, in-process tests): no environment variable, argument or
 * setting of the shipped daemon reaches them, so whoever sets the service's environment
 * cannot blind a detection layer.
 */
export const watchSeams: {
  /** A directory below the root: every event of its directory watch is dropped (watcher.ts). */
  dirWatchBlind: string | null;
  /** A protected file: every event of its inode watch is dropped (open-watch.ts). */
  inodeWatchBlind: string | null;
  /** Every event of the store check's blob-directory watches is dropped (blob-watch.ts). */
  storeWatchBlind: boolean;
} = { dirWatchBlind: null, inodeWatchBlind: null, storeWatchBlind: false };
