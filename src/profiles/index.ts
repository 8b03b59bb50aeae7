/** Profiles: a runtime's files, formats, grant keys, credentials, own writes and validators, as data (docs/PROFILES.md). */
export { loadProfiles, parseProfile, userProfilesDir, SHIPPED_DIR, type Profile, type LoadResult } from './load.js';
export { expandPath, fileEntryFor, factsFor, isGlob, type FileFacts, type Places } from './paths.js';
export { parseKeyPattern, matchKey, reachesBelow, atOrBelow, specificity, keyWords, type KeyPattern, type KeyPath } from './keys.js';
export { LEVELS, WIDENS, type Level, type Widens, type ProfileData, type ProfileFile, type Rule, type RuntimeWrite, type Validator, type CredentialGroup } from './schema.js';
export { ruleWords, summarize, filesWords, type ProfileSummary } from './describe.js';
export { rulesAt, entryAt, levelRootProfile, CLASSIC_PROFILE, type RootProfile } from './root-rules.js';
export { classicRootProfile, rootProfileFor } from './root-profile.js';
export { shippedProfile, profileShape } from './shipped.js';
