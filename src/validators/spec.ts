/**
 * What the validator harness needs to know about one runtime's own check (docs/RUNTIMES.md,
 * "The runtime's own check"): the program, how to call it on a scratch copy, and what its
 * exit code and output mean. Data only; a profile's `[[validator]]` table maps onto it
 * (fromProfileValidator in builtin.ts).
 */

/** What a pass means: values checked against the runtime's schema, a parse only, or neither reliably. */
export type Strength = 'schema' | 'syntax' | 'weak';

export interface ValidatorSpec {
  /** The runtime's name, as a profile names it ("opencode", "codex"). */
  runtime: string;
  /** The check's own name ("debug config"). */
  name: string;
  /** The program: a name looked up on the search path, or the package's own file (`packageBin`). */
  command: string;
  /** The program inside the runtime's npm package, relative to its node_modules (a platform binary whose launcher refuses --ignore-scripts). */
  packageBin?: string;
  /** Arguments; `{candidate}` is the scratch copy of the file checked, `{scratch}` the scratch home, `{name}` the real file's base name. */
  args: readonly string[];
  /** Variables on top of the harness's minimal environment; the same two placeholders. */
  env: Readonly<Record<string, string>>;
  /** Where the candidate's copy is placed, under `{scratch}` ("{scratch}/.codex/config.toml", "{scratch}/rules/{name}"). */
  candidate: string;
  /** Exit codes that mean "valid" (and, when `validOutput` is set, only with that output). */
  validExitCodes: readonly number[];
  /** Exit codes that mean "invalid". */
  invalidExitCodes: readonly number[];
  /** A regular expression (source, flag m) the output must match for a pass. */
  validOutput?: string;
  /** A regular expression (source, flag m) whose match means "invalid" whatever the exit code. */
  invalidOutput?: string;
  /** A regular expression (source, flag m) whose match means the runtime itself is broken (an install not finished): an error, never "invalid". */
  brokenOutput?: string;
  /** How to read the output: plain text, or OpenClaw's `--json` answer (its `issues` listed as "key: message"). */
  output?: 'text' | 'openclaw-json';
  /** Lines of output that are noise, not part of the message (regular expression sources). */
  dropLines?: readonly string[];
  timeoutMs: number;
  strength: Strength;
  /** The program needs at least this major version of Node (OpenClaw: 24). */
  nodeMajor?: number;
  /**
   * The check may run code the candidate names (Claude Code runs its hooks before anything
   * else): it then runs only inside bubblewrap (read-only filesystem), never under a bare
   * network namespace.
   */
  mayRunCode: boolean;
}

export type VerdictStatus = 'valid' | 'invalid' | 'error' | 'timeout' | 'unavailable';

/** How the validator was kept off the network and off the real files. */
export type Isolation = 'bwrap' | 'unshare' | 'none';

/** The runtime's verdict on a candidate, ready to show (docs/RUNTIMES.md, "Verdicts"). */
export interface Verdict {
  runtime: string;
  validator: string;
  status: VerdictStatus;
  /** True only for status "valid": everything else fails closed. */
  ok: boolean;
  exitCode: number | null;
  signal: string | null;
  /** The runtime's own words, one escaped line per line (control characters made visible), scratch paths replaced by the real file's. */
  message: string;
  durationMs: number;
  isolation: Isolation;
  strength: Strength;
}
