/** Shared by the reading commands: load the authenticated baseline without changing anything. */
import { WARDEN_TOML, configFromBytes, type WardenConfig } from '../config/warden-config.js';
import { openRoot, safeClose } from '../fsx/beneath.js';
import { BaselineState, type LoadOptions } from './baseline-state.js';
import { protectedSet, type ProtectedSet } from '../config/protected-set.js';
import { loadKey, sealPath } from './keys.js';

export interface Loaded { rootFd: number; config: WardenConfig; state: BaselineState; pset: ProtectedSet }

/** The authenticated baseline, and the settings from its approved warden.toml (never the disk's). */
export function loadBaseline(root: string, opts: LoadOptions = { blobs: false }): Loaded {
  const rootFd = openRoot(root);
  try {
    const key = loadKey(root, false);
    const state = BaselineState.load(rootFd, key, opts, sealPath(root));
    const config = configFromBytes(state.bytesOf(rootFd, WARDEN_TOML));
    return { rootFd, config, state, pset: protectedSet(config) };
  } catch (err) {
    safeClose(rootFd);
    throw err;
  }
}

export const octal = (m: number): string => m.toString(8).padStart(4, '0');
