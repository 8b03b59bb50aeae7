/**
 * The authenticated baseline of a root, opened read-only, without its settings: what
 * `loadBaseline` builds on, and what `verify` starts reading files from while the approved
 * warden.toml (zod, picomatch: the slow modules to load) is still being parsed.
 */
import { openRoot, safeClose } from '../fsx/beneath.js';
import { BaselineState, type LoadOptions } from './baseline-state.js';
import { sealPath } from './keys.js';
import { loadKeyOrExplainMove } from './rehome.js';
import { Store } from './store.js';

export interface Opened { rootFd: number; store: Store; state: BaselineState; close(): void }

export function openBaseline(root: string, opts: LoadOptions = { blobs: false }): Opened {
  const store = Store.open(root);
  let rootFd = -1;
  try {
    rootFd = openRoot(root);
    const key = loadKeyOrExplainMove(root, false);
    const state = BaselineState.load(store.fd, key, opts, sealPath(root)).publishFor(rootFd);
    const fd = rootFd;
    return { rootFd, store, state, close: () => { safeClose(fd); store.close(); } };
  } catch (err) {
    if (rootFd >= 0) safeClose(rootFd);
    store.close();
    throw err;
  }
}

export const octal = (m: number): string => m.toString(8).padStart(4, '0');
