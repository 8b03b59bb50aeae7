/**
 * Linux fanotify through koffi (a maintained FFI for Node with prebuilt binaries in its npm
 * package: no compiler, no node-gyp at install). Only the calls the witness needs, with the
 * x86_64/aarch64 struct layouts of <linux/fanotify.h>. Loaded lazily: a machine where koffi
 * or fanotify is missing just has no witness (docs/CONTRACT.md §Who did it: everything else works as before).
 */
import { createRequire } from 'node:module';

export const FAN_CLOEXEC = 0x1;
export const FAN_NONBLOCK = 0x2;
export const FAN_CLASS_CONTENT = 0x4;
export const FAN_UNLIMITED_QUEUE = 0x10;
export const FAN_UNLIMITED_MARKS = 0x20;
export const FAN_REPORT_TID = 0x100;
/** Notification groups that name the directory and entry of a dirent or attribute change, and hand over a pidfd of the actor. */
export const FAN_CLASS_NOTIF = 0x0;
export const FAN_REPORT_PIDFD = 0x80;
export const FAN_REPORT_DFID_NAME = 0x400 | 0x800;
/** The object's own file handle too (FAN_REPORT_FID; with DFID_NAME: FAN_REPORT_DFID_NAME_TARGET, Linux 5.17). */
export const FAN_REPORT_FID = 0x200;

export const FAN_MARK_ADD = 0x1;
export const FAN_MARK_REMOVE = 0x2;
export const FAN_MARK_FLUSH = 0x80;

export const FAN_OPEN_PERM = 0x10000;
export const FAN_MODIFY = 0x2;
export const FAN_ATTRIB = 0x4;
export const FAN_MOVED_FROM = 0x40;
export const FAN_MOVED_TO = 0x80;
export const FAN_CREATE = 0x100;
export const FAN_DELETE = 0x200;
/**
 * The name-level events of the second (notification) group; FAN_MODIFY too, for the one change
 * of content that needs no open: truncate(2) by path.
 */
export const NAME_EVENTS = FAN_MODIFY | FAN_ATTRIB | FAN_MOVED_FROM | FAN_MOVED_TO | FAN_CREATE | FAN_DELETE;
/**
 * What the directory holding a protected directory (or the root) is marked for, with
 * FAN_ONDIR: a directory renamed, exchanged, made, removed or its attributes changed there.
 * No FAN_MODIFY: writes to the other files beside it are not the witness's business.
 */
export const DIR_EVENTS = FAN_ATTRIB | FAN_MOVED_FROM | FAN_MOVED_TO | FAN_CREATE | FAN_DELETE;
export const FAN_Q_OVERFLOW = 0x4000;
export const FAN_EVENT_ON_CHILD = 0x08000000;
export const FAN_ONDIR = 0x40000000;

export const FAN_ALLOW = 0x1;
export const FAN_DENY = 0x2;
export const FAN_NOFD = -1;
export const AT_FDCWD = -100;
export const O_RDONLY = 0;
export const O_LARGEFILE = 0o100000;
export const POLLIN = 0x1;

/** sizeof(struct fanotify_event_metadata): u32 event_len, u8 vers, u8 reserved, u16 metadata_len, u64 mask, s32 fd, s32 pid. */
export const METADATA_LEN = 24;

export interface FanEvent { mask: bigint; fd: number; pid: number }

/** Parse the events of one read(2) of a fanotify descriptor (pure). */
export function parseEvents(buf: Buffer, len: number): FanEvent[] {
  const out: FanEvent[] = [];
  let off = 0;
  while (off + METADATA_LEN <= len) {
    const eventLen = buf.readUInt32LE(off);
    if (eventLen < METADATA_LEN || off + eventLen > len) break;
    out.push({ mask: buf.readBigUInt64LE(off + 8), fd: buf.readInt32LE(off + 16), pid: buf.readInt32LE(off + 20) });
    off += eventLen;
  }
  return out;
}

/** struct fanotify_response { s32 fd; u32 response; } */
export function response(fd: number, answer: number): Buffer {
  const b = Buffer.alloc(8);
  b.writeInt32LE(fd, 0);
  b.writeUInt32LE(answer, 4);
  return b;
}

const INFO_FID = 1;
const INFO_DFID_NAME = 2;
const INFO_PIDFD = 4;

/** One event of a FAN_REPORT_DFID_NAME | FAN_REPORT_PIDFD group: the directory (fsid + handle, hex), the entry's name, the actor. */
export interface NameEvent { mask: bigint; pid: number; pidfd: number; dir: string | null; name: string | null; /** The object's own handle key (FAN_REPORT_FID), or null. */ fid?: string | null }

/**
 * Parse the events of one read(2) of a notification group with info records (pure):
 * fanotify_event_info_header { u8 type; u8 pad; u16 len }, then for DFID_NAME the fsid
 * (8 bytes), struct file_handle { u32 bytes; s32 type; u8 handle[bytes] } and the name
 * (NUL-terminated); for PIDFD an s32 (negative: FAN_NOPIDFD, the actor was already reaped,
 * or FAN_EPIDFD).
 */
export function parseNameEvents(buf: Buffer, len: number): NameEvent[] {
  const out: NameEvent[] = [];
  let off = 0;
  while (off + METADATA_LEN <= len) {
    const eventLen = buf.readUInt32LE(off);
    const metaLen = buf.readUInt16LE(off + 6);
    if (eventLen < METADATA_LEN || off + eventLen > len || metaLen < METADATA_LEN || metaLen > eventLen) break;
    const ev: NameEvent = { mask: buf.readBigUInt64LE(off + 8), pid: buf.readInt32LE(off + 20), pidfd: -1, dir: null, name: null };
    let p = off + metaLen;
    const end = off + eventLen;
    while (p + 4 <= end) {
      const type = buf[p]!;
      const ilen = buf.readUInt16LE(p + 2);
      if (ilen < 4 || p + ilen > end) break;
      if (type === INFO_PIDFD && ilen >= 8) ev.pidfd = buf.readInt32LE(p + 4);
      if (type === INFO_FID && ilen >= 20) {
        const hEnd = p + 20 + buf.readUInt32LE(p + 12);
        if (hEnd <= p + ilen) ev.fid = handleKey(buf.subarray(p + 4, p + 12), buf.subarray(p + 12, hEnd));
      }
      if (type === INFO_DFID_NAME && ilen >= 20) {
        const hb = buf.readUInt32LE(p + 12);
        const hEnd = p + 20 + hb;
        if (hEnd <= p + ilen) {
          ev.dir = handleKey(buf.subarray(p + 4, p + 12), buf.subarray(p + 12, hEnd));
          const z = buf.indexOf(0, hEnd);
          ev.name = buf.toString('latin1', hEnd, z < 0 || z > p + ilen ? p + ilen : z);
        }
      }
      p += ilen;
    }
    out.push(ev);
    off += eventLen;
  }
  return out;
}

/** The key of a directory: its file system's id and its file handle (bytes, type, handle), hex. */
export function handleKey(fsid: Buffer, fileHandle: Buffer): string {
  return `${fsid.toString('hex')}:${fileHandle.toString('hex')}`;
}

export interface Fanotify {
  init(flags: number, eventFlags: number): number;
  mark(fd: number, flags: number, mask: bigint, dirfd: number, path: string | null): number;
  read(fd: number, buf: Buffer, len: number): number;
  write(fd: number, buf: Buffer, len: number): number;
  poll(fds: Buffer, n: number, timeoutMs: number): number;
  close(fd: number): number;
  errno(): number;
  /** The handle key of an open directory (handleKey), or null when the file system gives none. */
  dirKey(fd: number): string | null;
  /** The handle key of NAME beneath the directory fd (never following a symlink), or null. */
  fileKey(dirFd: number, name: string): string | null;
}

let cached: Fanotify | null | undefined;
let whyNot = '';

/** The bindings, or null (and why) when koffi cannot load here. */
export function loadFanotify(): Fanotify | null {
  if (cached !== undefined) return cached;
  try {
    const require = createRequire(import.meta.url);
    const koffi = require('koffi') as typeof import('koffi');
    const libc = koffi.load('libc.so.6');
    const init = libc.func('int fanotify_init(unsigned int flags, unsigned int event_f_flags)');
    const mark = libc.func('int fanotify_mark(int fd, unsigned int flags, uint64_t mask, int dirfd, const char *path)');
    const read = libc.func('long read(int fd, _Out_ uint8_t *buf, unsigned long count)');
    const write = libc.func('long write(int fd, const uint8_t *buf, unsigned long count)');
    const poll = libc.func('int poll(_Inout_ uint8_t *fds, unsigned long nfds, int timeout)');
    const close = libc.func('int close(int fd)');
    const n2h = libc.func('int name_to_handle_at(int dirfd, const char *path, _Inout_ uint8_t *handle, _Out_ int *mnt, int flags)');
    const fstatfs = libc.func('int fstatfs(int fd, _Out_ uint8_t *buf)');
    const keyOf = (fd: number, name: string, flags: number): string | null => {
      const h = Buffer.alloc(8 + 128);
      h.writeUInt32LE(128, 0);
      const mnt = [0];
      if ((n2h(fd, name, h, mnt, flags) as number) !== 0) return null;
      // struct statfs (64-bit): seven 8-byte fields, then f_fsid.
      const sb = Buffer.alloc(128);
      if ((fstatfs(fd, sb) as number) !== 0) return null;
      return handleKey(sb.subarray(56, 64), h.subarray(0, 8 + h.readUInt32LE(0)));
    };
    const dirKey = (fd: number): string | null => keyOf(fd, '', 0x1000 /* AT_EMPTY_PATH */);
    const fileKey = (dirFd: number, name: string): string | null => keyOf(dirFd, name, 0 /* a final symlink is not followed */);
    cached = {
      init: (f, e) => init(f, e) as number,
      mark: (fd, f, m, d, p) => mark(fd, f, m, d, p) as number,
      read: (fd, b, l) => Number(read(fd, b, l)),
      write: (fd, b, l) => Number(write(fd, b, l)),
      poll: (b, n, t) => poll(b, n, t) as number,
      close: (fd) => close(fd) as number,
      errno: () => koffi.errno(),
      dirKey,
      fileKey,
    };
  } catch (err) {
    whyNot = `the fanotify binding (koffi) did not load: ${String((err as Error)?.message ?? err).split('\n')[0]}`;
    cached = null;
  }
  return cached;
}

export function loadError(): string { return whyNot; }
