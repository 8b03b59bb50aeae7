/**
 * Validate a proposed file by its kind before it can become approved (as visudo does).
 * Pure: takes texts, returns located errors (never a credential value).
 */
import type { Located } from '../common/errors.js';
import { parseWardenConfig, type WardenConfig } from '../config/warden-config.js';
import { parseTomlShared } from '../toml/index.js';
import { diffCredentials } from '../credentials/rules.js';
import { failedCheckMessage, halfAppliedMessage } from '../credentials/names.js';
import type { FileKind } from '../config/protected-set.js';
import { validatePolicyChange, validatePolicyFile, type PolicyFileInput } from '../policy/index.js';

export interface Proposal {
  path: string;
  kind: FileKind;
  /** Proposed content; null = remove. */
  text: string | null;
  /** The currently approved content, for credential group rules. */
  approvedText: string | null;
}

/**
 * `policy`, when given, is the approved set of policy files: errors the change would add
 * elsewhere in the set (a channel bound to two orgs…) are reported too.
 */
/** Kinds that `warden rm` may remove. */
export const removable = (kind: FileKind): boolean => kind === 'org' || kind === 'block' || kind === 'text';

export function validateProposal(p: Proposal, config: WardenConfig, policy?: readonly PolicyFileInput[]): Located[] {
  if (p.text === null) {
    if (p.kind !== 'org' && p.kind !== 'block' && p.kind !== 'text') return [{ file: p.path, message: `only org, block and extra protected files can be removed; ${p.kind} files are edited instead` }];
    return policy && (p.kind === 'org' || p.kind === 'block') ? validatePolicyChange(policy, p.path, null) : [];
  }
  switch (p.kind) {
    case 'warden': {
      const r = parseWardenConfig(p.text, p.path);
      if (!r.ok) return r.errors;
      return policy ? validatePolicyChange(policy, p.path, p.text) : [];
    }
    case 'credentials': {
      const d = diffCredentials(p.approvedText, p.text, config, p.path);
      const errors: Located[] = [...d.parseErrors];
      for (const h of d.halfGroups) errors.push({ file: p.path, key: h.group, message: halfAppliedMessage(h) });
      for (const c of d.failedChecks) errors.push({ file: p.path, key: c.group, message: failedCheckMessage(c) });
      return errors;
    }
    case 'conditions': case 'guests': case 'org': case 'block':
      return policy ? validatePolicyChange(policy, p.path, p.text) : validatePolicyFile(p.kind, p.path, p.text);
    case 'text':
      return [];
  }
}

/** Kinds stored as TOML get a syntax check even where no schema applies. */
export function tomlSyntax(path: string, text: string): Located[] {
  if (!path.endsWith('.toml')) return [];
  const r = parseTomlShared(text, path);
  return r.ok ? [] : [r.error];
}
