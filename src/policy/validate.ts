import type { Located } from '../common/errors.js';
import { parseBlock } from './blocks.js';
import { parseConditions } from './conditions.js';
import { buildPolicy, parseOwner, policyKindOf } from './load.js';
import { parseGuests, parseOrg } from './manifests.js';
import type { PolicyFileInput, PolicyKind } from './types.js';

/**
 * Validate one policy file's proposed content by kind, on its own (no other file is
 * consulted). Empty result = valid. A blank manifest is an error: installing it would
 * deny everything in its scope. Pure and total: never throws.
 */
export function validatePolicyFile(kind: PolicyKind, relPath: string, text: string): Located[] {
  try {
    switch (kind) {
      case 'conditions': return parseConditions(text, relPath).errors;
      case 'guests': return parseGuests(text, relPath).errors;
      case 'org': return parseOrg(text, relPath).errors;
      case 'block': return parseBlock(text, relPath).errors;
      case 'warden': return parseOwner(text, relPath).errors;
    }
  } catch (err) {
    return [{ file: relPath, message: `cannot validate: ${String(err)}` }];
  }
  return [{ file: relPath, message: `unknown policy kind "${String(kind)}"` }];
}

const sig = (e: Located) => `${e.file}\u0000${e.key ?? ''}\u0000${e.message}`;

/**
 * Validate a proposed change in the context of the other policy files (the current
 * snapshot): the file's own errors, plus any error the change would add elsewhere in the
 * set, such as a channel now bound to two orgs. Errors the set already had are not blamed
 * on the change. `text === null` means the file is being removed. Pure and total.
 * Block/rule pairing ("a rule without a file") is reported by `warden check`, not here,
 * since adding a block needs two changes and either order passes through that state.
 */
export function validatePolicyChange(current: readonly PolicyFileInput[], relPath: string, text: string | null): Located[] {
  try {
    const kind = policyKindOf(relPath);
    if (kind === null) return [];
    const own = text === null ? [] : validatePolicyFile(kind, relPath, text);
    const next = [...current.filter((f) => f.path !== relPath), ...(text === null ? [] : [{ path: relPath, text }])];
    const pairing = (e: Located) => /has a rule but no file|block file has no rule/.test(e.message);
    // The new set first: when it has no error beyond the file's own, the approved set need
    // not be built at all (nothing to subtract; a cold parse of the seed's 468
    // rules per apply).
    const candidates = buildPolicy(next).errors.filter((e) => !pairing(e) && !(e.file === relPath && own.some((o) => sig(o) === sig(e))));
    const before = candidates.length ? new Set(buildPolicy(current).errors.map(sig)) : new Set<string>();
    const added = candidates.filter((e) => !before.has(sig(e)));
    // Removing conditions.toml or guests.toml shows up here as a new "missing: grants nothing" error.
    return [...own, ...added];
  } catch (err) {
    return [{ file: relPath, message: `cannot validate: ${String(err)}` }];
  }
}

/**
 * Validate several changes as one new state (docs/CONTRACT.md §Changes: a block file and the rule that
 * loads it change together): each file's own errors, plus every error of the new set
 * that the approved set did not have — block/rule pairing included, since the whole
 * change is judged at once. `text === null` removes a file. Pure and total.
 */
export function validatePolicyState(current: readonly PolicyFileInput[], changes: readonly { path: string; text: string | null }[]): Located[] {
  try {
    const byPath = new Map(current.map((f) => [f.path, f]));
    const own: Located[] = [];
    for (const c of changes) {
      const kind = policyKindOf(c.path);
      if (kind === null) continue;
      if (c.text === null) byPath.delete(c.path); else byPath.set(c.path, { path: c.path, text: c.text });
      if (c.text !== null) own.push(...validatePolicyFile(kind, c.path, c.text));
    }
    const ownSigs = new Set(own.map(sig));
    // The new state first: the approved one is built only when there is something to tell apart.
    const candidates = buildPolicy([...byPath.values()]).errors.filter((e) => !ownSigs.has(sig(e)));
    const before = candidates.length ? new Set(buildPolicy(current).errors.map(sig)) : new Set<string>();
    const added = candidates.filter((e) => !before.has(sig(e)));
    return [...own, ...added];
  } catch (err) {
    return [{ file: changes[0]?.path ?? '.', message: `cannot validate: ${String(err)}` }];
  }
}
