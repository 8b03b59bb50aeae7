/**
 * The only I/O in src/policy: read the policy files of a root, read-only, never following
 * a symlink, never opening a FIFO or device, bounded in size. Everything else is pure.
 */
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { WARDEN_TOML } from '../config/warden-config.js';
import { errnoCode } from '../common/errors.js';
import { hasRawBytes, nameFromBytes } from '../common/names.js';
import { BLOCKS_DIR } from './blocks.js';
import { CONDITIONS_TOML } from './conditions.js';
import { buildPolicy } from './load.js';
import { GUESTS_TOML, ORGS_DIR } from './manifests.js';
import type { FileHealth, PolicyFileInput, PolicyLoadResult } from './types.js';

/** Policy files are small; anything bigger is refused rather than read whole. */
export const MAX_POLICY_BYTES = 1024 * 1024;

const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;

function readOne(root: string, rel: string): PolicyFileInput {
  // Names are bytes (docs/CONTRACT.md §Detection): a listed name that is not UTF-8 is an unexpected file (the
  // guard quarantines it). It is reported under its own name and grants nothing; never
  // skipped, and never read as the other file its decoded name would open.
  if (hasRawBytes(rel)) return { path: rel, text: null, unreadable: 'its name is not valid UTF-8 (an unexpected file, which the guard quarantines)' };
  const abs = join(root, rel);
  // Every directory on the way must be a real directory, not a symlink out of the root.
  const parts = rel.split('/');
  for (let i = 1; i < parts.length; i++) {
    const dir = parts.slice(0, i).join('/');
    try {
      const st = lstatSync(join(root, dir));
      if (!st.isDirectory()) return { path: rel, text: null, unreadable: `${dir}/ is not a real directory (${st.isSymbolicLink() ? 'a symlink' : 'not a directory'})` };
    } catch (err) {
      if (errnoCode(err) === 'ENOENT') return { path: rel, text: null };
      return { path: rel, text: null, unreadable: `cannot read ${dir}/: ${errnoCode(err) ?? String(err)}` };
    }
  }
  let fd: number;
  try {
    fd = openSync(abs, constants.O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT') return { path: rel, text: null };
    if (code === 'ELOOP') return { path: rel, text: null, unreadable: 'is a symlink, not a regular file' };
    return { path: rel, text: null, unreadable: `cannot read: ${code ?? String(err)}` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { path: rel, text: null, unreadable: 'is not a regular file' };
    if (st.size > MAX_POLICY_BYTES) return { path: rel, text: null, unreadable: `is too large (${st.size} bytes, at most ${MAX_POLICY_BYTES})` };
    const buf = Buffer.alloc(Math.min(st.size + 1, MAX_POLICY_BYTES + 1));
    let n = 0;
    while (n < buf.length) {
      const got = readSync(fd, buf, n, buf.length - n, null);
      if (got === 0) break;
      n += got;
    }
    if (n > MAX_POLICY_BYTES) return { path: rel, text: null, unreadable: `is too large (more than ${MAX_POLICY_BYTES} bytes)` };
    try {
      return { path: rel, text: new TextDecoder('utf-8', { fatal: true }).decode(buf.subarray(0, n)) };
    } catch {
      return { path: rel, text: null, unreadable: 'is not valid UTF-8' };
    }
  } catch (err) {
    return { path: rel, text: null, unreadable: `cannot read: ${errnoCode(err) ?? String(err)}` };
  } finally {
    closeSync(fd);
  }
}

function listDir(root: string, dir: string): string[] {
  try {
    const parts = dir.split('/');
    for (let i = 1; i <= parts.length; i++) {
      if (!lstatSync(join(root, parts.slice(0, i).join('/'))).isDirectory()) return [];
    }
    // Listed as bytes: a name that is not UTF-8 is carried as itself (common/names.ts), not as U+FFFD.
    return readdirSync(join(root, dir), { encoding: 'buffer' }).map(nameFromBytes).sort().map((n) => `${dir}/${n}`);
  } catch {
    return [];
  }
}

/** Read every policy file of a root into the pure loader's input. Read-only; never throws. */
export function readPolicyFiles(root: string): PolicyFileInput[] {
  const paths = [CONDITIONS_TOML, GUESTS_TOML, WARDEN_TOML, ...listDir(root, ORGS_DIR), ...listDir(root, BLOCKS_DIR)];
  return paths.map((p) => {
    try { return readOne(root, p); } catch (err) { return { path: p, text: null, unreadable: `cannot read: ${String(err)}` }; }
  });
}

/** Load and validate the policy of a root. Read-only; never throws. */
export function loadPolicyFromRoot(root: string): PolicyLoadResult {
  return buildPolicy(readPolicyFiles(root));
}

/** For `warden status`: each policy file, and whether it grants nothing (missing, empty, invalid…). */
export function policyFileHealth(root: string): FileHealth[] {
  return loadPolicyFromRoot(root).files;
}
