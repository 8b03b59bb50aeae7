/**
 * Extended attributes through libc (koffi, already warden's FFI for fanotify: no compiler, no
 * node-gyp, prebuilt for x86_64 and aarch64). Only the attributes an unprivileged owner of a
 * file can set are kept (docs/ARCHITECTURE.md, "What a protected file's approved state is"):
 * `user.*` and the POSIX access ACL (`system.posix_acl_access`), and for a protected
 * directory its default ACL (`system.posix_acl_default`) too. `trusted.*` and `security.*`
 * (file capabilities, SELinux labels) need privilege and are left alone.
 *
 * Reads never follow a symlink (l*xattr on the name beneath a directory descriptor); writes go
 * through a descriptor warden opened itself (f*xattr). Loaded lazily: where koffi cannot load,
 * `xattrsAvailable()` is false and reads answer null ("not known"), never "none".
 */
import { createRequire } from 'node:module';
import { at } from './beneath.js';

/** Attribute name → value (base64). Empty: none. */
export type XattrSet = Record<string, string>;

export const ACL_ACCESS = 'system.posix_acl_access';
/** A directory's default ACL: what every file and directory made in it later inherits. */
export const ACL_DEFAULT = 'system.posix_acl_default';

/** Which object the attributes are of: a directory keeps its default ACL too. */
export interface Of { dir?: boolean }

/** Is this an attribute warden keeps (one the owner of a file, or of a directory, can set without privilege)? */
export function kept(name: string, of: Of = {}): boolean {
  return name === ACL_ACCESS || name.startsWith('user.') || (of.dir === true && name === ACL_DEFAULT);
}

/**
 * At most this many bytes of values are read from one file (an agent can set many large
 * attributes on some file systems); beyond it the set read so far carries TOO_MUCH, a name
 * no file can have (an empty `user.` suffix is refused by the kernel), so it never equals an
 * approved set, is never written and never approved.
 */
export const MAX_VALUE_BYTES = 256 * 1024;
export const TOO_MUCH = 'user.';

const ENODATA = 61;
const ERANGE = 34;
const ENOTSUP = 95;

interface Binding {
  llist(path: Buffer, buf: Buffer | null, size: number): number;
  lget(path: Buffer, name: Buffer, buf: Buffer | null, size: number): number;
  flist(fd: number, buf: Buffer | null, size: number): number;
  fget(fd: number, name: Buffer, buf: Buffer | null, size: number): number;
  fset(fd: number, name: Buffer, value: Buffer, size: number, flags: number): number;
  fremove(fd: number, name: Buffer): number;
  lset(path: Buffer, name: Buffer, value: Buffer, size: number, flags: number): number;
  lremove(path: Buffer, name: Buffer): number;
  errno(): number;
}

let cached: Binding | null | undefined;
let whyNot = '';

function load(): Binding | null {
  if (cached !== undefined) return cached;
  try {
    const require = createRequire(import.meta.url);
    const koffi = require('koffi') as typeof import('koffi');
    const libc = koffi.load('libc.so.6');
    const llist = libc.func('long llistxattr(const uint8_t *path, _Out_ uint8_t *list, unsigned long size)');
    const lget = libc.func('long lgetxattr(const uint8_t *path, const uint8_t *name, _Out_ uint8_t *value, unsigned long size)');
    const flist = libc.func('long flistxattr(int fd, _Out_ uint8_t *list, unsigned long size)');
    const fget = libc.func('long fgetxattr(int fd, const uint8_t *name, _Out_ uint8_t *value, unsigned long size)');
    const fset = libc.func('int fsetxattr(int fd, const uint8_t *name, const uint8_t *value, unsigned long size, int flags)');
    const fremove = libc.func('int fremovexattr(int fd, const uint8_t *name)');
    const lset = libc.func('int lsetxattr(const uint8_t *path, const uint8_t *name, const uint8_t *value, unsigned long size, int flags)');
    const lremove = libc.func('int lremovexattr(const uint8_t *path, const uint8_t *name)');
    cached = {
      llist: (p, b, n) => Number(llist(p, b, n)),
      lget: (p, name, b, n) => Number(lget(p, name, b, n)),
      flist: (fd, b, n) => Number(flist(fd, b, n)),
      fget: (fd, name, b, n) => Number(fget(fd, name, b, n)),
      fset: (fd, name, v, n, f) => Number(fset(fd, name, v, n, f)),
      fremove: (fd, name) => Number(fremove(fd, name)),
      lset: (p, name, v, n, f) => Number(lset(p, name, v, n, f)),
      lremove: (p, name) => Number(lremove(p, name)),
      errno: () => koffi.errno(),
    };
  } catch (err) {
    whyNot = `the xattr binding (koffi) did not load: ${String((err as Error)?.message ?? err).split('\n')[0]}`;
    cached = null;
  }
  return cached;
}

export function xattrsAvailable(): boolean { return load() !== null; }
export function xattrsWhyNot(): string { load(); return whyNot; }

const cstr = (p: string | Buffer): Buffer => Buffer.concat([typeof p === 'string' ? Buffer.from(p) : p, Buffer.alloc(1)]);
/** An attribute name as the kernel listed it (bytes, kept as Latin-1 code units), NUL-terminated. */
const cname = (name: string): Buffer => Buffer.concat([Buffer.from(name, 'latin1'), Buffer.alloc(1)]);

function errnoError(b: Binding, what: string): Error {
  const e = b.errno();
  return Object.assign(new Error(`${what}: errno ${e}`), { errno: e, code: e === ENOTSUP ? 'ENOTSUP' : e === ERANGE ? 'ERANGE' : `E${e}` });
}

/** A list call (size probe, then the list; once more if it grew in between) → the names. */
function names(b: Binding, list: (buf: Buffer | null, size: number) => number): string[] | 'unsupported' | null {
  for (let tries = 0; tries < 3; tries++) {
    const n = list(null, 0);
    if (n < 0) return b.errno() === ENOTSUP ? 'unsupported' : null;
    if (n === 0) return [];
    const buf = Buffer.alloc(n);
    const m = list(buf, n);
    if (m < 0) { if (b.errno() === ERANGE) continue; return null; }
    return buf.toString('latin1', 0, m).split('\0').filter((x) => x !== '');
  }
  return null;
}

/** One value (size probe, then the value); undefined when it went away meanwhile, null on another failure. */
function value(b: Binding, get: (buf: Buffer | null, size: number) => number): Buffer | undefined | null {
  for (let tries = 0; tries < 3; tries++) {
    const n = get(null, 0);
    if (n < 0) return b.errno() === ENODATA ? undefined : null;
    const buf = Buffer.alloc(n);
    const m = n === 0 ? 0 : get(buf, n);
    if (m < 0) { if (b.errno() === ERANGE) continue; return b.errno() === ENODATA ? undefined : null; }
    return buf.subarray(0, m);
  }
  return null;
}

function collect(b: Binding, list: string[], get: (name: Buffer, buf: Buffer | null, size: number) => number, of: Of = {}): XattrSet | null {
  const out: XattrSet = {};
  let total = 0;
  for (const name of list.filter((n) => kept(n, of)).sort()) {
    if (name === TOO_MUCH) continue;
    const n = cname(name);
    const v = value(b, (buf, size) => get(n, buf, size));
    if (v === null) return null;
    if (v === undefined) continue;
    total += v.length;
    if (total > MAX_VALUE_BYTES) { out[TOO_MUCH] = ''; return out; }
    out[name] = v.toString('base64');
  }
  return out;
}

/**
 * The kept attributes of the object at PATH (never following a final symlink): {} when it has
 * none or its file system has none; null when they could not be read (no binding, an error).
 * `of.dir`: a directory's, its default ACL included.
 */
export function readXattrsAt(path: string | Buffer, of: Of = {}): XattrSet | null {
  const b = load();
  if (!b) return null;
  const p = cstr(path);
  const list = names(b, (buf, size) => b.llist(p, buf, size));
  if (list === 'unsupported') return {};
  if (list === null) return null;
  return collect(b, list, (name, buf, size) => b.lget(p, name, buf, size), of);
}

/** The kept attributes of an open file (as readXattrsAt). */
export function readXattrsFd(fd: number): XattrSet | null {
  const b = load();
  if (!b) return null;
  const list = names(b, (buf, size) => b.flist(fd, buf, size));
  if (list === 'unsupported') return {};
  if (list === null) return null;
  return collect(b, list, (name, buf, size) => b.fget(fd, name, buf, size));
}

/**
 * Make the kept attributes of an open file exactly WANT: every kept attribute not in WANT is
 * removed (an ACL the agent added, or one inherited from a directory's default ACL), every one
 * in WANT set to its value. Attributes warden does not keep are not touched. Throws when the
 * binding is missing (nothing can be put right) or a call fails.
 */
export function setXattrsFd(fd: number, want: XattrSet): void {
  const b = load();
  if (!b) throw new Error(xattrsWhyNot());
  const list = names(b, (buf, size) => b.flist(fd, buf, size));
  if (list === 'unsupported') {
    if (Object.keys(want).length === 0) return;
    throw Object.assign(new Error('the file system holds no extended attributes'), { code: 'ENOTSUP' });
  }
  if (list === null) throw errnoError(b, 'flistxattr');
  for (const name of list) {
    if (!kept(name) || Object.hasOwn(want, name)) continue;
    if (b.fremove(fd, cname(name)) !== 0 && b.errno() !== ENODATA) throw errnoError(b, `fremovexattr ${name}`);
  }
  for (const [name, v] of Object.entries(want)) {
    if (!kept(name) || name === TOO_MUCH) continue;
    const bytes = Buffer.from(v, 'base64');
    if (b.fset(fd, cname(name), bytes, bytes.length, 0) !== 0) throw errnoError(b, `fsetxattr ${name}`);
  }
}

/**
 * Make the kept attributes of the directory at PATH exactly WANT, as setXattrsFd does for an
 * open file, through the path (never following a final symlink): the caller names the
 * directory through a descriptor it checked (`/proc/self/fd/N/.`, beneath.ts `at`), which
 * works for an O_PATH descriptor too (a directory made unreadable).
 */
export function setDirXattrsAt(path: string | Buffer, want: XattrSet): void {
  const b = load();
  if (!b) throw new Error(xattrsWhyNot());
  const p = cstr(path);
  const of = { dir: true };
  const list = names(b, (buf, size) => b.llist(p, buf, size));
  if (list === 'unsupported') {
    if (Object.keys(want).length === 0) return;
    throw Object.assign(new Error('the file system holds no extended attributes'), { code: 'ENOTSUP' });
  }
  if (list === null) throw errnoError(b, 'llistxattr');
  for (const name of list) {
    if (!kept(name, of) || Object.hasOwn(want, name)) continue;
    if (b.lremove(p, cname(name)) !== 0 && b.errno() !== ENODATA) throw errnoError(b, `lremovexattr ${name}`);
  }
  for (const [name, v] of Object.entries(want)) {
    if (!kept(name, of) || name === TOO_MUCH) continue;
    const bytes = Buffer.from(v, 'base64');
    if (b.lset(p, cname(name), bytes, bytes.length, 0) !== 0) throw errnoError(b, `lsetxattr ${name}`);
  }
}

/**
 * The kept attributes of the directory NAME beneath dirFd ('.': dirFd's own) as its baseline
 * entry's field: `{ xattrs }`, `{}` among them when it has none (recorded: none approved);
 * no field when they could not be read (not recorded: nothing is claimed about them).
 */
export function approvedDirXattrsAt(dirFd: number, name: string): { xattrs?: XattrSet } {
  const x = readXattrsAt(at(dirFd, name), { dir: true });
  if (!x) return {};
  delete x[TOO_MUCH];
  return { xattrs: x };
}

/**
 * The kept attributes of the directory NAME beneath dirFd ('.': dirFd itself) when its
 * entry records some (`approved` not undefined), else undefined: an entry recorded before
 * directories' attributes were is not read at all.
 */
export function dirXattrsIfRecorded(approved: XattrSet | undefined, dirFd: number, name: string): XattrSet | null | undefined {
  return approved === undefined ? undefined : readXattrsAt(at(dirFd, name), { dir: true });
}

/** The kept attributes of NAME beneath dirFd, as a baseline entry's field: `{ xattrs }` when it has any, else `{}` (none, or not readable). */
export function approvedXattrsAt(dirFd: number, name: string): { xattrs?: XattrSet } {
  const x = readXattrsAt(at(dirFd, name));
  if (x) delete x[TOO_MUCH];
  return x && Object.keys(x).length > 0 ? { xattrs: x } : {};
}

/**
 * A writer's `prepare` step (beneath.ts WriteOptions) for a protected file: its kept
 * attributes made exactly WANT (none when absent) on the new file before its rename, so a
 * default ACL of the directory is not inherited. Undefined where the binding is missing:
 * nothing is read there either, so nothing is claimed or fought over.
 */
export function exactXattrs(want: XattrSet | undefined): ((fd: number) => void) | undefined {
  if (!xattrsAvailable()) return undefined;
  const w = want ?? {};
  return (fd) => setXattrsFd(fd, w);
}
