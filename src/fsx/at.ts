/**
 * How warden names an entry beneath a directory it holds open (fsx/beneath.ts): Linux's
 * /proc/self/fd/<fd>/<name>, which the kernel resolves to the very directory the descriptor
 * holds, never to whatever the path names now.
 */
import { closeSync, lstatSync, type Stats } from 'node:fs';
import { errnoCode } from '../common/errors.js';
import { hasRawBytes, nameToBytes } from '../common/names.js';

/**
 * Stands for "the current directory" where a directory fd is expected, as openat(2)'s
 * AT_FDCWD does: at(AT_FDCWD, name) is `name` itself. Only inside withCwdAt, which makes
 * the current directory the one a descriptor names.
 */
export const AT_FDCWD = -100;

/** `at` for a fixed name warden chose (a socket, a git directory): always a string. */
export const atText = (dirFd: number, name: string): string => (dirFd === AT_FDCWD ? name : `/proc/self/fd/${dirFd}/${name}`);

/**
 * The path of `name` beneath dirFd. A name that is not UTF-8 (a listed name carried as lone
 * surrogates, common/names.ts) is addressed by its bytes: the path is then a Buffer, which
 * every fs call takes as it is (a string would be encoded with U+FFFD, another name).
 */
export const at = (dirFd: number, name: string): string | Buffer => {
  const path = dirFd === AT_FDCWD ? name : `/proc/self/fd/${dirFd}/${name}`;
  return hasRawBytes(name) ? nameToBytes(path) : path;
};

/**
 * Linux O_PATH (Node does not export it): a descriptor that names a directory without
 * read permission on it. Walking through it needs only search (x) permission, so a root or
 * directory chmod'ed to 0300/0100 cannot blind us; it cannot be read, listed or fsynced.
 */
export const O_PATH = 0o10000000;

/** Open the root; if its mode was changed to deny reading (0300), an O_PATH descriptor still walks it. */
export function lstatAt(dirFd: number, name: string): Stats | null {
  try {
    return lstatSync(at(dirFd, name));
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null;
    throw err;
  }
}

export function safeClose(fd: number): void {
  try { closeSync(fd); } catch { /* ignore */ }
}
