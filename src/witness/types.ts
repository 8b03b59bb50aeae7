import type { MessagePort } from 'node:worker_threads';

/** What the witness marks and guards, relative to the root: protected files, and directories whose every entry is protected. */
export interface WitnessTargets { files: string[]; dirs: string[] }

export interface WorkerInit {
  fanFd: number;
  recordFd: number;
  rootReal: string;
  enforce: boolean;
  exemptPids: number[];
  exemptCgroups: string[];
  targets: WitnessTargets;
  /** Int32 slots: 0 heartbeat, 1 stop flag, 2 writes seen, 3 records lost, 4 queue overflows. */
  shared: SharedArrayBuffer;
  port: MessagePort;
}
