/** Shared by the reading commands: load the authenticated baseline without changing anything. */
import { WARDEN_TOML, configFromBytes, type WardenConfig } from '../config/warden-config.js';
import type { LoadOptions } from './baseline-state.js';
import { protectedSet, type ProtectedSet } from '../config/protected-set.js';
import { openBaseline, type Opened } from './open-baseline.js';
import { settingsFor } from './root-settings.js';

export interface Loaded extends Opened { config: WardenConfig; pset: ProtectedSet }

/** The authenticated baseline, and the settings from its approved warden.toml (never the disk's). */
export function loadBaseline(root: string, opts: LoadOptions = { blobs: false }): Loaded {
  const o = openBaseline(root, opts);
  try {
    const config = settingsFor(configFromBytes(o.state.bytesOf(o.store.fd, WARDEN_TOML)), o.state.index);
    return { ...o, config, pset: protectedSet(config) };
  } catch (err) {
    o.close();
    throw err;
  }
}

export { octal } from './open-baseline.js';
