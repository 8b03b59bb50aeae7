/**
 * Our own temp files left behind when a restore failed and its cleanup failed too (e.g. the
 * directory became immutable between create and rename), or by a warden process killed in
 * the middle of a write. Everything runs synchronously, so no restore is in flight while
 * this runs.
 */
import { fstatSync } from 'node:fs';
import { eachName } from './inspect.js';
import { at, unlinkAt, withDir } from '../fsx/beneath.js';

/** The temp names replaceFileAt creates (".<name>.warden-<pid>-<hex>.tmp"). */
const TEMP_NAME = /^\..+\.warden-\d+-[0-9a-f]{8}\.tmp$/;

/**
 * Directories listed clean, by their stat stamp: creating a temp file changes the
 * directory's ctime (which no user can set back), so an unchanged directory is not listed
 * again — a rescan of a 10,000-file directory costs one fstat, not 10,000 names.
 */
const clean = new Map<string, string>();

export function sweepTemps(rootFd: number, dirs: Iterable<string>): void {
  for (const dir of dirs) {
    withDir(rootFd, dir, (fd) => {
      const key = `${rootFd}:${dir}`;
      const st = fstatSync(fd);
      const stamp = [st.ino, st.mtimeMs, st.ctimeMs].join(':');
      if (clean.get(key) === stamp) return;
      let left = false;
      // Streamed (eachName): a directory flooded with a million names costs one pass and a
      // few kilobytes, not an array of a million names. A name that is not UTF-8 is unlinked
      // by its own bytes (common/names.ts).
      try {
        eachName(at(fd, '.'), (name) => {
          if (name.charCodeAt(0) !== 0x2e || !TEMP_NAME.test(name)) return;
          try { unlinkAt(fd, name); } catch { left = true; /* still stuck: next time */ }
        });
      } catch { left = true; /* unreadable: next time */ }
      // ctime has clock-tick granularity: a directory changed within the last two seconds is listed again next time.
      if (left || Date.now() - st.ctimeMs < 2000) clean.delete(key);
      else { if (clean.size > 4096) clean.clear(); clean.set(key, stamp); }
    }, () => undefined);
  }
}
