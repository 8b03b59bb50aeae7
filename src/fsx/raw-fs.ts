/**
 * The four calls of `warden verify`'s file pass (open, fstat, read, close) and one listing
 * with entry types, at the cost of the syscalls alone.
 *
 * Node's public `fs` wraps each call in argument checks and objects: `openSync` validates
 * the path, the flags and a mode; `fstatSync` builds a `Stats` with four `Date`s; a listing
 * with types builds a `Dirent` per name. Over 10,000 files of 1 KiB that is ~40 % of the
 * pass's CPU and most of its garbage (measured: 350–390 ms CPU against 210–230 ms at load
 * 5, a cold process each). Underneath, each is one call into Node's own fs binding, the
 * same object `process.binding('fs')` returns.
 *
 * So this calls the binding directly, but only where it can show it calls it exactly as
 * this Node's public functions do: the source text of `openSync`, `fstatSync`, `readSync`,
 * `closeSync` and `readdirSync` must hold the very binding calls made here (the throwing
 * form of Node ≥ 20.x, no `ctx` object), and an fstat through the binding must agree with
 * `fstatSync` on the same descriptor. Anything else (another Node, `--pending-deprecation`,
 * a binding of another shape, `WARDEN_RAW_FS=off`) takes the public functions: the same
 * syscalls, the same errors, only slower. Errors are the binding's own (`code`, `errno`,
 * `syscall`), which are what the public functions throw too.
 *
 * Nothing here opens anything by itself beyond what the caller names; the caller keeps
 * every rule of the pass (O_NOFOLLOW|O_NONBLOCK, the listing's type before any open, the
 * fstat of the opened inode as the truth).
 */
import { closeSync, constants, fstatSync, openSync, readSync, readdirSync } from 'node:fs';

/** fstatInto's slots (a stat's fields, as Node's binding lays them out). */
export const ST_MODE = 1, ST_UID = 3, ST_GID = 4, ST_INO = 7, ST_SIZE = 8;
/** A Float64Array for fstatInto (at least 10 slots). */
export const statSlots = (): Float64Array => new Float64Array(10);

/** Entry types of a typed listing (libuv's, as Dirent uses them). */
export const DIRENT_FILE: number = (constants as unknown as Record<string, number>).UV_DIRENT_FILE ?? 1;

export interface RawFs {
  /** Which implementation: 'binding' (Node's fs binding, checked) or 'public' (node:fs). */
  readonly kind: 'binding' | 'public';
  open(path: string | Buffer, flags: number): number;
  /** fstat(fd) into out (ST_* slots); throws as fstatSync does. */
  fstatInto(fd: number, out: Float64Array): void;
  read(fd: number, buf: Buffer, offset: number, length: number, position: number | null): number;
  close(fd: number): void;
  /**
   * The names in a directory as Latin-1 strings (each char one byte of the name, exactly),
   * and their entry types (DIRENT_FILE for a regular file; unknown types are not files).
   */
  listTyped(path: string | Buffer): { names: string[]; types: number[] };
}

const publicFs: RawFs = {
  kind: 'public',
  open: (path, flags) => openSync(path, flags),
  fstatInto(fd, out) {
    const st = fstatSync(fd);
    out[ST_MODE] = st.mode; out[ST_UID] = st.uid; out[ST_GID] = st.gid; out[ST_INO] = st.ino; out[ST_SIZE] = st.size;
  },
  read: (fd, buf, offset, length, position) => readSync(fd, buf, offset, length, position),
  close: (fd) => closeSync(fd),
  listTyped(path) {
    const names: string[] = [];
    const types: number[] = [];
    for (const e of readdirSync(path, { withFileTypes: true, encoding: 'buffer' })) {
      names.push((e.name as unknown as Buffer).toString('latin1'));
      types.push(e.isFile() ? DIRENT_FILE : 0);
    }
    return { names, types };
  },
};

interface FsBinding {
  open(path: string | Buffer, flags: number, mode: number): number;
  fstat(fd: number, bigint: boolean, req: undefined, throwIfNoEntry: boolean): Float64Array | undefined;
  read(fd: number, buf: Buffer, offset: number, length: number, position: number | null): number;
  close(fd: number): void;
  readdir(path: string | Buffer, encoding: string, withTypes: boolean): [string[], number[]] | undefined;
}

/** Does this Node's public fs call the binding exactly as bindingFs does? */
function sameCalls(): boolean {
  const src = (f: unknown) => String(f);
  return src(openSync).includes('binding.open(') && !src(openSync).includes('ctx')
    && src(fstatSync).includes('binding.fstat(fd, options.bigint, undefined, false)')
    && src(readSync).includes('binding.read(fd, buffer, offset, length, position)') && !src(readSync).includes('ctx')
    && src(closeSync).includes('binding.close(fd)') && !src(closeSync).includes('ctx')
    && src(readdirSync).includes('binding.readdir(') && src(readdirSync).includes('getDirents(path, result)') && !src(readdirSync).includes('ctx');
}

function bindingFs(): RawFs | null {
  if (process.env.WARDEN_RAW_FS === 'off') return null;
  // process.binding warns under --pending-deprecation (DEP0111): never say that to a user.
  const opts = `${process.execArgv.join(' ')} ${process.env.NODE_OPTIONS ?? ''}`;
  if (/--(pending|throw)-deprecation/.test(opts) || process.env.NODE_PENDING_DEPRECATION === '1') return null;
  const getBinding = (process as unknown as { binding?: (name: string) => unknown }).binding;
  if (typeof getBinding !== 'function' || !sameCalls()) return null;
  let b: FsBinding;
  try { b = getBinding.call(process, 'fs') as FsBinding; } catch { return null; }
  if (!b || typeof b.open !== 'function' || typeof b.fstat !== 'function' || typeof b.read !== 'function' || typeof b.close !== 'function' || typeof b.readdir !== 'function') return null;
  const raw: RawFs = {
    kind: 'binding',
    open: (path, flags) => b.open(path, flags, 0o666),
    fstatInto(fd, out) {
      const s = b.fstat(fd, false, undefined, false);
      if (!s) throw Object.assign(new Error(`EBADF: fstat ${fd}`), { code: 'EBADF' });
      out[ST_MODE] = s[ST_MODE]!; out[ST_UID] = s[ST_UID]!; out[ST_GID] = s[ST_GID]!; out[ST_INO] = s[ST_INO]!; out[ST_SIZE] = s[ST_SIZE]!;
    },
    read: (fd, buf, offset, length, position) => (length === 0 ? 0 : b.read(fd, buf, offset, length, position ?? -1)),
    close: (fd) => b.close(fd),
    listTyped(path) {
      const r = b.readdir(path, 'latin1', true);
      if (!r) return { names: [], types: [] };
      return { names: r[0], types: r[1] };
    },
  };
  // The layout check: the binding's fstat of a descriptor we hold says what fstatSync says.
  let fd = -1;
  try {
    fd = openSync('/', constants.O_RDONLY | constants.O_DIRECTORY);
    const out = statSlots();
    raw.fstatInto(fd, out);
    const st = fstatSync(fd);
    if (out[ST_MODE] !== st.mode || out[ST_UID] !== st.uid || out[ST_GID] !== st.gid || out[ST_INO] !== st.ino || out[ST_SIZE] !== st.size) return null;
  } catch { return null; } finally { if (fd >= 0) closeSync(fd); }
  return raw;
}

let chosen: RawFs | null = null;

/** The checked binding where it can be used, else node:fs (decided once per process). */
export function rawFs(): RawFs {
  chosen ??= bindingFs() ?? publicFs;
  return chosen;
}

/** node:fs always (tests compare the two). */
export const publicRawFs = (): RawFs => publicFs;
