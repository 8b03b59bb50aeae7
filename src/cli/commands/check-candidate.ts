/**
 * `warden check --from FILE PATH` (and `check PATH`): the root's policy files as they are,
 * with PATH's content taken from FILE, validated by the same loader as `warden check`, as
 * `visudo -c -f` does. Nothing is installed or proposed.
 */
import { EXIT, WardenError } from '../../common/errors.js';
import { notTextReason } from '../../common/text.js';
import { MAX_POLICY_BYTES, policyKindOf, type PolicyFileInput } from '../../policy/index.js';
import { readProposal } from './apply-input.js';
import { parseWardenConfig, WARDEN_TOML } from '../../config/warden-config.js';
import type { Located } from '../../common/errors.js';

export interface Candidate { path: string; from: string; text: string }

/** Read the candidate; PATH must be a policy file (conditions, guests, warden.toml, an org or a block). */
export function readCandidate(path: string, from: string): Candidate {
  if (!policyKindOf(path) && path !== WARDEN_TOML) throw new WardenError(`${path} is not a policy file: check validates config/{warden,conditions,guests}.toml, orgs/*.toml and blocks/conditional/*.md`, EXIT.usage);
  const bytes = readProposal(from, MAX_POLICY_BYTES);
  const why = notTextReason(bytes);
  if (why) throw new WardenError(`${from === '-' ? 'stdin' : from} ${why}; a policy file is UTF-8 text`, EXIT.finding);
  return { path, from, text: bytes.toString('utf8') };
}

/** The loader's input with the candidate in PATH's place (added when the root has no such file). */
export function withCandidate(files: PolicyFileInput[], c: Candidate): PolicyFileInput[] {
  const rest = files.filter((f) => f.path !== c.path);
  return [...rest, { path: c.path, text: c.text }];
}

/** A warden.toml candidate is also checked as warden's settings (the policy loader reads only its owner). */
export function settingsErrors(c: Candidate): Located[] {
  if (c.path !== WARDEN_TOML) return [];
  const r = parseWardenConfig(c.text, c.path);
  return r.ok ? [] : r.errors;
}
