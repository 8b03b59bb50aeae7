/**
 * Find and read the manifest a view must trust. The location rule itself lives in
 * store/manifest-format.ts (expectedLocation); this adds the explicit overrides and the
 * one check that makes a deployment's manifest worth anything: the runtime's user must
 * not be able to write it, nor the directory it is in.
 */
import { accessSync, closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { errnoCode } from '../common/errors.js';
import { expectedLocation, MAX_MANIFEST_BYTES, type DeploymentDirs } from '../store/manifest-format.js';

export interface Located { path: string; setup: 'deployment' | 'session' | 'explicit'; deploymentExpected: boolean }

const isDir = (p: string): boolean => { try { return statSync(p).isDirectory(); } catch { return false; } };

/** opts.manifest, else $WARDEN_MANIFEST, else where this machine's setup puts it. */
export function locateManifest(root: string, opts: { manifest?: string; deployment?: DeploymentDirs }, env: NodeJS.ProcessEnv = process.env): Located {
  const expected = expectedLocation(root, isDir, opts.deployment);
  const explicit = opts.manifest ?? env.WARDEN_MANIFEST;
  if (explicit) return { path: isAbsolute(explicit) ? explicit : resolve(explicit), setup: 'explicit', deploymentExpected: expected.setup === 'deployment' };
  return { path: expected.path, setup: expected.setup, deploymentExpected: expected.setup === 'deployment' };
}

export type ManifestRead = { ok: true; raw: Buffer } | { ok: false; reason: string };

const writable = (p: string): boolean => { try { accessSync(p, constants.W_OK); return true; } catch { return false; } };

/**
 * Read the manifest bytes: a regular file (no link followed at the last step, no FIFO
 * opened), bounded. When the deployment is expected, refuse one this process's user
 * could have written: owned by it, or writable by it, or in a directory it can write.
 */
export function readManifestFile(loc: Located): ManifestRead {
  let fd: number;
  try {
    fd = openSync(loc.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT') return { ok: false, reason: `no manifest at ${loc.path}${loc.deploymentExpected ? ' (the deployment is installed: is warden-guard running?)' : ' (is warden running for this root?)'}` };
    if (code === 'ELOOP') return { ok: false, reason: `${loc.path} is a symlink, not the manifest` };
    return { ok: false, reason: `cannot read the manifest ${loc.path}: ${code ?? String(err)}` };
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return { ok: false, reason: `${loc.path} is not a regular file` };
    if (st.size > MAX_MANIFEST_BYTES) return { ok: false, reason: `${loc.path} is too large (${st.size} bytes)` };
    const uid = process.getuid?.() ?? 0;
    if (loc.deploymentExpected && uid !== 0) {
      if (st.uid === uid || writable(loc.path) || writable(dirname(loc.path)) || statSync(dirname(loc.path)).uid === uid) {
        return { ok: false, reason: `${loc.path} could have been written by this process's user (uid ${uid}); in the deployment only the warden account writes the manifest, so this one proves nothing` };
      }
    }
    const buf = Buffer.alloc(st.size + 1);
    let n = 0;
    while (n < buf.length) { const r = readSync(fd, buf, n, buf.length - n, null); if (r === 0) break; n += r; }
    if (n > st.size) return { ok: false, reason: `${loc.path} grew while it was read (not written atomically?)` };
    return { ok: true, raw: buf.subarray(0, n) };
  } catch (err) {
    return { ok: false, reason: `cannot read the manifest ${loc.path}: ${errnoCode(err) ?? String(err)}` };
  } finally {
    closeSync(fd);
  }
}
