/** The runtime's own check on a candidate file, offline, time-limited, on a scratch copy (docs/RUNTIMES.md). */
export type { ValidatorSpec, Verdict, VerdictStatus, Isolation, Strength } from './spec.js';
export { buildPlan, wrap, childEnv, candidatePath, substitute, safeName, exposedWithin, NOWHERE_PROXY, type RunPlan, type Places, type WrapOptions } from './plan.js';
export { judge, statusOf, cleanMessage, stripAnsi, openclawLines, showVerdict, unavailable, MAX_LINES, MAX_LINE, type Outcome } from './verdict.js';
export { BUILTIN, builtinFor, fromProfileValidator, type ProfileValidator } from './builtin.js';
export { locateProgram, pickNode, nodeMajor, probeIsolation, packageRootOf } from './locate.js';
export { validate, spawnBounded, HIDDEN, HIDDEN_FILES, type ValidateOptions } from './run.js';
export { runtimesCache, cachedPackages, cachedNodes, installedOptions } from './installed.js';
