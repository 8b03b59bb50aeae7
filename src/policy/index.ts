/**
 * warden's policy library (docs/CONTRACT.md §Policy): validate conditions.toml, conditional blocks, org
 * files, guests.toml and the owner, and decide what a person can see in a session.
 *
 * The evaluator is pure (no I/O): build a PolicySet once from file texts with
 * `buildPolicy`, or from a directory with `loadPolicyFromRoot`, then ask `explain`,
 * `resolveTier`, `evaluatePath` or `canRead` as often as needed.
 *
 *   import { loadPolicyFromRoot, explain } from 'warden/policy';
 *   const { policy, errors } = loadPolicyFromRoot('/srv/agent');
 *   const e = explain(policy, '222222222222222222', { kind: 'guild', guild: '1', channel: '444444444444444444' }, ['/workspace/bookclub/a.md']);
 *   e.tier; e.targets[0].decision;
 *
 * Fail-closed everywhere: a missing, blank, unparsable or invalid manifest grants nothing
 * in its scope. See docs/POLICY.md for the rules and every decision made where docs/CONTRACT.md §Policy is silent.
 */
import { contextFacts } from './conditions.js';
import { evaluatePath } from './conditions.js';
import { folderContaining, resolveTier, tierFolders } from './tiers.js';
import type { PolicySet, SessionContext } from './types.js';

export type {
  Action, BlockFile, Condition, ConditionsPolicy, FileHealth, FileStatus, Guests, Org, PolicyFileInput,
  PolicyKind, PolicyLoadResult, PolicySet, Rule, Section, SessionContext, SourceRef, Tier,
} from './types.js';
export type { Located } from '../common/errors.js';
export {
  CONDITIONS_TOML, SECTION_ACTIONS, parseCondition, parseConditions, contextFacts, conditionHolds, ruleHolds,
  evaluatePath, matchingBlocks, ruleLabel, type PathDecision, type PathStep, type ConditionsResult,
} from './conditions.js';
export { BLOCKS_DIR, parseBlock, blockNameOf, type BlockResult } from './blocks.js';
export { GUESTS_TOML, ORGS_DIR, parseOrg, parseGuests, orgNameOf, type OrgResult, type GuestsResult } from './manifests.js';
export { SNOWFLAKE_RE, isSnowflake, splitTarget, keyMatches, isCanonicalRelative } from './paths.js';
export { buildPolicy, parseOwner, policyKindOf } from './load.js';
export { resolveTier, accessFor, tierGrantsPath, commandPermitted, sessionChannels, type Access, type Resolution, type ResolvedBy } from './tiers.js';
export { commandArgv, argvPermitted, shellSyntax, type CommandDecision } from './commands.js';
export {
  sandboxPlan, sandboxView, sandboxLayout, sandboxArgs, describeLayout, DEFAULT_LIMITS, MAX_SANDBOX_ENTRIES, MAX_LAYOUT_ENTRIES, MAX_WALK_NAMES,
  type SandboxPlan, type SandboxOptions, type PathProbe, type SandboxView, type SandboxLimits, type SandboxSection,
  type SandboxLayout, type SandboxEntry, type HostEntry, type HostKind, type HostWalker,
} from './sandbox.js';
export { checkContext } from './context.js';
export { explain, explainTarget, formatSource, type Explanation, type TargetExplanation } from './explain.js';
export { validatePolicyFile, validatePolicyChange, validatePolicyState } from './validate.js';
export { loadPolicyFromRoot, readPolicyFiles, policyFileHealth, MAX_POLICY_BYTES } from './fs.js';

/**
 * The runtime's one-line question: may `user` read (or, with write, write) `path` in this
 * session? True only when the tier grants it AND conditions.toml allows it.
 */
export function canRead(policy: PolicySet, user: string, ctx: SessionContext, path: string, opts: { write?: boolean } = {}): boolean {
  // The same decision as explainTarget (tier grants it AND conditions.toml allows it),
  // without building the explanation: the runtime asks this on every file access.
  if (typeof path !== 'string') return false;
  const r = resolveTier(policy, user, ctx);
  if (r.tier === 'none') return false;
  if (opts?.write === true && r.tier !== 'owner') return false; // only the owner writes (accessFor)
  if (folderContaining(tierFolders(policy, r), path) === null) return false;
  return evaluatePath(policy.conditions, path, contextFacts(ctx)).decision === 'allow';
}
