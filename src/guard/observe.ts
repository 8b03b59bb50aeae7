/** Look at one path beneath a directory fd: lstat is the truth, events are only hints. */
import type { Stats } from 'node:fs';
import { at, lstatAt, readRegularAt, typeOf } from '../fsx/beneath.js';
import { readXattrsAt } from '../fsx/xattrs.js';
import { ABSENT, type Observation } from './classify.js';
import { sha256Hex } from '../store/baseline.js';

export function observe(dirFd: number, name: string, maxBytes: number, tries = 3): Observation {
  const st = lstatAt(dirFd, name);
  if (!st) return ABSENT;
  const type = typeOf(st);
  const base = fromStats(st, type);
  // A FIFO, socket or device is never opened; a large file is never read whole.
  if (type !== 'file' || st.size > maxBytes) return base;
  const r = readRegularAt(dirFd, name, maxBytes);
  // Swapped between lstat and open: look again (bounded, in case it keeps flipping).
  if (!r) return tries > 1 ? observe(dirFd, name, maxBytes, tries - 1) : { ...base, type: 'device' } /* keeps flipping: treat as not regular, moved aside */;
  // Its ACL and extended attributes: part of its approved state (docs/ARCHITECTURE.md).
  const b = { ...fromStats(r.stats, 'file'), xattrs: readXattrsAt(at(dirFd, name)) };
  if (r.unreadable) return { ...b, unreadable: true };
  if (!r.bytes) return b;
  return { ...b, size: r.bytes.length, sha256: sha256Hex(r.bytes), bytes: r.bytes, stamp: statStamp(r.stats) };
}

function fromStats(st: Stats, type: Observation['type']): Observation {
  return { type, size: st.size, mode: st.mode & 0o7777, uid: st.uid, gid: st.gid, ino: st.ino, dev: st.dev, sha256: null, bytes: null };
}

/** The stat fields that change whenever content or metadata does (ctime cannot be set by users). */
export function statStamp(st: Stats): string {
  // join() builds one flat string; a template literal builds a tree of ~13 cons strings,
  // which 20,000 held stamps (files and blobs) turn into 6 MB of heap.
  return [st.ino, st.size, st.mode, st.uid, st.gid, st.mtimeMs, st.ctimeMs].join(':');
}
