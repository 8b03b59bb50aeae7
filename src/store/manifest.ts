/**
 * Publish the runtime manifest (docs/CONTRACT.md §Runtime view) after every accepted change and at guard start.
 * Written like every other file of warden's: exclusive-create temp, fsync, rename, fsync
 * the directory (fsx/beneath.ts), so a reader sees the old manifest or the new one, never
 * a torn one. Mode 0644: it holds hashes only and the runtime's user must read it.
 *
 * Publishing never fails the change it follows: the change is already durable, and a
 * manifest left behind only makes the runtime's view keep the older approved state
 * (fail-safe). The failure is logged.
 */
import { fstatSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import { errnoCode } from '../common/errors.js';
import { atText, ensureDirBeneath, openRoot, readRegularAt, replaceFileAt, safeClose } from '../fsx/beneath.js';
import type { BaselineIndex } from './baseline.js';
import { EMBEDDED_STORE as SNAPSHOTS } from './location.js';
import { MANIFEST_NAME, expectedLocation, manifestFromIndex, parseManifest, publishLocation, serializeManifest, type RootIdentity } from './manifest-format.js';

/** The identity of the directory behind rootFd: its real path (as the kernel resolves it) and inode. */
export function rootIdentityOf(rootFd: number): RootIdentity {
  const st = fstatSync(rootFd);
  return { path: readlinkSync(atText(rootFd, '').replace(/\/$/, '')), dev: st.dev, ino: st.ino };
}

/**
 * Is dirFd/name a regular file of ours (never through a symlink), with one name, mode `mode`
 * and exactly `bytes`? Anything else (absent, altered, truncated, another owner or mode, a
 * hard link that another name could change, unreadable) is false: the caller replaces it.
 */
export function holdsExactly(dirFd: number, name: string, bytes: Uint8Array, mode: number): boolean {
  let r: ReturnType<typeof readRegularAt>;
  try { r = readRegularAt(dirFd, name, bytes.length); } catch { return false; }
  if (!r || !r.bytes) return false;
  const st = r.stats;
  if (st.nlink !== 1 || (st.mode & 0o7777) !== mode || st.uid !== (process.geteuid?.() ?? st.uid) || st.gid !== (process.getegid?.() ?? st.gid)) return false;
  return r.bytes.length === bytes.length && Buffer.compare(r.bytes, bytes) === 0;
}

export type PublishResult = { ok: true; path: string } | { ok: false; path: string; error: string };

/** The deployment's runtime directory (`/run/warden-guard`) is absent: not made by systemd yet. */
function deploymentDirMissing(dir: string): boolean {
  try { statSync(dir); return false; } catch (e) { return errnoCode(e) === 'ENOENT'; }
}

/** Write the manifest of `index` for the root behind rootFd. Never throws. */
export function publishManifest(rootFd: number, index: BaselineIndex, env: NodeJS.ProcessEnv = process.env,
  log: (line: string) => void = (l) => process.stderr.write(l + '\n')): PublishResult {
  let path = '(unknown)';
  let deployDir: string | null = null;
  // A profile's root has no runtime view (docs/PROFILES.md, "A profile's root"), and a
  // session's manifest would go inside the root, which warden does not own there.
  if (index.profile) return { ok: false, path: '(none)', error: "a profile's root has no runtime manifest" };
  try {
    const id = rootIdentityOf(rootFd);
    const loc = publishLocation(id.path, env);
    path = loc.path;
    if (loc.setup === 'deployment') deployDir = loc.dir;
    const bytes = serializeManifest(manifestFromIndex(index, id));
    const fd = loc.setup === 'session' ? ensureDirBeneath(rootFd, SNAPSHOTS, 0o700) : openRoot(loc.dir);
    try {
      // A start with nothing changed finds its own manifest there already (1.5 MB
      // written and fsynced twice at every start of a 10,000-file guard): kept as it is.
      if (!holdsExactly(fd, MANIFEST_NAME, bytes, 0o644)) replaceFileAt(fd, MANIFEST_NAME, bytes, { mode: 0o644 });
    } finally { safeClose(fd); }
    return { ok: true, path };
  } catch (err) {
    const code = errnoCode(err) ?? (err as Error)?.message ?? String(err);
    // The deployment's runtime directory does not exist yet (`warden init` run before the
    // guard's unit ever started, as docs/DEPLOY.md's block does): systemd makes it when
    // the guard starts, and the guard publishes the manifest then. Nothing has failed.
    if (code === 'ENOENT' && deployDir !== null && !env.RUNTIME_DIRECTORY && deploymentDirMissing(deployDir)) return { ok: false, path, error: 'not yet: the guard publishes it at its start' };
    log(`<3>warden: could not publish the runtime manifest ${path} (${code}); the runtime's approved view keeps the previous approved state until the guard publishes it`);
    return { ok: false, path, error: String(code) };
  }
}

export interface ManifestStatus { path: string; setup: 'deployment' | 'session'; present: boolean; generation: number | null; problem: string | null }

/**
 * For `warden status`: where a runtime on this machine finds the manifest of `root`
 * (the deployment's when it is installed, else beside the store), and what it says.
 */
export function manifestStatus(root: string): ManifestStatus {
  const isDir = (p: string): boolean => { try { return statSync(p).isDirectory(); } catch { return false; } };
  const loc = expectedLocation(root, isDir);
  let raw: Buffer;
  try { raw = readFileSync(loc.path); } catch (err) {
    const code = errnoCode(err);
    return { path: loc.path, setup: loc.setup, present: false, generation: null, problem: code === 'ENOENT' ? 'not published yet' : `unreadable (${code})` };
  }
  const p = parseManifest(raw);
  return p.ok
    ? { path: loc.path, setup: loc.setup, present: true, generation: p.manifest.generation, problem: null }
    : { path: loc.path, setup: loc.setup, present: true, generation: null, problem: p.problem };
}
