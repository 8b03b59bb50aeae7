/**
 * The detection layers' test seams (docs/ARCHITECTURE.md, "Test seams"): each drops one
 * layer's events, as if the kernel had raised none, or breaks or stops a layer, so a test (or
 * a bench) can prove that the next layer finds what that one missed, or measure a layer alone. Set only by code running in this process before the guard starts
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
  /**
   * `CODE[:early|:flood]`: the next inotify watcher fails with CODE 50 ms after arming, while
   * arming, or with 20,000 errors (watcher.ts); taken once, then cleared.
   */
  watchFault: string | null;
  /** The stamp poll (shared mappings, the inode watches) does not run: its idle cost alone (bench/poll-cost.ts; detectors.ts). */
  stampPollOff: boolean;
} = { dirWatchBlind: null, inodeWatchBlind: null, storeWatchBlind: false, watchFault: null, stampPollOff: false };
