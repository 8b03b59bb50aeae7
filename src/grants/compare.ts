/**
 * A candidate compared with the approved version key by key, said in the owner's words
 * (docs/PROFILES.md, "Grants"). Pure: plain data in, a list of changes out.
 *
 * What it promises:
 * - equal meaning is no change: objects are compared as sets of keys (their order counts
 *   only under a rule marked `ordered`), so a reformatting or a reorder of keys yields no
 *   change at all, and is said as "no change in meaning";
 * - a grant is never hidden: every key that changed is reported; a key that is (or lies
 *   below) a grant key of the profile is a grant (`widened`/`narrowed` when the rule says
 *   which way, `changed`/`added`/`removed` when it cannot), and a new subtree is opened
 *   wherever a grant or credential key could lie inside it;
 * - a credential value appears only as its fingerprint (credentials/rules.ts).
 */
import { escapeText } from '../common/escape.js';
import { fingerprint } from '../credentials/rules.js';
import { BODY_KEY } from '../formats/frontmatter.js';
import { atOrBelow, keyWords, matchKey, reachesBelow, specificity, type KeyPath, type KeyPattern } from '../profiles/keys.js';
import type { Rule } from '../profiles/schema.js';
import { canonical, isObject, missingFrom, sameValue } from './canonical.js';
import type { ChangeKind, Comparison, GrantChange } from './types.js';
import { bare, linesChanged, runsSuffix, shown } from './words.js';

/** What the comparison needs from a profile about one file (profiles/paths.ts factsFor gives it). */
export interface CompareFacts {
  rules: readonly { rule: Rule; key: KeyPattern }[];
  credentials: readonly { group: string; keys: readonly KeyPattern[] }[];
}

export const NO_FACTS: CompareFacts = { rules: [], credentials: [] };

/** The fingerprint of any value: a string's own, anything else's canonical text's. */
export const fingerprintOf = (v: unknown): string => fingerprint(typeof v === 'string' ? v : canonical(v));

export function compareValues(path: string, before: unknown, after: unknown, facts: CompareFacts, texts?: { before: string; after: string }): Comparison {
  const changes: GrantChange[] = [];
  new Walker(path, facts, changes).walk([], before, after, undefined);
  const sameMeaning = changes.length === 0;
  const reformatted = sameMeaning && texts !== undefined && texts.before !== texts.after;
  const widens = changes.some((c) => c.grant && (c.change === 'widened' || c.change === 'changed' || c.change === 'added' || c.change === 'removed'));
  return { path, changes, sameMeaning, reformatted, widens, summary: summarize(changes, reformatted) };
}

function summarize(changes: readonly GrantChange[], reformatted: boolean): string {
  if (changes.length === 0) return reformatted ? 'no change in meaning (reformatted)' : 'no change';
  const n = (kind: ChangeKind) => changes.filter((c) => c.grant && c.change === kind).length;
  const plural = (k: number, one: string, many = `${one}s`) => `${k} ${k === 1 ? one : many}`;
  const parts: string[] = [];
  const widened = n('widened');
  const unknown = n('changed') + n('added') + n('removed');
  const narrowed = n('narrowed');
  const creds = changes.filter((c) => !c.grant && c.credential !== undefined).length;
  const other = changes.filter((c) => !c.grant && c.credential === undefined).length;
  if (widened) parts.push(`${plural(widened, 'grant')} widened`);
  if (unknown) parts.push(`${plural(unknown, 'grant')} changed`);
  if (narrowed) parts.push(`${plural(narrowed, 'grant')} narrowed`);
  if (creds) parts.push(`${plural(creds, 'credential')} changed`);
  if (other) parts.push(plural(other, 'other change'));
  return parts.join(', ');
}

type Inherited = { rule: Rule } | undefined;

class Walker {
  /** Each container's canonical text, for this comparison only. */
  private readonly memo = new WeakMap<object, string>();

  constructor(private readonly file: string, private readonly facts: CompareFacts, private readonly out: GrantChange[]) {}

  private emit(keyPath: KeyPath, change: ChangeKind, grant: boolean, words: string, values: { old?: unknown; new?: unknown }, credential?: string): void {
    const c: GrantChange = { path: this.file, key: keyWords(keyPath) /* raw: JSON carries it safely */, keyPath: [...keyPath], change, grant, words };
    if (credential !== undefined) c.credential = credential;
    if (values.old !== undefined) c.old = values.old;
    if (values.new !== undefined) c.new = values.new;
    this.out.push(c);
  }

  /** The most specific rule that names exactly this key (the first of equals, in the profile's order). */
  private ruleAt(path: KeyPath): Rule | undefined {
    let best: { rule: Rule; s: number } | undefined;
    for (const { rule, key } of this.facts.rules) {
      if (!matchKey(key, path)) continue;
      const s = specificity(key);
      if (!best || s > best.s) best = { rule, s };
    }
    return best?.rule;
  }

  private credentialAt(path: KeyPath): string | undefined {
    for (const c of this.facts.credentials) if (c.keys.some((k) => atOrBelow(k, path))) return c.group;
    return undefined;
  }

  /** Is there a grant or credential key at or below this path (so a new subtree must be opened)? */
  private mattersBelow(path: KeyPath): boolean {
    return this.facts.rules.some(({ key }) => reachesBelow(key, path) || matchKey(key, path))
      || this.facts.credentials.some((c) => c.keys.some((k) => reachesBelow(k, path) || matchKey(k, path)));
  }

  /** The value at `path` with every credential inside it replaced by its fingerprint (a whole new MCP server with its key, say). */
  private r(path: KeyPath, v: unknown): unknown {
    if (v === undefined || !this.facts.credentials.length) return v;
    const group = this.credentialAt(path);
    if (group !== undefined) return `fingerprint:${fingerprintOf(v)}`;
    if (!this.mattersBelowCredential(path)) return v;
    if (Array.isArray(v)) return v.map((e, i) => this.r([...path, i], e));
    if (isObject(v)) {
      const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
      for (const k of Object.keys(v)) out[k] = this.r([...path, k], v[k]);
      return out;
    }
    return v;
  }

  /** A table (or none, on one side) where a credential pattern ending in `**` reaches: opened key by key. */
  private opensCredential(path: KeyPath, a: unknown, b: unknown): boolean {
    if (!(isObject(a) || a === undefined) || !(isObject(b) || b === undefined) || (a === undefined && b === undefined)) return false;
    return this.facts.credentials.some((c) => c.keys.some((k) => k[k.length - 1] === '**' && atOrBelow(k, path)));
  }

  private mattersBelowCredential(path: KeyPath): boolean {
    return this.facts.credentials.some((c) => c.keys.some((k) => reachesBelow(k, path)));
  }

  private orderedAt(path: KeyPath): boolean {
    return this.facts.rules.some(({ rule, key }) => rule.ordered === true && matchKey(key, path));
  }

  walk(path: KeyPath, a: unknown, b: unknown, inherited: Inherited): void {
    const group = this.credentialAt(path);
    const here = this.ruleAt(path);
    // A secret under a grant key (an MCP server's env) is still a grant: its value may run code.
    if (group !== undefined) {
      // `**` is every key (docs/PROFILES.md, "Keys"): its tables are opened, each value fingerprinted on its own.
      if (this.opensCredential(path, a, b)) {
        const next: Inherited = here ? { rule: here } : inherited;
        const keys = new Set([...(isObject(a) ? Object.keys(a) : []), ...(isObject(b) ? Object.keys(b) : [])]);
        const at = (v: unknown, k: string) => (isObject(v) && Object.hasOwn(v, k) ? v[k] : undefined);
        for (const k of keys) this.walk([...path, k], at(a, k), at(b, k), next);
        return;
      }
      this.credential(path, a, b, group, here !== undefined || inherited !== undefined);
      return;
    }
    if (sameValue(a, b)) {
      if (this.orderedAt(path) && isObject(a) && isObject(b)) this.keyOrder(path, a, b, here ?? inherited?.rule);
      else this.below(path, a, b, here ? { rule: here } : inherited);
      return;
    }
    if (here) { this.ruled(path, a, b, here); return; }
    if (inherited) { this.inheritedChange(path, a, b, inherited.rule); return; }
    this.plain(path, a, b);
  }

  /** Equal values: only an ordered object's key order, somewhere below, can still differ. */
  private below(path: KeyPath, a: unknown, b: unknown, inherited: Inherited): void {
    if (!isObject(a) || !isObject(b) || !this.facts.rules.some(({ rule, key }) => rule.ordered === true && reachesBelow(key, path))) return;
    for (const k of Object.keys(a)) this.walk([...path, k], a[k], b[k], inherited);
  }

  private keyOrder(path: KeyPath, a: Record<string, unknown>, b: Record<string, unknown>, rule: Rule | undefined): void {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    if (ka.join('\u0000') !== kb.join('\u0000')) {
      this.emit(path, 'changed', rule !== undefined, `${kw(path)}: the order of its entries changed (${shown(ka)} → ${shown(kb)}); here the order decides which entry applies`, { old: ka, new: kb });
    }
    for (const k of ka) this.walk([...path, k], a[k], b[k], rule ? { rule } : undefined);
  }

  private credential(path: KeyPath, a: unknown, b: unknown, group: string, grant: boolean): void {
    if (sameValue(a, b)) return;
    const key = kw(path) || '(the whole file)';
    const fa = a === undefined ? undefined : fingerprintOf(a);
    const fb = b === undefined ? undefined : fingerprintOf(b);
    if (fa === undefined) this.emit(path, 'added', grant, `${key} + credential (fingerprint ${fb})`, { new: fb }, group);
    else if (fb === undefined) this.emit(path, 'removed', grant, `${key} - credential (fingerprint ${fa})`, { old: fa }, group);
    else this.emit(path, 'changed', grant, `${key}: credential ${fa} → ${fb} (fingerprints)`, { old: fa, new: fb }, group);
  }

  /**
   * A key that appears (or goes) holding an empty list or table: nothing inside it to
   * report, yet the document changed. Said as such, so no difference is ever silent.
   */
  private emptyAppears(path: KeyPath, a: unknown, b: unknown, grant: boolean): boolean {
    const empty = isEmpty;
    if (a === undefined && empty(b)) { this.emit(path, 'added', grant, `${kw(path)} = ${shown(b)} (new key)`, { new: b }); return true; }
    if (b === undefined && empty(a)) { this.emit(path, 'removed', grant, `${kw(path)} removed (was ${shown(a)})`, { old: a }); return true; }
    return false;
  }

  /** A value changed at a key a rule names. */
  private ruled(path: KeyPath, a: unknown, b: unknown, rule: Rule): void {
    if (rule.widens === 'add' && rule.absent === 'all' && (a === undefined || b === undefined)) {
      // No list at all means every one (an agent without `tools` has them all).
      const ra = this.r(path, asList(a, rule) ?? a);
      const rb = this.r(path, asList(b, rule) ?? b);
      const side = (v: unknown, raw: unknown) => (raw === undefined ? '(not set: all)' : shown(Array.isArray(v) ? [...v].sort() : v));
      this.emit(path, a === undefined ? 'narrowed' : 'widened', true, `${kw(path)}: ${side(ra, a)} → ${side(rb, b)}`, values(a === undefined ? undefined : ra, b === undefined ? undefined : rb));
      return;
    }
    // An allow or deny list that is empty grants and refuses nothing, as when it is absent.
    if ((rule.widens === 'add' || rule.widens === 'remove') && (a === undefined || b === undefined) && isEmpty(a ?? b)) return;
    if (this.emptyAppears(path, a, b, true)) return;
    switch (rule.widens) {
      case 'enum': return this.enumChange(path, a, b, rule);
      case 'true':
      case 'false': return this.boolChange(path, a, b, rule);
      case 'add':
      case 'remove': return this.collection(path, a, b, rule, rule.widens === 'add' ? 'widened' : 'narrowed', rule.widens === 'add' ? 'narrowed' : 'widened');
      case 'any': return this.collection(path, a, b, rule, 'added', 'removed');
    }
  }

  /** Below a rule's key: an enum's order still applies to every value; anything else is a grant of unknown direction. */
  private inheritedChange(path: KeyPath, a: unknown, b: unknown, rule: Rule): void {
    if (this.emptyAppears(path, a, b, true)) return;
    if (rule.widens === 'enum') return this.enumChange(path, a, b, rule);
    return this.collection(path, a, b, rule, 'added', 'removed');
  }

  private enumChange(path: KeyPath, a: unknown, b: unknown, rule: Rule): void {
    if ((isObject(a) || a === undefined) && (isObject(b) || b === undefined)) return this.objectDiff(path, (a ?? {}) as Record<string, unknown>, (b ?? {}) as Record<string, unknown>, { rule }, 'added', 'removed', true);
    if (isContainer(a) || isContainer(b)) { this.emit(path, 'changed', true, changedWords(kw(path), this.r(path, a), this.r(path, b)), { old: this.r(path, a), new: this.r(path, b) }); return; }
    const order = rule.order ?? [];
    const va = a === undefined ? rule.default : a;
    const vb = b === undefined ? rule.default : b;
    const ia = order.findIndex((o) => o === va);
    const ib = order.findIndex((o) => o === vb);
    const key = kw(path);
    const side = (raw: unknown, v: unknown) => (raw === undefined && v !== undefined ? `(not set: ${bare(v)})` : bare(raw));
    const words = `${key}: ${side(a, va)} → ${side(b, vb)}`;
    if (ia >= 0 && ib >= 0) {
      if (ia === ib) return; // e.g. the default written out: the same setting
      this.emit(path, ib > ia ? 'widened' : 'narrowed', true, words, values(this.r(path, a), this.r(path, b)));
      return;
    }
    this.emit(path, a === undefined ? 'added' : b === undefined ? 'removed' : 'changed', true, `${words}${ib < 0 && vb !== undefined ? ' (a value this profile does not rank)' : ''}`, values(this.r(path, a), this.r(path, b)));
  }

  private boolChange(path: KeyPath, a: unknown, b: unknown, rule: Rule): void {
    const target = rule.widens === 'true';
    const va = a === undefined ? rule.default : a;
    const vb = b === undefined ? rule.default : b;
    const key = kw(path);
    const words = `${key}: ${a === undefined && va !== undefined ? `(not set: ${bare(va)})` : bare(this.r(path, a))} → ${b === undefined && vb !== undefined ? `(not set: ${bare(vb)})` : bare(this.r(path, b))}`;
    if (typeof va === 'boolean' && typeof vb === 'boolean') {
      if (va === vb) return;
      this.emit(path, vb === target ? 'widened' : 'narrowed', true, words, values(this.r(path, a), this.r(path, b)));
      return;
    }
    this.emit(path, a === undefined ? 'added' : b === undefined ? 'removed' : 'changed', true, words, values(this.r(path, a), this.r(path, b)));
  }

  /**
   * A list or table under a rule: an entry added is `onAdd`, one removed `onRemove`; an
   * entry of a table that changed is walked below with the rule inherited.
   */
  private collection(path: KeyPath, a: unknown, b: unknown, rule: Rule, onAdd: ChangeKind, onRemove: ChangeKind): void {
    const la = asList(a, rule);
    const lb = asList(b, rule);
    if (la && lb) return this.listDiff(path, la, lb, rule, onAdd, onRemove, true);
    if ((isObject(a) || a === undefined) && (isObject(b) || b === undefined) && (a !== undefined || b !== undefined)) {
      return this.objectDiff(path, a ?? {}, b ?? {}, { rule }, onAdd, onRemove, true);
    }
    const key = kw(path);
    const ra = this.r(path, a);
    const rb = this.r(path, b);
    if (a === undefined) this.emit(path, onAdd === 'widened' ? 'widened' : 'added', true, `${key} = ${shown(rb)}${runsSuffix(rb)}`, { new: rb });
    else if (b === undefined) this.emit(path, onRemove === 'widened' ? 'widened' : 'removed', true, `${key} removed (was ${shown(ra)})`, { old: ra });
    else this.emit(path, 'changed', true, changedWords(key, ra, rb), { old: ra, new: rb });
  }

  private listDiff(path: KeyPath, a: readonly unknown[], b: readonly unknown[], rule: Rule | undefined, onAdd: ChangeKind, onRemove: ChangeKind, grant: boolean): void {
    const key = kw(path) || '(the file)';
    const gone = missingFrom(a, b, this.memo).map((v) => this.r([...path, 0], v));
    const come = missingFrom(b, a, this.memo).map((v) => this.r([...path, 0], v));
    // The statements of a whole file (Codex's rules) read best as they are written.
    const entry = (v: unknown) => (path.length === 0 && typeof v === 'string' ? escapeText(v.length > 160 ? `${v.slice(0, 159)}…` : v) : shown(v));
    for (const v of come) this.emit(path, onAdd, grant, `${key} + ${entry(v)}${runsSuffix(v)}`, { new: v });
    for (const v of gone) this.emit(path, onRemove, grant, `${key} - ${entry(v)}`, { old: v });
    if (gone.length === 0 && come.length === 0 && canonical(a, this.memo) !== canonical(b, this.memo) && rule?.set !== true) {
      this.emit(path, 'changed', grant, `${key}: the same entries in another order`, { old: this.r(path, a), new: this.r(path, b) });
    }
  }

  private objectDiff(path: KeyPath, a: Record<string, unknown>, b: Record<string, unknown>, inherited: Inherited, onAdd: ChangeKind, onRemove: ChangeKind, grant: boolean): void {
    const key = kw(path);
    for (const k of Object.keys(b)) {
      const child = [...path, k];
      if (Object.hasOwn(a, k)) { this.walk(child, a[k], b[k], inherited); continue; }
      if (this.credentialAt(child) !== undefined || this.ruleAt(child) || (isContainer(b[k]) && this.mattersBelow(child) && inherited === undefined)) { this.walk(child, undefined, b[k], inherited); continue; }
      if (inherited?.rule.widens === 'enum' && !isContainer(b[k])) { this.walk(child, undefined, b[k], inherited); continue; }
      const v = this.r(child, b[k]);
      // A widening or narrowing names the entry (`mcpServers + "x" (runs: …)`); a change of unknown direction shows its value.
      this.emit(child, onAdd, grant, key && onAdd !== 'added' ? `${key} + ${shown(k)}${runsSuffix(v)}` : `${kw(child)} = ${shown(v)}${runsSuffix(v)} (new key)`, { new: v });
    }
    for (const k of Object.keys(a)) {
      if (Object.hasOwn(b, k)) continue;
      const child = [...path, k];
      if (this.credentialAt(child) !== undefined || this.ruleAt(child) || (isContainer(a[k]) && this.mattersBelow(child) && inherited === undefined)) { this.walk(child, a[k], undefined, inherited); continue; }
      if (inherited?.rule.widens === 'enum' && !isContainer(a[k])) { this.walk(child, a[k], undefined, inherited); continue; }
      const v = this.r(child, a[k]);
      this.emit(child, onRemove, grant, key && onRemove !== 'removed' ? `${key} - ${shown(k)}` : `${kw(child)} removed (was ${shown(v)})`, { old: v });
    }
    if (this.orderedAt(path)) {
      const ka = Object.keys(a).filter((k) => Object.hasOwn(b, k));
      const kb = Object.keys(b).filter((k) => Object.hasOwn(a, k));
      if (ka.join('\u0000') !== kb.join('\u0000')) this.emit(path, 'changed', grant, `${key}: the order of its entries changed; here the order decides which entry applies`, { old: ka, new: kb });
    }
  }

  /** No rule here or above: a plain change, opened wherever a grant or credential could lie below. */
  private plain(path: KeyPath, a: unknown, b: unknown): void {
    const key = kw(path);
    if (isObject(a) && isObject(b)) return this.objectDiff(path, a, b, undefined, 'added', 'removed', false);
    if ((isObject(a) || isObject(b)) && this.mattersBelow(path)) {
      if (this.emptyAppears(path, a, b, false)) return;
      // A table in place of something else (or of nothing): what it held or holds, key by
      // key, so a grant inside it is named as one; the value it replaced, or that replaced it, beside.
      if (a !== undefined && !isObject(a)) this.emit(path, 'removed', false, `${key} was ${shown(this.r(path, a))} (now a table)`, { old: this.r(path, a) });
      this.objectDiff(path, isObject(a) ? a : {}, isObject(b) ? b : {}, undefined, 'added', 'removed', false);
      if (b !== undefined && !isObject(b)) this.emit(path, 'added', false, `${key} is now ${shown(this.r(path, b))} (was a table)`, { new: this.r(path, b) });
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      // A grant key could lie inside an entry: every entry changed counts as a grant (fail closed).
      const inside = this.mattersBelow(path);
      return this.listDiff(path, a, b, undefined, 'added', 'removed', inside);
    }
    if (typeof a === 'string' && typeof b === 'string' && (path.length === 0 || path[path.length - 1] === BODY_KEY) && (a.includes('\n') || b.includes('\n'))) {
      this.emit(path, 'changed', false, `${key || 'the text'} changed (${linesChanged(a, b)})`, {});
      return;
    }
    const ra = this.r(path, a);
    const rb = this.r(path, b);
    if (a === undefined) this.emit(path, 'added', false, `${key} = ${shown(rb)}${runsSuffix(rb)} (new key)`, { new: rb });
    else if (b === undefined) this.emit(path, 'removed', false, `${key} removed (was ${shown(ra)})`, { old: ra });
    else this.emit(path, 'changed', false, changedWords(key, ra, rb), { old: ra, new: rb });
  }
}

/** A key in words, escaped (a key is data from the file: it may hold a newline or a bidi override). */
const kw = (path: KeyPath): string => escapeText(keyWords(path));

const isContainer = (v: unknown): boolean => isObject(v) || Array.isArray(v);
const isEmpty = (v: unknown): boolean => (Array.isArray(v) && v.length === 0) || (isObject(v) && Object.keys(v).length === 0);

const values = (a: unknown, b: unknown): { old?: unknown; new?: unknown } => ({ ...(a !== undefined ? { old: a } : {}), ...(b !== undefined ? { new: b } : {}) });

function changedWords(key: string, a: unknown, b: unknown): string {
  return `${key || '(the file)'}: ${bare(a)} → ${bare(b)}${runsSuffix(b)}`;
}

/** A rule's list: an array, or a string split by the rule's separator; undefined (absent) is an empty list when the other side is a list. */
function asList(v: unknown, rule: Rule): readonly unknown[] | undefined {
  if (Array.isArray(v)) return v;
  if (typeof v === 'string' && rule.split !== undefined) return v.split(rule.split).map((s) => s.trim()).filter((s) => s !== '');
  if (v === undefined) return [];
  return undefined;
}
