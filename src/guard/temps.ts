/**
 * Our own temp files left behind when a restore failed and its cleanup failed too (e.g. the
 * directory became immutable between create and rename), or by a warden process killed in
 * the middle of a write. Everything runs synchronously, so no restore is in flight while
 * this runs.
 */
import { fstatSync, opendirSync, type Dir } from 'node:fs';
import { nameFromBytes } from '../common/names.js';
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
      // Streamed (opendir), never an array of every name: a directory flooded with a million
      // names costs one pass and a few kilobytes, not an array of a million Buffers. Names as
      // bytes (common/names.ts): a name that is not UTF-8 is unlinked by its own bytes. Only a
      // name starting with "." can be ours, so no other name is even decoded.
      let d: Dir | null = null;
      try {
        d = opendirSync(at(fd, '.'), { bufferSize: 256, encoding: 'buffer' as BufferEncoding });
        for (let ent = d.readSync(); ent !== null; ent = d.readSync()) {
          const raw = ent.name as unknown as Buffer;
          if (raw[0] !== 0x2e) continue;
          const name = nameFromBytes(raw);
          if (!TEMP_NAME.test(name)) continue;
          try { unlinkAt(fd, name); } catch { left = true; /* still stuck: next time */ }
        }
      } catch { left = true; /* unreadable: next time */ }
      finally { try { d?.closeSync(); } catch { /* closed */ } }
      // ctime has clock-tick granularity: a directory changed within the last two seconds is listed again next time.
      if (left || Date.now() - st.ctimeMs < 2000) clean.delete(key);
      else { if (clean.size > 4096) clean.clear(); clean.set(key, stamp); }
    }, () => undefined);
  }
}
