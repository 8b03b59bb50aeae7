/** What the guard is built with (guard.ts): the root held, the store, the baseline, and where its alerts and diagnostics go. */
import type { WardenConfig } from '../config/warden-config.js';
import type { Alert } from '../store/alert-types.js';
import type { BaselineState } from '../store/baseline-state.js';
import type { BlobStampsFile } from '../store/blob-stamps.js';
import type { Store } from '../store/store.js';
import type { WriterSource } from './alert-build.js';
import type { Detectors, Door } from './door.js';

export interface GuardOptions<D extends Detectors = Detectors> {
  root: string;
  rootFd: number;
  /** The store, held open: every store access goes through its descriptor. */
  store: Store;
  config: WardenConfig;
  state: BaselineState;
  /** Called once per alert after it is durable in alerts.jsonl. */
  onAlert?: (alert: Alert) => void;
  /** Diagnostics that are not alerts. */
  log?: (line: string) => void;
  /** Journal lines of alerts, each with its alert (default: log). */
  journal?: (line: string, alert?: Alert) => void;
  /**
   * The detectors, built once on the guard's one door (door.ts): the directory and inode
   * watches, the clocks. Absent: none (an in-process test calls the entry points itself).
   */
  detectors?: (door: Door) => D;
  /**
   * Paths that are not approved files (new, unexpected files) found by a rescan wait in the
   * hint queue behind the reverts (hints.ts); default: checked inline by the rescan.
   */
  deferNewFiles?: boolean;
  /**
   * After the root path was found naming something else and put right (docs/CONTRACT.md §Detection): the guard
   * now holds the directory at the path (`fd`); the old descriptor is closed already.
   */
  onRootReplaced?: (fd: number) => void;
  /** The witness's record (docs/CONTRACT.md §Who did it): who opened a file for writing; absent = no witness. */
  writers?: WriterSource;
  /** Where the store's blob stamps are kept across restarts, and the key that authenticates them (store/blob-stamps.ts). */
  blobStamps?: BlobStampsFile;
  /**
   * A write a profile's runtime made on the user's behalf (docs/PROFILES.md, "The runtime's own
   * writes"), reverted: file `bytes` as a pending request for `path`. Absent: only reverted.
   */
  onBehalf?: (path: string, bytes: Buffer) => void;
}
