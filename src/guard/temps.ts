/**
 * Our own temp files left behind when a restore failed and its cleanup failed too (e.g. the
 * directory became immutable between create and rename). Everything runs synchronously, so
 * no restore is in flight while this runs.
 */
import { readdirSync } from 'node:fs';
import { at, unlinkAt, withDir } from '../fsx/beneath.js';

/** The temp names replaceFileAt creates (".<name>.warden-<pid>-<hex>.tmp"). */
const TEMP_NAME = /^\..+\.warden-\d+-[0-9a-f]{8}\.tmp$/;

export function sweepTemps(rootFd: number, dirs: Iterable<string>): void {
  for (const dir of dirs) {
    withDir(rootFd, dir, (fd) => {
      try {
        for (const name of readdirSync(at(fd, '.'))) {
          if (!TEMP_NAME.test(name)) continue;
          try { unlinkAt(fd, name); } catch { /* still stuck: next time */ }
        }
      } catch { /* unreadable: next time */ }
    }, () => undefined);
  }
}
