import { contextFacts, evaluatePath, matchingBlocks, ruleLabel, type PathStep } from './conditions.js';
import { BLOCKS_DIR } from './blocks.js';
import { checkContext } from './context.js';
import { accessFor, resolveTier, tierGrantsPath, type Access, type Resolution } from './tiers.js';
import type { PolicySet, SessionContext, SourceRef, Tier } from './types.js';

export function formatSource(s: SourceRef | null | undefined): string | null {
  if (!s) return null;
  return [s.file, s.line].filter((x) => x !== undefined).join(':');
}

export interface TargetExplanation {
  target: string;
  access: 'read' | 'write';
  decision: 'allow' | 'deny';
  /** The rule that decided, as it reads in its file (or a tier grant), or null for the baseline. */
  rule: string | null;
  /** "file:line" of that rule, or null. */
  source: string | null;
  /** Which check decided a deny: the tier, or conditions.toml. */
  decided_by: 'tier' | 'conditions';
  tier: { granted: boolean; folder: string | null; reason: string; source: string | null };
  conditions: { decision: 'allow' | 'deny'; step: PathStep; rule: string | null; source: string | null; reason: string };
}

export interface Explanation {
  tier: Tier;
  org: string | null;
  resolved_by: Resolution['resolvedBy'];
  resolution: { step: Resolution['step']; reason: string; source: string | null; notes: string[] };
  user: string;
  context: SessionContext;
  facts: string[];
  blocks: string[];
  blocks_detail: { name: string; rule: string; source: string | null; loaded: boolean; reason: string }[];
  commands: string[];
  shell: boolean;
  skills: boolean;
  subtasks: boolean;
  write: boolean;
  hourly_cap: number | null;
  folders: { folder: string; source: string | null; conditions: TargetExplanation['conditions'] }[];
  targets: TargetExplanation[];
}

/** Decide one target: readable only when the tier grants it AND conditions.toml allows it. Pure. */
export function explainTarget(policy: PolicySet, access: Access, facts: ReadonlySet<string>, target: string, write: boolean): TargetExplanation {
  const t = tierGrantsPath(access, target, write);
  const c = evaluatePath(policy.conditions, target, facts);
  const cond = { decision: c.decision, step: c.step, rule: c.rule ? ruleLabel(c.rule) : null, source: formatSource(c.rule?.source ?? (c.step === 0 ? { file: 'config/conditions.toml' } : null)), reason: c.reason };
  const tierSource = t.granted && access.tier !== 'owner' ? formatSource(access.foldersSource) : null;
  const tierPart = { granted: t.granted, folder: t.folder, reason: t.reason, source: tierSource };
  const make = (decision: 'allow' | 'deny', decided_by: 'tier' | 'conditions', rule: string | null, source: string | null): TargetExplanation =>
    ({ target, decision, rule, source, access: write ? 'write' : 'read', decided_by, tier: tierPart, conditions: cond });
  // The tier is checked first: when it grants nothing, conditions.toml cannot add anything.
  if (!t.granted) return make('deny', 'tier', `tier ${access.tier}${access.org ? ` (org ${access.org})` : ''}`, tierSource);
  if (c.decision === 'deny') return make('deny', 'conditions', cond.rule, cond.source);
  return make('allow', 'conditions', cond.rule ?? (t.folder && access.tier !== 'owner' ? `folder ${t.folder}` : null), cond.rule ? cond.source : tierSource);
}

/**
 * "What can this person see right now": tier and how it was resolved, loaded blocks,
 * commands, folders and a decision for every target. Pure: the runtime can call it too.
 */
export function explain(policy: PolicySet, user: string, ctx: SessionContext, targets: readonly string[] = [], opts: { write?: boolean } = {}): Explanation {
  const r = resolveTier(policy, user, ctx);
  const access = accessFor(policy, r);
  const known = checkContext(ctx);
  const facts = contextFacts(ctx);
  const blockRules = policy.conditions ? policy.conditions.rules.filter((x) => x.section === 'blocks') : [];
  const holding = new Set(matchingBlocks(policy.conditions, facts));
  const blocks_detail = blockRules.map((rule) => {
    const file = policy.blocks.get(rule.key);
    const holds = holding.has(rule);
    // A block belongs to a session someone is allowed to have: tier none gets nothing at all.
    const loaded = known.ok && holds && file !== undefined && r.tier !== 'none';
    const reason = !known.ok ? `${known.why}: no block loads`
      : !holds ? 'its condition does not hold here'
      : file === undefined ? `${BLOCKS_DIR}/${rule.key}.md is missing or invalid`
      : r.tier === 'none' ? 'tier none gets nothing' : 'its condition holds';
    return { name: rule.key, rule: ruleLabel(rule), source: formatSource(rule.source), loaded, reason };
  });
  return {
    tier: r.tier,
    org: r.org,
    resolved_by: r.resolvedBy,
    resolution: { step: r.step, reason: r.reason, source: formatSource(r.source), notes: r.notes },
    user,
    context: known.ok ? known.ctx : ctx,
    facts: [...facts].sort(),
    blocks: blocks_detail.filter((b) => b.loaded).map((b) => b.name),
    blocks_detail,
    commands: access.commands,
    shell: access.shell,
    skills: access.skills,
    subtasks: access.subtasks,
    write: access.write,
    hourly_cap: access.hourlyCap,
    folders: access.folders.map((folder) => ({ folder, source: formatSource(access.foldersSource), conditions: explainTarget(policy, access, facts, folder, false).conditions })),
    targets: targets.map((t) => explainTarget(policy, access, facts, t, opts.write === true)),
  };
}
