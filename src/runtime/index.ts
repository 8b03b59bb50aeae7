/**
 * warden's runtime library (docs/CONTRACT.md §Runtime view): an approved view of a root, for the agent runtime.
 * One import gives the view and the policy questions to ask of it:
 *
 *   import { openApprovedView, canRead } from 'warden/runtime';
 *   const view = openApprovedView('/srv/agent');
 *   view.on('change', (s) => console.log('now at generation', s.generation, s.ok ? '' : s.reason));
 *   const s = view.current();
 *   canRead(s.policy, userId, { kind: 'guild', guild, channel }, '/workspace/bookclub/notes.md');
 *   s.credentials.discord?.token;
 *
 * Every state current() returns is one warden approved (or closed: grants nothing, no
 * credentials). See docs/RUNTIME.md for the guarantee and its limits.
 */
export { openApprovedView, type ApprovedView, type ViewOptions, type ViewStats } from './view.js';
export type { ApprovedState, Credentials } from './state.js';
export { DEPLOYMENT_DIRS, MANIFEST_NAME, type DeploymentDirs } from '../store/manifest-format.js';
export {
  canRead, explain, explainTarget, resolveTier, accessFor, evaluatePath, formatSource,
  type Explanation, type TargetExplanation, type PolicySet, type SessionContext, type Tier,
} from '../policy/index.js';
export {
  commandArgv, argvPermitted, shellSyntax, type CommandDecision, type SandboxPlan, type SandboxLimits, DEFAULT_LIMITS,
} from '../policy/index.js';
export { sandboxPlanFor, runSandboxed, prepareSandbox, startSandbox, sandboxPreview, lstatProbe, type PreparedSandbox, type RunSandboxedOptions, type SandboxResult } from './sandbox.js';
