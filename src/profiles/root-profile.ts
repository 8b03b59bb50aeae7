/**
 * The profile of a guarded root (docs/PROFILES.md, "Grants in alerts, diffs and prompts"):
 * the example root is the shipped `warden-example` profile with `<root>` standing for it.
 * Reads the shipped profile once per process.
 */
import { shippedProfile } from './shipped.js';
import { CLASSIC_PROFILE, type RootProfile } from './root-rules.js';

/** The profile of an example-layout root, or null when the shipped profile cannot be read (then no grants are said). */
export function classicRootProfile(root: string): RootProfile | null {
  const profile = shippedProfile(CLASSIC_PROFILE);
  return profile ? { profile, places: { root } } : null;
}
