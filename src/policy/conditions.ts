import { z } from 'zod';
import type { Located } from '../common/errors.js';
import { isBlankToml, parseTomlShared, locateKey } from '../toml/index.js';
import { validateToml } from '../toml/schema.js';
import { ensureLocated, errAt, lazyProperty } from './locate.js';
import { checkContext } from './context.js';
import { rulesMatching } from './decide.js';
import { deepFreeze } from './recent.js';
import { isCanonicalRelative, keySpecificity, splitTarget, SNOWFLAKE_RE } from './paths.js';
import type { Action, Condition, ConditionsPolicy, FileStatus, Rule, Section, SessionContext } from './types.js';

export const CONDITIONS_TOML = 'config/conditions.toml';

/** Which actions each section allows (docs/CONTRACT.md §Conditions). */
export const SECTION_ACTIONS: Record<Section, readonly Action[]> = {
  blocks: ['load'],
  memories: ['allow', 'deny'],
  workspace: ['allow', 'deny'],
};

/** A block name doubles as a file stem under blocks/conditional/, so keep it a plain name. */
export const BLOCK_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

const ID = SNOWFLAKE_RE.source.slice(1, -1);
/** The eight condition forms, with an optional leading "!". Nothing else is a condition. */
const CONDITION_RE = new RegExp(`^(!?)(discord:nsfw|discord:dm|discord:dm:${ID}|discord:guild:${ID}|discord:channel:${ID}|discord:forum:${ID}|internal|tui)$`);

/** Parse one condition string; null when it is not one of the eight forms. */
export function parseCondition(text: string): Condition | null {
  const m = CONDITION_RE.exec(text);
  if (!m) return null;
  return { text, negated: m[1] === '!', fact: m[2] as string };
}

export const ruleSchema = z.strictObject({
  when: z.union([z.string(), z.array(z.string())], {
    error: 'must be a condition string or a non-empty array of condition strings',
  }),
  mode: z.enum(['or', 'and'], { error: 'must be "or" or "and"' }).optional(),
  action: z.string({ error: 'must be a string: "load", "allow" or "deny"' }),
}, { error: 'must be a table of when, mode and action' });

// The sections only: each rule is validated on its own (below), so that one rule's
// structural error (a bad mode, an unknown key, a missing action) hides nothing else.
export const sectionsSchema = z.strictObject({
  blocks: z.record(z.string(), z.unknown(), { error: 'must be a table of rules' }).optional(),
  memories: z.record(z.string(), z.unknown(), { error: 'must be a table of rules' }).optional(),
  workspace: z.record(z.string(), z.unknown(), { error: 'must be a table of rules' }).optional(),
});

/** A TOML table (smol-toml builds them without a prototype), not an array or a date. */
const isTable = (v: unknown): v is Record<string, unknown> => {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === null || proto === Object.prototype;
};

/**
 * The top level as sectionsSchema (with validateToml's __proto__ check) plainly accepts it:
 * only the three sections, each a table, none with a rule named __proto__. Anything else
 * goes to the schema, which decides and words the error. Zod and the __proto__
 * walk cost more than the rest of a cold parse of the seed's 468 rules.
 */
export function plainSections(v: Record<string, unknown>): boolean {
  for (const k of Object.keys(v)) {
    if (k !== 'blocks' && k !== 'memories' && k !== 'workspace') return false;
    const t = v[k];
    if (!isTable(t) || Object.hasOwn(t, '__proto__')) return false;
  }
  return true;
}

/** A string, or an array of strings (empty too: ruleSchema accepts it; the loop refuses it). */
function isWhenShape(w: unknown): boolean {
  if (typeof w === 'string') return true;
  if (!Array.isArray(w)) return false;
  for (let i = 0; i < w.length; i++) if (typeof w[i] !== 'string') return false;
  return true;
}

/** A rule ruleSchema plainly accepts (so it has no structural error): only when, mode and action, of their types. */
export function plainRule(v: unknown): v is { when: string | string[]; mode?: 'or' | 'and'; action: string } {
  if (!isTable(v)) return false;
  let n = 0;
  for (const k of Object.keys(v)) {
    if (k === 'when') { if (!isWhenShape(v.when)) return false; }
    else if (k === 'mode') { if (v.mode !== 'or' && v.mode !== 'and') return false; }
    else if (k === 'action') { if (typeof v.action !== 'string') return false; }
    else return false;
    n++;
  }
  return n >= 2 && Object.hasOwn(v, 'when') && Object.hasOwn(v, 'action');
}

const ID_CONDITION_RE = /^!?discord:(dm|guild|channel|forum):(.*)$/s;

/** Why a `when` entry is not a condition, in words that state the rule it breaks. */
function conditionProblem(w: string): string {
  const id = ID_CONDITION_RE.exec(w);
  if (id) return `condition "${w}" has an invalid id "${id[2]}": a Discord id is 1 to 20 decimal digits with no leading zero (discord:${id[1]}:<id>)`;
  return `unknown condition "${w}": expected discord:nsfw, discord:dm, discord:dm:<id>, discord:guild:<id>, discord:channel:<id>, discord:forum:<id>, internal or tui (optionally with a leading "!"; an id is 1 to 20 decimal digits with no leading zero)`;
}

export interface ConditionsResult {
  conditions: ConditionsPolicy | null;
  status: FileStatus;
  errors: Located[];
  warnings: Located[];
}

// The last few texts' results: one `warden apply` asks about the same two texts six times
// (the file alone, the root before and after, at proposal and again under the lock), and the
// seed's 468 rules cost ~10 ms a parse warm and ~40 ms cold.
const recentResults: { text: string; file: string; result: ConditionsResult }[] = [];

/**
 * Validate conditions.toml text. Pure and total: never throws, returns located errors.
 * A missing, blank or invalid file yields `conditions: null` (deny-all in its scope).
 * A repeated text reuses the last result (its arrays copied).
 */
export function parseConditions(text: string | null, file = CONDITIONS_TOML): ConditionsResult {
  if (text === null) return parseConditionsOnce(text, file);
  let hit = recentResults.find((r) => r.text === text && r.file === file);
  if (!hit) {
    const result = parseConditionsOnce(text, file);
    deepFreeze(result.conditions); // shared with every later caller of this text (recent.ts)
    hit = { text, file, result };
    recentResults.unshift(hit);
    if (recentResults.length > 4) recentResults.pop();
  }
  const r = hit.result;
  return { ...r, errors: [...r.errors], warnings: [...r.warnings], conditions: r.conditions && { ...r.conditions, rules: [...r.conditions.rules] } };
}

function parseConditionsOnce(text: string | null, file: string): ConditionsResult {
  if (text === null) {
    return { conditions: null, status: 'missing', warnings: [], errors: [{ file, message: 'missing: conditions.toml grants nothing, so every /memories/ and /workspace/ path is denied and no block loads' }] };
  }
  if (isBlankToml(text)) {
    return { conditions: null, status: 'empty', warnings: [], errors: [{ file, line: 1, column: 1, message: 'empty (only whitespace or comments): an empty manifest denies everything, so every /memories/ and /workspace/ path is denied and no block loads' }] };
  }
  const parsed = parseTomlShared(text, file); // read only
  if (!parsed.ok) return { conditions: null, status: 'invalid', warnings: [], errors: [parsed.error] };
  const errors: Located[] = [];
  const warnings: Located[] = [];
  const rules: Rule[] = [];
  // zod only where it has something to say: a plainly valid part skips it (same answer).
  if (!plainSections(parsed.value)) {
    const top = validateToml(sectionsSchema, parsed.value, text, file);
    if (!top.ok) errors.push(...ensureLocated(top.errors));
  }
  for (const section of ['blocks', 'memories', 'workspace'] as const) {
    const table = parsed.value[section];
    if (table === null || typeof table !== 'object' || Array.isArray(table)) continue; // reported above
    const legalActions = SECTION_ACTIONS[section] as readonly string[];
    // Per rule, only what a valid rule needs (a cold parse runs this loop once per
    // rule in the interpreter, so each array, closure and spread shows): the key path is
    // built where an error or a location asks for it.
    for (const key of Object.keys(table)) {
      const raw = (table as Record<string, unknown>)[key];
      if (section === 'blocks') {
        if (!BLOCK_NAME_RE.test(key)) errors.push(errAt(file, text, [section, key], `block name "${key}" must be a plain file stem (letters, digits, ".", "_", "-"; not starting with "." or "-")`));
      } else if (!isCanonicalRelative(key)) {
        errors.push(errAt(file, text, [section, key], `path key "${key}" must start with "/" and have no empty, "." or ".." segment (it is relative to /${section}/)`));
      }
      const plain = plainRule(raw);
      const v = plain ? null : validateToml(ruleSchema, raw, text, file, [section, key]);
      if (v && !v.ok) errors.push(...ensureLocated(v.errors));
      // Whatever the structure, check every part that can be checked.
      const r = (raw !== null && typeof raw === 'object' && !Array.isArray(raw) ? raw : {}) as Record<string, unknown>;
      const action = r.action;
      if (typeof action === 'string' && !legalActions.includes(action)) {
        const legal = SECTION_ACTIONS[section].map((a) => `"${a}"`).join(' or ');
        errors.push(errAt(file, text, [section, key, 'action'], `action "${action}" is not allowed in [${section}]: use ${legal}`));
      }
      const when = r.when;
      // An empty `when` would hold vacuously under mode "and": refuse it rather than guess.
      if (Array.isArray(when) && when.length === 0) errors.push(errAt(file, text, [section, key, 'when'], 'must be a condition string or a non-empty array of condition strings'));
      const conditions: Condition[] = [];
      let whenCount = 0;
      let tuiHolds = false;
      // `when` as one string or the strings of an array (other entries are reported above).
      const list: readonly unknown[] | null = Array.isArray(when) ? when : null;
      const n = list ? list.length : typeof when === 'string' ? 1 : 0;
      for (let i = 0; i < n; i++) {
        const w = list ? list[i] : when;
        if (typeof w !== 'string') continue;
        whenCount++;
        const c = parseCondition(w);
        if (c) { conditions.push(c); if (c.fact === 'tui' && !c.negated) tuiHolds = true; }
        else errors.push(errAt(file, text, [section, key, 'when'], conditionProblem(w), w));
      }
      if (v && !v.ok) continue;
      const value = plain ? (raw as { mode?: 'or' | 'and'; action: string }) : (v as { value: { mode?: 'or' | 'and'; action: string } }).value;
      const mode = value.mode ?? 'or';
      if (conditions.length === whenCount) {
        if (mode === 'and' && conditions.some((a) => conditions.some((b) => a.fact === b.fact && a.negated !== b.negated))) {
          warnings.push(errAt(file, text, [section, key, 'when'], 'mode = "and" with both a condition and its negation: this rule never holds'));
        }
        if (tuiHolds) {
          warnings.push(errAt(file, text, [section, key, 'when'], '"tui" never holds in this runtime (it has no TUI sessions)'));
        }
      }
      // Where the rule is: found when first asked (explain, an error about it), not per parse.
      const rule = { section, key, conditions, mode, action: value.action as Action } as Rule;
      rules.push(lazyProperty(rule, 'source', () => ({ file, ...(locateKey(text, [section, key]) ?? {}) })));
    }
  }
  if (errors.length) return { conditions: null, status: 'invalid', errors, warnings };
  return { conditions: { rules }, status: 'ok', errors, warnings };
}

/**
 * The facts of a session context (docs/CONTRACT.md §Conditions). `tui` is never a fact in this runtime, and a
 * context the library does not know (tui, a future kind, a malformed object) has none.
 */
export function contextFacts(ctx: SessionContext): Set<string> {
  const k = checkContext(ctx);
  if (!k.ok) return new Set();
  const c = k.ctx;
  switch (c.kind) {
    case 'dm':
      return new Set(['discord:dm', `discord:dm:${c.channel}`]);
    case 'guild': {
      const facts = new Set([`discord:guild:${c.guild}`, `discord:channel:${c.channel}`]);
      if (c.nsfw) facts.add('discord:nsfw');
      if (c.forum !== undefined) facts.add(`discord:forum:${c.forum}`);
      return facts;
    }
    case 'internal':
      return new Set(['internal']);
  }
}

/** `x` holds when fact x is present; `!x` when it is absent. */
export function conditionHolds(c: Condition, facts: ReadonlySet<string>): boolean {
  return facts.has(c.fact) !== c.negated;
}

/** mode "or": any condition holds; mode "and": every condition holds. (`when` is never empty.) */
export function ruleHolds(rule: Pick<Rule, 'conditions' | 'mode'>, facts: ReadonlySet<string>): boolean {
  if (rule.conditions.length === 0) return false; // fail closed; the loader never produces this
  return rule.mode === 'and'
    ? rule.conditions.every((c) => conditionHolds(c, facts))
    : rule.conditions.some((c) => conditionHolds(c, facts));
}

export type PathStep = 0 | 1 | 2 | 3 | 4;

export interface PathDecision {
  decision: 'allow' | 'deny';
  /** 0: conditions.toml unusable (deny-all) or the path is invalid; 1–4: the step of docs/CONTRACT.md §Conditions that decided. */
  step: PathStep;
  rule: Rule | null;
  /** Every rule whose key matches the path, in file order. */
  matched: Rule[];
  reason: string;
}

function mostSpecific(rules: Rule[]): Rule | null {
  let best: Rule | null = null;
  for (const r of rules) if (!best || keySpecificity(r.key) > keySpecificity(best.key)) best = r;
  return best;
}

/**
 * The four-step path evaluation of docs/CONTRACT.md §Conditions, in the seed's order. Pure.
 * `conditions === null` (missing/empty/invalid file) denies everything.
 */
export function evaluatePath(conditions: ConditionsPolicy | null, target: string, facts: ReadonlySet<string>): PathDecision {
  const split = splitTarget(target);
  if (!split) return { decision: 'deny', step: 0, rule: null, matched: [], reason: 'not a canonical path under /memories/ or /workspace/' };
  if (!conditions) return { decision: 'deny', step: 0, rule: null, matched: [], reason: 'conditions.toml is missing, empty or invalid: it grants nothing' };
  const matched = rulesMatching(conditions.rules, split.section, split.rel);
  const holding = matched.filter((r) => ruleHolds(r, facts));
  const deny = mostSpecific(holding.filter((r) => r.action === 'deny'));
  if (deny) return { decision: 'deny', step: 1, rule: deny, matched, reason: 'a deny rule matches the path and the context' };
  const allow = mostSpecific(holding.filter((r) => r.action === 'allow'));
  if (allow) return { decision: 'allow', step: 2, rule: allow, matched, reason: 'an allow rule matches the path and the context' };
  if (matched.length > 0) return { decision: 'deny', step: 3, rule: mostSpecific(matched), matched, reason: 'rules match the path, but none of their conditions hold in this context' };
  return { decision: 'allow', step: 4, rule: null, matched, reason: 'no rule matches the path (baseline: allowed)' };
}

/** Names of the blocks whose `load` rule holds in the context, in file order. */
export function matchingBlocks(conditions: ConditionsPolicy | null, facts: ReadonlySet<string>): Rule[] {
  if (!conditions) return [];
  return conditions.rules.filter((r) => r.section === 'blocks' && r.action === 'load' && ruleHolds(r, facts));
}

/** How a rule reads in a file, for messages: memories."/private/" or blocks.nsfw */
export function ruleLabel(r: Pick<Rule, 'section' | 'key'>): string {
  return r.section === 'blocks' && BLOCK_NAME_RE.test(r.key) ? `blocks.${r.key}` : `${r.section}.${JSON.stringify(r.key)}`;
}
