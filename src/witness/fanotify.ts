/**
 * Linux fanotify through koffi (a maintained FFI for Node with prebuilt binaries in its npm
 * package: no compiler, no node-gyp at install). Only the calls the witness needs, with the
 * x86_64/aarch64 struct layouts of <linux/fanotify.h>. Loaded lazily: a machine where koffi
 * or fanotify is missing just has no witness (SPEC §6.1: everything else works as before).
 */
import { createRequire } from 'node:module';

export const FAN_CLOEXEC = 0x1;
export const FAN_NONBLOCK = 0x2;
export const FAN_CLASS_CONTENT = 0x4;
export const FAN_UNLIMITED_QUEUE = 0x10;
export const FAN_UNLIMITED_MARKS = 0x20;
export const FAN_REPORT_TID = 0x100;

export const FAN_MARK_ADD = 0x1;
export const FAN_MARK_REMOVE = 0x2;
export const FAN_MARK_FLUSH = 0x80;

export const FAN_OPEN_PERM = 0x10000;
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

export interface Fanotify {
  init(flags: number, eventFlags: number): number;
  mark(fd: number, flags: number, mask: bigint, dirfd: number, path: string | null): number;
  read(fd: number, buf: Buffer, len: number): number;
  write(fd: number, buf: Buffer, len: number): number;
  poll(fds: Buffer, n: number, timeoutMs: number): number;
  close(fd: number): number;
  errno(): number;
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
    cached = {
      init: (f, e) => init(f, e) as number,
      mark: (fd, f, m, d, p) => mark(fd, f, m, d, p) as number,
      read: (fd, b, l) => Number(read(fd, b, l)),
      write: (fd, b, l) => Number(write(fd, b, l)),
      poll: (b, n, t) => poll(b, n, t) as number,
      close: (fd) => close(fd) as number,
      errno: () => koffi.errno(),
    };
  } catch (err) {
    whyNot = `the fanotify binding (koffi) did not load: ${String((err as Error)?.message ?? err).split('\n')[0]}`;
    cached = null;
  }
  return cached;
}

export function loadError(): string { return whyNot; }
