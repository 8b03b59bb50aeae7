/**
 * The shape of a profile file (docs/PROFILES.md, "A profile file"), as a strict zod schema:
 * an unknown key is an error, so a misspelt `widens` never silently protects nothing.
 */
import { z } from 'zod';
import { FORMATS } from '../formats/types.js';

export const LEVELS = ['user', 'project', 'system', 'root'] as const;
export type Level = (typeof LEVELS)[number];

/** Which way a grant key widens (docs/PROFILES.md, "Grant rules"). */
export const WIDENS = ['add', 'remove', 'enum', 'true', 'false', 'any'] as const;
export type Widens = (typeof WIDENS)[number];

const nonEmpty = z.string().min(1, 'must not be empty');
const scalar = z.union([z.string(), z.number(), z.boolean()]);

export const ruleSchema = z.strictObject({
  key: z.string(),
  widens: z.enum(WIDENS),
  /** enum: the values from narrowest to widest. */
  order: z.array(scalar).min(2, 'an order needs at least two values').optional(),
  /** The runtime's value when the key is absent (enum, true, false). */
  default: scalar.optional(),
  /** add/remove on an array: its order carries no meaning (a reorder is no change). */
  set: z.boolean().optional(),
  /** An object whose key order carries meaning (first or last match wins): a reorder is a change. */
  ordered: z.boolean().optional(),
  /** add: what an absent list means. "none" (the default): nothing, as an empty one; "all": every one (an agent without `tools` has them all), so removing the list widens. */
  absent: z.enum(['none', 'all']).optional(),
  /** add/remove on a string that holds a list ("Read, Grep, Bash"): the separator. */
  split: z.string().min(1).optional(),
  /** What the key means, in the owner's words (shown by `warden profiles NAME`). */
  why: z.string().optional(),
});
export type Rule = z.infer<typeof ruleSchema>;

export const fileSchema = z.strictObject({
  path: nonEmpty,
  level: z.enum(LEVELS),
  format: z.enum(FORMATS),
  /** The name of a rule set under [rules]; a file without one has no grant keys. */
  rules: z.string().optional(),
  /** The runtime reads this file's changes while it runs (no restart needed). */
  live: z.boolean().optional(),
  why: z.string().optional(),
});
export type ProfileFile = z.infer<typeof fileSchema>;

export const credentialSchema = z.strictObject({
  group: nonEmpty,
  file: nonEmpty,
  /** Key patterns holding secrets; ["*"]… or ["**"] for every key, [""] for a text file's whole content. */
  keys: z.array(z.string()).min(1, 'name at least one key ("**" for every key)'),
  why: z.string().optional(),
});
export type CredentialGroup = z.infer<typeof credentialSchema>;

export const runtimeWriteSchema = z.strictObject({
  file: nonEmpty,
  /** own: the runtime may change these keys by itself; on-behalf: it writes for the user, who approves. */
  mode: z.enum(['own', 'on-behalf']),
  keys: z.array(z.string()).min(1),
  /** Keys below `keys` it may never change (a grant, a base URL). */
  except: z.array(z.string()).optional(),
  why: z.string().optional(),
});
export type RuntimeWrite = z.infer<typeof runtimeWriteSchema>;

export const validatorSchema = z.strictObject({
  name: nonEmpty,
  /** The program, found on PATH or in the runtime's package (`package_bin`). */
  command: nonEmpty,
  /** Arguments; `{candidate}` is the scratch copy of the file checked, `{scratch}` the scratch directory standing for the runtime's home. */
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  /** The profile files (their `path`, as written under [[files]]) this validator checks. */
  files: z.array(nonEmpty).min(1),
  valid_exit_codes: z.array(z.number().int()).min(1),
  invalid_exit_codes: z.array(z.number().int()).optional(),
  timeout_ms: z.number().int().positive().max(120_000).default(15_000),
  /** What a pass means: schema (values checked), syntax (parse only), weak (neither reliably). */
  strength: z.enum(['schema', 'syntax', 'weak']),
  /** A platform binary inside the npm package, relative to its node_modules (launchers that refuse --ignore-scripts). */
  package_bin: z.string().optional(),
  /** Needs a Node version of at least this major (OpenClaw: 24). */
  node_major: z.number().int().positive().optional(),
  /** Where the runtime writes beside the candidate (a `$schema` key, a default config): the harness ignores these. */
  side_effects: z.array(z.string()).optional(),
  /** Where the candidate's copy goes, under `{scratch}`; absent: the harness's built-in check of that name places it, else `{scratch}/candidate/{name}` (docs/RUNTIMES.md). */
  candidate: z.string().regex(/^\{scratch\}\//, 'must start with {scratch}/').optional(),
  /** A regular expression the output must match for a pass; one whose match means invalid. */
  valid_output: z.string().optional(),
  invalid_output: z.string().optional(),
  /** Output lines that are noise (regular expressions). */
  drop_lines: z.array(z.string()).optional(),
  /** The check may run code the candidate names (then only inside bubblewrap); a check not built in is assumed to. */
  may_run_code: z.boolean().optional(),
  notes: z.string().optional(),
});
export type Validator = z.infer<typeof validatorSchema>;

export const profileSchema = z.strictObject({
  name: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'must be lower-case letters, digits and "-" (it is also the file name)'),
  runtime: nonEmpty,
  description: z.string().optional(),
  /** The runtime's npm package and the version its facts were checked against. */
  package: z.string().optional(),
  checked_version: z.string().optional(),
  files: z.array(fileSchema).min(1, 'a profile protects at least one file'),
  rules: z.record(z.string(), z.array(ruleSchema)).default({}),
  credentials: z.array(credentialSchema).default([]),
  runtime_writes: z.array(runtimeWriteSchema).default([]),
  validator: z.array(validatorSchema).default([]),
});
export type ProfileData = z.infer<typeof profileSchema>;
