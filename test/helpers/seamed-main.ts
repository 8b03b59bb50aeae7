/**
 * `warden` with the detection layers' test seams set (src/guard/test-seams.ts), for a test that
 * proves one layer finds what another missed (or a bench that measures one layer alone): startDaemon runs this instead of the CLI when
 * its environment names a seam. The seams are set in this process before the CLI loads; the
 * shipped CLI (the bundle) reads none of these variables and shares no module with this file.
 */
import { existsSync } from 'node:fs';
import { watchSeams } from '../../src/guard/test-seams.js';

export const SEAM_VARS = ['WARDEN_TEST_DIR_WATCH_BLIND', 'WARDEN_TEST_INODE_WATCH_BLIND', 'WARDEN_TEST_STORE_WATCH_BLIND', 'WARDEN_TEST_WATCH_FAULT', 'WARDEN_STAMP_POLL'] as const;

const env = process.env;
watchSeams.dirWatchBlind = env.WARDEN_TEST_DIR_WATCH_BLIND || null;
watchSeams.inodeWatchBlind = env.WARDEN_TEST_INODE_WATCH_BLIND || null;
watchSeams.storeWatchBlind = env.WARDEN_TEST_STORE_WATCH_BLIND === '1';
watchSeams.watchFault = env.WARDEN_TEST_WATCH_FAULT || null;
watchSeams.stampPollOff = env.WARDEN_STAMP_POLL === 'off';
for (const k of SEAM_VARS) delete env[k];
// tsc's unbundled entry (scripts/bundle.mjs keeps it beside the bundle): its modules are the
// ones this file set the seams in. The bundle carries a copy of its own, which no test reaches.
const unbundled = new URL('../../src/cli/main.unbundled.js', import.meta.url);
await import(existsSync(unbundled) ? unbundled.href : '../../src/cli/main.js');
