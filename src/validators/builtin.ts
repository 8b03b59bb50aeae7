/**
 * The runtimes' own checks as measured (docs/RUNTIMES.md, "Each runtime's check"), and the
 * mapping from a profile's `[[validator]]` table onto a ValidatorSpec. `{arch}` in a
 * package path stands for Node's process.arch ("x64", "arm64").
 */
import type { Strength, ValidatorSpec } from './spec.js';

const CODEX_NOISE = '^WARNING: proceeding, even though we could not create PATH aliases';

export const BUILTIN: readonly ValidatorSpec[] = [
  {
    runtime: 'opencode', name: 'debug config', command: 'opencode', packageBin: 'opencode-linux-{arch}/bin/opencode',
    args: ['debug', 'config'], env: { OPENCODE_CONFIG: '{candidate}' }, candidate: '{scratch}/candidate/{name}',
    validExitCodes: [0], invalidExitCodes: [1], timeoutMs: 30_000, strength: 'schema',
    // a plugin named in the candidate is code OpenCode loads
    mayRunCode: true,
  },
  {
    runtime: 'codex', name: 'features list', command: 'codex', packageBin: '@openai/codex/bin/codex.js',
    args: ['features', 'list'], env: { CODEX_HOME: '{scratch}/.codex' }, candidate: '{scratch}/.codex/config.toml',
    validExitCodes: [0], invalidExitCodes: [1], dropLines: [CODEX_NOISE], timeoutMs: 15_000, strength: 'schema', mayRunCode: false,
  },
  {
    runtime: 'codex', name: 'execpolicy check', command: 'codex', packageBin: '@openai/codex/bin/codex.js',
    // the command after the rules is a harmless probe: only the parse matters
    args: ['execpolicy', 'check', '--rules', '{candidate}', 'true'], env: { CODEX_HOME: '{scratch}/.codex' }, candidate: '{scratch}/rules/{name}',
    validExitCodes: [0], invalidExitCodes: [1], dropLines: [CODEX_NOISE], timeoutMs: 15_000, strength: 'syntax', mayRunCode: false,
  },
  {
    runtime: 'gemini-cli', name: 'settings load', command: 'gemini', packageBin: '@google/gemini-cli/bundle/gemini.js',
    // a parse error exits 52; a schema error exits 0 but prints "Invalid configuration in <file>:"
    args: ['--version'], env: {}, candidate: '{scratch}/.gemini/settings.json',
    validExitCodes: [0], invalidExitCodes: [52], invalidOutput: '^Invalid configuration in ', dropLines: ['^\\d+\\.\\d+\\.\\d+\\S*$'],
    timeoutMs: 30_000, strength: 'schema', mayRunCode: false,
  },
  {
    runtime: 'claude-code', name: 'settings load', command: 'claude', packageBin: '@anthropic-ai/claude-code-linux-{arch}/claude',
    // `-p` with no credentials loads the settings, lists what did not load, then stops at
    // "Not logged in" (exit 1); it runs the candidate's SessionStart and UserPromptSubmit
    // hooks first, hence bubblewrap only
    args: ['-p', 'warden validate', '--max-turns', '1'], env: {}, candidate: '{scratch}/.claude/settings.json',
    validExitCodes: [1], invalidExitCodes: [], validOutput: '^Not logged in', invalidOutput: '^These settings did not load',
    dropLines: ['^Not logged in', '^Fix each problem listed', '^These settings did not load'],
    timeoutMs: 30_000, strength: 'schema', mayRunCode: true,
  },
  {
    runtime: 'openclaw', name: 'config validate', command: 'openclaw', packageBin: 'openclaw/openclaw.mjs',
    args: ['config', 'validate', '--json'], env: { OPENCLAW_CONFIG_PATH: '{candidate}', OPENCLAW_STATE_DIR: '{scratch}/.openclaw' }, candidate: '{scratch}/.openclaw/openclaw.json',
    // installed with --ignore-scripts and never started writable, it refuses to run (exit 1)
    validExitCodes: [0], invalidExitCodes: [1], brokenOutput: 'package lifecycle is incomplete', output: 'openclaw-json', dropLines: ['^\\[postinstall\\] '],
    timeoutMs: 60_000, strength: 'schema', nodeMajor: 24, mayRunCode: false,
  },
];

/** The built-in checks of one runtime. */
export function builtinFor(runtime: string): ValidatorSpec[] {
  return BUILTIN.filter((s) => s.runtime === runtime);
}

/**
 * A profile's `[[validator]]` table (src/profiles/schema.ts, docs/PROFILES.md) as this
 * harness reads it (docs/RUNTIMES.md, "A profile's [[validator]] table"). Where the
 * candidate goes and how the runtime finds it must agree, so they are taken as a unit:
 * - a table that names its `candidate` place is taken as written;
 * - else, when a built-in check has the same runtime and name, that check's program,
 *   arguments, environment and place are used (the table's time limit and exit codes kept);
 * - else the candidate is "{scratch}/candidate/{name}", and the table must pass
 *   `{candidate}` in its args or env: a check that would never see the candidate would
 *   always pass, so such a table is refused.
 */
export interface ProfileValidator {
  name: string;
  command: string;
  args?: readonly string[];
  env?: Readonly<Record<string, string>>;
  valid_exit_codes: readonly number[];
  invalid_exit_codes?: readonly number[];
  timeout_ms?: number;
  strength: Strength;
  package_bin?: string;
  node_major?: number;
  candidate?: string;
  valid_output?: string;
  invalid_output?: string;
  drop_lines?: readonly string[];
  may_run_code?: boolean;
}

export function fromProfileValidator(runtime: string, v: ProfileValidator): ValidatorSpec {
  const known = v.candidate === undefined ? BUILTIN.find((s) => s.runtime === runtime && s.name === v.name) : undefined;
  if (known) {
    return {
      ...known, args: [...known.args], env: { ...known.env },
      validExitCodes: known.validOutput !== undefined ? [...known.validExitCodes] : [...v.valid_exit_codes],
      invalidExitCodes: known.validOutput !== undefined ? [...known.invalidExitCodes] : [...(v.invalid_exit_codes ?? known.invalidExitCodes)],
      timeoutMs: v.timeout_ms ?? known.timeoutMs,
      ...(v.node_major !== undefined ? { nodeMajor: v.node_major } : {}),
    };
  }
  const args = [...(v.args ?? [])];
  const env = { ...(v.env ?? {}) };
  if (v.candidate === undefined && ![...args, ...Object.values(env)].some((x) => x.includes('{candidate}'))) {
    throw new Error(`validator "${v.name}" of ${runtime}: neither a candidate place nor {candidate} in its args or env, so it would never see the file it checks`);
  }
  const spec: ValidatorSpec = {
    runtime, name: v.name, command: v.command, args, env,
    candidate: v.candidate ?? '{scratch}/candidate/{name}',
    validExitCodes: [...v.valid_exit_codes], invalidExitCodes: [...(v.invalid_exit_codes ?? [])],
    timeoutMs: v.timeout_ms ?? 15_000, strength: v.strength,
    // a user's profile may name any program: unless it says otherwise, assume it runs code
    mayRunCode: v.may_run_code ?? true,
  };
  if (v.package_bin !== undefined) spec.packageBin = v.package_bin;
  if (v.node_major !== undefined) spec.nodeMajor = v.node_major;
  if (v.valid_output !== undefined) spec.validOutput = v.valid_output;
  if (v.invalid_output !== undefined) spec.invalidOutput = v.invalid_output;
  if (v.drop_lines !== undefined) spec.dropLines = [...v.drop_lines];
  return spec;
}
