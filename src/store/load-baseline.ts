/** Shared by the reading commands: load the authenticated baseline without changing anything. */
import { WARDEN_TOML, configFromBytes, type WardenConfig } from '../config/warden-config.js';
import { openRoot, safeClose } from '../fsx/beneath.js';
import { BaselineState, type LoadOptions } from './baseline-state.js';
import { protectedSet, type ProtectedSet } from '../config/protected-set.js';
import { sealPath } from './keys.js';
import { loadKeyOrExplainMove } from './rehome.js';
import { Store } from './store.js';

export interface Loaded { rootFd: number; store: Store; config: WardenConfig; state: BaselineState; pset: ProtectedSet; close(): void }

/** The authenticated baseline, and the settings from its approved warden.toml (never the disk's). */
export function loadBaseline(root: string, opts: LoadOptions = { blobs: false }): Loaded {
  const store = Store.open(root);
  let rootFd = -1;
  try {
    rootFd = openRoot(root);
    const key = loadKeyOrExplainMove(root, false);
    const state = BaselineState.load(store.fd, key, opts, sealPath(root)).publishFor(rootFd);
    const config = configFromBytes(state.bytesOf(store.fd, WARDEN_TOML));
    const fd = rootFd;
    return { rootFd, store, config, state, pset: protectedSet(config), close: () => { safeClose(fd); store.close(); } };
  } catch (err) {
    if (rootFd >= 0) safeClose(rootFd);
    store.close();
    throw err;
  }
}

export const octal = (m: number): string => m.toString(8).padStart(4, '0');
