/**
 * The decision index: which conditions rules, and which tier folders, match a
 * path — found by looking up the path's own ancestors instead of testing every rule and
 * every folder. A path has a handful of ancestors; a seed-scale policy has 468 rules and
 * 600 folders. Same answers as keyMatches over the whole list, in the same (file) order.
 *
 * The index is built once per rule list or folder list and kept in a WeakMap keyed by that
 * list, so a PolicySet is treated as a value: build a new one (buildPolicy) rather than
 * editing one in place. Pure: no I/O.
 */
import type { PathSection } from './paths.js';
import { splitTarget } from './paths.js';
import type { Rule } from './types.js';

/**
 * The keys that can match a relative path `rel` ("/a/b.md"): a key ending in "/" matches
 * when it is `rel` cut just after one of its "/" (rel starts with it) or `rel` + "/";
 * any other key matches when it equals `rel` without a trailing "/". This is keyMatches
 * read backwards, for any key, canonical or not.
 */
function prefixCandidates(rel: string, visit: (key: string) => void): void {
  for (let i = rel.indexOf('/'); i >= 0; i = rel.indexOf('/', i + 1)) visit(rel.slice(0, i + 1));
  visit(`${rel}/`);
}

const exactOf = (rel: string): string => (rel.length > 1 && rel.endsWith('/') ? rel.slice(0, -1) : rel);

interface KeyIndex {
  /** Key ending in "/" → indices of the entries with that key, ascending. */
  prefix: Map<string, number[]>;
  /** Any other key → indices, ascending. */
  exact: Map<string, number[]>;
}

function addKey(ix: KeyIndex, key: string, i: number): void {
  const m = key.endsWith('/') ? ix.prefix : ix.exact;
  const list = m.get(key);
  if (list) list.push(i); else m.set(key, [i]);
}

/** Indices (ascending) of the entries whose key matches rel. */
function lookup(ix: KeyIndex, rel: string): number[] {
  const out: number[] = [];
  let sorted = true;
  const take = (list: number[] | undefined) => {
    if (!list) return;
    if (out.length && list[0] as number < (out[out.length - 1] as number)) sorted = false;
    for (const i of list) out.push(i);
  };
  prefixCandidates(rel, (k) => take(ix.prefix.get(k)));
  take(ix.exact.get(exactOf(rel)));
  if (!sorted) out.sort((a, b) => a - b);
  return out;
}

// ---------------------------------------------------------------- conditions rules

interface RuleIndex { rules: readonly Rule[]; length: number; bySection: Map<string, KeyIndex> }
const ruleIndexes = new WeakMap<readonly Rule[], RuleIndex>();

function ruleIndex(rules: readonly Rule[]): RuleIndex {
  const hit = ruleIndexes.get(rules);
  if (hit && hit.length === rules.length) return hit;
  const bySection = new Map<string, KeyIndex>();
  rules.forEach((r, i) => {
    let ix = bySection.get(r.section);
    if (!ix) { ix = { prefix: new Map(), exact: new Map() }; bySection.set(r.section, ix); }
    addKey(ix, r.key, i);
  });
  const made = { rules, length: rules.length, bySection };
  ruleIndexes.set(rules, made);
  return made;
}

/** Every rule of `section` whose key matches `rel`, in file order (as a filter with keyMatches would give). */
export function rulesMatching(rules: readonly Rule[], section: PathSection, rel: string): Rule[] {
  const ix = ruleIndex(rules).bySection.get(section);
  if (!ix) return [];
  return lookup(ix, rel).map((i) => rules[i] as Rule);
}

// ---------------------------------------------------------------- tier folders

/** Below this many folders a plain scan is as fast as building an index. */
const SCAN_BELOW = 16;

interface FolderIndex { length: number; bySection: Map<string, KeyIndex> }
const folderIndexes = new WeakMap<readonly string[], FolderIndex>();

function folderIndex(folders: readonly string[]): FolderIndex {
  const hit = folderIndexes.get(folders);
  if (hit && hit.length === folders.length) return hit;
  const bySection = new Map<string, KeyIndex>();
  folders.forEach((f, i) => {
    const s = splitTarget(f);
    if (!s) return; // not a canonical runtime path: it grants nothing
    let ix = bySection.get(s.section);
    if (!ix) { ix = { prefix: new Map(), exact: new Map() }; bySection.set(s.section, ix); }
    addKey(ix, s.rel, i);
  });
  const made = { length: folders.length, bySection };
  folderIndexes.set(folders, made);
  return made;
}

/**
 * The first folder (in list order) that contains the target (section + rel), or null:
 * the same one a scan of the list with keyMatches finds.
 */
export function firstFolderContaining(folders: readonly string[], section: PathSection, rel: string, scan: (f: string) => boolean): string | null {
  if (folders.length < SCAN_BELOW) {
    for (const f of folders) if (scan(f)) return f;
    return null;
  }
  const ix = folderIndex(folders).bySection.get(section);
  if (!ix) return null;
  const hits = lookup(ix, rel);
  return hits.length ? (folders[hits[0] as number] as string) : null;
}
