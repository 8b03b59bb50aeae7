/**
 * Reading warden.toml: the approved copy from the store, or (before init) the disk.
 * The pure schema lives in config/warden-config.ts; the reading lives here with the store.
 */
import { createHash } from 'node:crypto';
import { constants as fsConstants, fstatSync, lstatSync, openSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { openRoot, readSmallAt, safeClose, withDir } from '../fsx/beneath.js';
import { WardenError, errnoCode } from '../common/errors.js';
import { WARDEN_TOML, configFromBytes, type WardenConfig } from '../config/warden-config.js';
import { BASELINE_DIR, BLOBS_DIR, INDEX_NAME, SECRETS_DIR } from './layout.js';
import { unauthenticatedFiles, unauthenticatedProfile } from './baseline.js';
import { settingsFor } from './root-settings.js';
import { NotInitialised, Store, type StoreFd } from './store.js';
import { STORES_DIR, rootId, systemStateDir } from './location.js';

/**
 * warden.toml as it is on disk now. Only `warden init` uses this (there is no approved copy
 * yet): everything else runs on the approved copy, so that an edit made while warden was
 * stopped can never choose warden's own settings (approval mode, protected set…).
 * Read beneath the root without following links or opening a FIFO.
 */
export function loadWardenConfigFromDisk(root: string): WardenConfig {
  const fd = openRoot(root);
  try {
    return withDir(fd, 'config', (dirFd) => {
      try {
        return configFromBytes(readSmallAt(dirFd, 'warden.toml', 4 * 1024 * 1024));
      } catch (err) {
        if (err instanceof WardenError) throw err;
        throw new WardenError(`${WARDEN_TOML}: cannot read: ${errnoCode(err) ?? String(err)}`);
      }
    }, () => configFromBytes(null));
  } finally { safeClose(fd); }
}

/**
 * The approved warden.toml: the baseline's copy when there is a baseline (its blob checked
 * against the index's hash), else the file on disk (before `warden init`).
 */
export function loadWardenConfig(root: string): WardenConfig {
  let store: Store;
  try { store = Store.open(root); }
  catch (err) {
    if (err instanceof NotInitialised) return loadWardenConfigFromDisk(root);
    throw err;
  }
  try { return loadWardenConfigFrom(store.fd, root); } finally { store.close(); }
}

/** The approved warden.toml from an open store; the disk's before the first baseline. */
export function loadWardenConfigFrom(storeFd: StoreFd, root: string): WardenConfig {
  const approved = approvedBytes(storeFd, WARDEN_TOML);
  return approved === undefined ? loadWardenConfigFromDisk(root) : settingsFor(configFromBytes(approved), { profile: approvedProfile(storeFd) });
}

/** A profile root's record from the store's index, read as approvedBytes reads (root-settings.ts). */
function approvedProfile(storeFd: StoreFd): ReturnType<typeof unauthenticatedProfile> {
  const raw = withDir(storeFd, BASELINE_DIR, (fd) => { try { return readSmallAt(fd, INDEX_NAME); } catch { return null; } }, () => null);
  if (!raw) return undefined;
  try { return unauthenticatedProfile(raw); } catch { throw new WardenError('the store\'s baseline/index is malformed; run warden verify'); }
}

/** The profile root record of `root`'s store (undefined: none, or no baseline). Read-only, as approvedBytes. */
export function approvedProfileOf(root: string): ReturnType<typeof unauthenticatedProfile> {
  const store = Store.open(root);
  try { return approvedProfile(store.fd); } finally { store.close(); }
}

/**
 * Read one approved file from the store without the HMAC key (the notifier has no access to
 * it): undefined when there is no baseline, null when the baseline has no such file.
 * The blob must match the index's hash. What makes this trustworthy is where it reads: a
 * store handle (store.ts) that refuses a directory not owned by this account, which in the
 * deployment lives in the guard's state directory, out of the agent's reach.
 */
export function approvedBytes(storeFd: StoreFd, path: string): Buffer | null | undefined {
  const raw = withDir(storeFd, BASELINE_DIR, (fd) => { try { return readSmallAt(fd, INDEX_NAME); } catch { return null; } }, () => null);
  if (!raw) return undefined;
  let entry: { sha256?: string; kind?: string } | undefined;
  try { const files = unauthenticatedFiles(raw); entry = Object.hasOwn(files, path) ? files[path] : undefined; }
  catch { throw new WardenError('the store\'s baseline/index is malformed; run warden verify'); }
  if (!entry?.sha256) return null;
  const dir = entry.kind === 'credentials' ? SECRETS_DIR : BLOBS_DIR;
  const sha = entry.sha256;
  return withDir(storeFd, dir, (fd) => {
    const bytes = readSmallAt(fd, sha);
    if (!bytes || createHash('sha256').update(bytes).digest('hex') !== sha) throw new WardenError(`the approved copy of ${path} in the store is missing or altered`);
    return bytes;
  }, () => { throw new WardenError(`the approved copy of ${path} is missing from the store`); });
}

/**
 * The approved warden.toml for the witness (docs/CONTRACT.md §Who did it), which runs as uid 0 under an account
 * of its own and must never act on a file the agent can write: never the live
 * config/warden.toml, always the copy in the guard's store. In the deployment that store is
 * `<guard state>/stores/<root-id>/`, trusted when it and the state directory belong to one
 * account (the guard's) and neither is writable by group or others; in a session (a root
 * run by hand, the tests) this account's own store, as Store.open finds and checks it.
 * `bytes` is null when the baseline holds no warden.toml (the built-in defaults apply).
 * Throws, naming where it looked, when there is no baseline yet.
 */
export function approvedConfigForReader(root: string, env: NodeJS.ProcessEnv = process.env): { bytes: Buffer | null; from: string } {
  let real = root;
  try { real = realpathSync(root); } catch { /* as given: openRoot below says what is wrong */ }
  const base = systemStateDir(env);
  const dir = join(base, STORES_DIR, rootId(real));
  let fd = -1;
  try { fd = openSync(dir, fsConstants.O_RDONLY | fsConstants.O_DIRECTORY | fsConstants.O_NOFOLLOW); }
  catch (err) { if (errnoCode(err) !== 'ENOENT') throw new WardenError(`cannot open the guard's store ${dir}: ${errnoCode(err) ?? String(err)}`); }
  if (fd >= 0) {
    try {
      const st = fstatSync(fd);
      const b = lstatSync(base);
      if (!b.isDirectory() || st.uid !== b.uid || (st.mode & 0o022) !== 0 || (b.mode & 0o022) !== 0) {
        throw new WardenError(`the store ${dir} (uid ${st.uid}, mode ${(st.mode & 0o777).toString(8)}) is not the guard's alone (its state directory ${base}: uid ${b.uid}, mode ${(b.mode & 0o777).toString(8)}): the witness will not trust it`);
      }
      const bytes = approvedBytes(fd as StoreFd, WARDEN_TOML);
      if (bytes === undefined) throw new WardenError(`not initialised: the guard's store ${dir} has no baseline yet; run 'warden init' as the guard's account`);
      return { bytes, from: dir };
    } finally { safeClose(fd); }
  }
  // A session (no guard state directory for this root): this account's own store, found as
  // every command finds it (embedded, or its state directory); Store.open refuses one that is
  // not this account's alone. The witness's own $STATE_DIRECTORY is not a guard's.
  const { STATE_DIRECTORY: _own, ...sessionEnv } = env;
  let store: Store;
  try { store = Store.open(root, { env: sessionEnv }); }
  catch (err) {
    if (err instanceof NotInitialised) throw new WardenError(`not initialised: no approved ${WARDEN_TOML} for ${root} (looked in ${dir}, and for this account's own store: ${err.message}); the witness never reads the live file`);
    throw err;
  }
  try {
    const bytes = approvedBytes(store.fd, WARDEN_TOML);
    if (bytes === undefined) throw new WardenError(`not initialised: the store ${store.dir} has no baseline yet; run 'warden init'`);
    return { bytes, from: store.dir };
  } finally { store.close(); }
}
