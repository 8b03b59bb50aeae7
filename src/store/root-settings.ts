/**
 * The settings a root runs on (docs/PROFILES.md, "A profile's root"): a root with its own
 * config/warden.toml runs on its approved copy; a profile's root has none, and runs on the
 * built-in defaults, or the settings recorded with it at `init --settings`, with the profile's
 * files as recorded in its authenticated index. Pure.
 */
import { dict } from '../common/dict.js';
import type { RootSettings } from '../config/protected-set.js';
import type { WardenConfig } from '../config/warden-config.js';
import type { ProfileRootRecord } from '../config/profile-root.js';

export function settingsFor(config: WardenConfig, index: { profile?: ProfileRootRecord | undefined }): RootSettings {
  if (!index.profile) return config;
  // Its own settings, when `init --settings` recorded some (the record is authenticated with the index).
  const own = index.profile.settings;
  return { ...config, ...(own ?? {}), protect: [], credentials: { files: [], groups: dict() }, profileRoot: index.profile };
}
