/** Shared by the reading commands: load the authenticated baseline without changing anything. */
import { loadWardenConfig, type WardenConfig } from '../config/warden-config.js';
import { openRoot } from '../fsx/beneath.js';
import { BaselineState } from '../guard/baseline-state.js';
import { protectedSet, type ProtectedSet } from '../config/protected-set.js';
import { loadKey } from '../store/keys.js';

export interface Loaded { rootFd: number; config: WardenConfig; state: BaselineState; pset: ProtectedSet }

export function loadBaseline(root: string, opts: { blobs: boolean } = { blobs: false }): Loaded {
  const config = loadWardenConfig(root);
  const rootFd = openRoot(root);
  const key = loadKey(root, false);
  const state = BaselineState.load(rootFd, key, opts);
  return { rootFd, config, state, pset: protectedSet(config) };
}

export const octal = (m: number): string => m.toString(8).padStart(4, '0');
