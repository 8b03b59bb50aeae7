import type { MessagePort } from 'node:worker_threads';

/** What the witness marks and guards, relative to the root: protected files, and directories whose every entry is protected. */
export interface WitnessTargets { files: string[]; dirs: string[] }

/**
 * The value of a directory handle key (WorkerInit.dirKeys) that stands for the directory
 * holding the root: of its entries only the root's own name counts. No path relative to the
 * root can be '..' (they are normalised).
 */
export const ROOT_PARENT = '..';

export interface WorkerInit {
  fanFd: number;
  /** The second, notification group (FAN_REPORT_DFID_NAME | FAN_REPORT_PIDFD): chmod, chown, unlink, rename, create; -1 when the kernel refused it. */
  nameFd: number;
  /** Directory handle key (fanotify.ts handleKey) → the directory, relative to the root, or ROOT_PARENT. */
  dirKeys: Record<string, string>;
  recordFd: number;
  rootReal: string;
  enforce: boolean;
  exemptPids: number[];
  exemptCgroups: string[];
  targets: WitnessTargets;
  /** "dev:ino" of each marked protected file → its path relative to the root: an open is decided by the object opened, whatever name it came through. */
  inodes: Record<string, string>;
  /** File handle key (fanotify.ts handleKey) → protected file: name events reported by the object (a change through another name of it). */
  fileKeys: Record<string, string>;
  /** Int32 slots: 0 heartbeat, 1 stop flag, 2 writes seen, 3 records lost, 4 queue overflows. */
  shared: SharedArrayBuffer;
  port: MessagePort;
}
