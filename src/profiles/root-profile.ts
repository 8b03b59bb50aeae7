/**
 * The profile of a guarded root (docs/PROFILES.md, "Grants in alerts, diffs and prompts"):
 * the example root is the shipped `warden-example` profile with `<root>` standing for it; a
 * profile's root (`warden init --profile`) is the shipped profile its authenticated index
 * names, placed at the level it records. Only shipped profiles are read here: a user's own
 * profile lives where an agent of the same user can write, so it never words an alert.
 * Reads each shipped profile once per process.
 */
import type { ProfileRootRecord } from '../config/profile-root.js';
import { shippedProfile } from './shipped.js';
import { profileRootPlan } from './root.js';
import { CLASSIC_PROFILE, levelRootProfile, type RootProfile } from './root-rules.js';

/** The profile of an example-layout root, or null when the shipped profile cannot be read (then no grants are said). */
export function classicRootProfile(root: string): RootProfile | null {
  const profile = shippedProfile(CLASSIC_PROFILE);
  return profile ? { profile, places: { root } } : null;
}

/**
 * The profile of `root` as its index records it (`record`: the index's profile record, absent
 * for an example-layout root), or null when no grants can be said: a profile that is not
 * shipped, or whose files no longer lie where the record put the root.
 */
export function rootProfileFor(root: string, record: ProfileRootRecord | undefined): RootProfile | null {
  if (!record) return classicRootProfile(root);
  const profile = shippedProfile(record.profile);
  if (!profile) return null;
  return levelRootProfile(profile, record.level, root, profileRootPlan(profile, record.level).dir) ?? null;
}
