/**
 * The directory the guard holds at the root path, and the protected directories below it
 * that warden made or verified itself, each known by device and inode (docs/ARCHITECTURE.md,
 * invariant 19): any other object at such a path is foreign, moved aside whole, never
 * changed. A root found foreign at start is held under an identity no directory has until
 * it is put right.
 */
import { fstatSync, lstatSync } from 'node:fs';
import { safeClose, withDir } from '../fsx/beneath.js';
import type { Ident } from './root-path.js';

/** The identity the guard gives a root it found foreign at start: no directory has it. */
const FOREIGN: Ident = { dev: -1, ino: -1 };

export class HeldRoot {
  /** The directory at the root path. Replaced (never silently) when the path is made to name another (docs/CONTRACT.md §Detection). */
  fd: number;
  /** Device and inode of the directory `fd` holds (FOREIGN: found foreign at start). */
  id: Ident;
  /** The protected directories below the root that warden made or verified itself, by path. */
  readonly dirIds = new Map<string, Ident>();

  constructor(readonly path: string, fd: number) {
    this.fd = fd;
    const st = fstatSync(fd);
    this.id = { dev: st.dev, ino: st.ino };
  }

  /** Is the directory held warden's own root (not one found foreign at start)? */
  own(): boolean {
    return this.id.ino !== FOREIGN.ino;
  }

  /** The directory held was found foreign at start: nothing in it is touched until it is put right. */
  disown(): void {
    this.id = FOREIGN;
  }

  /** Does the root path still name the directory held (same device and inode, a real directory)? */
  pathHolds(): boolean {
    const st = lstatSync(this.path, { throwIfNoEntry: false });
    return st !== undefined && st.isDirectory() && st.dev === this.id.dev && st.ino === this.id.ino;
  }

  /** Is the directory `fd` holds still the one at `dir` below the root (same device and inode)? */
  stillAt(fd: number, dir: string): boolean {
    if (dir === '') return true;
    return withDir(this.fd, dir, (now) => {
      const a = fstatSync(fd), b = fstatSync(now);
      return a.dev === b.dev && a.ino === b.ino;
    }, () => false);
  }

  /** Hold the directory warden made at the root path (`fd`, known as `made`) instead; the old descriptor is closed. */
  adopt(fd: number, made: Ident): void {
    const old = this.fd;
    this.fd = fd;
    this.id = made;
    this.dirIds.clear();
    if (old >= 0) safeClose(old);
  }

  /**
   * Let go of a foreign directory found at the root path at start: closed, so that it pins
   * nothing (a file system mounted there can be unmounted); no root is held (-1) until one
   * is taken back, and nothing acts through it meanwhile.
   */
  release(): boolean {
    if (this.fd < 0) return false;
    const old = this.fd;
    this.fd = -1;
    safeClose(old);
    return true;
  }
}
