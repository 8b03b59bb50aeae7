import type { Located } from '../common/errors.js';
import { locateKey } from '../toml/index.js';
import { parseWardenConfig, WARDEN_TOML } from '../config/warden-config.js';
import { BLOCKS_DIR, blockNameOf, parseBlock } from './blocks.js';
import { CONDITIONS_TOML, parseConditions, ruleLabel } from './conditions.js';
import { errAt } from './locate.js';
import { recentResults } from './recent.js';
import { GUESTS_TOML, ORGS_DIR, parseGuests, parseOrg } from './manifests.js';
import type { BlockFile, FileHealth, FileStatus, Guests, Org, PolicyFileInput, PolicyKind, PolicyLoadResult, PolicySet, SourceRef } from './types.js';

/** Which policy kind a root-relative path is, or null when it is not a policy file. */
export function policyKindOf(relPath: string): PolicyKind | null {
  if (relPath === CONDITIONS_TOML) return 'conditions';
  if (relPath === GUESTS_TOML) return 'guests';
  if (relPath === WARDEN_TOML) return 'warden';
  if (/^orgs\/[^/]+\.toml$/.test(relPath)) return 'org';
  if (/^blocks\/conditional\/[^/]+\.md$/.test(relPath)) return 'block';
  return null;
}

interface Parsed {
  path: string;
  kind: PolicyKind;
  status: FileStatus;
  errors: Located[];
  warnings: Located[];
  text: string | null;
}

/** Owner from warden.toml text: reuse its own schema. Pure. */
type OwnerResult = { owner: string | null; source: SourceRef | null; status: FileStatus; errors: Located[]; warnings: Located[] };
export function parseOwner(text: string | null, file = WARDEN_TOML): OwnerResult {
  return text === null ? parseOwnerOnce(text, file) : recentOwners(text, file);
}
const recentOwners = recentResults(parseOwnerOnce, (r: OwnerResult) => ({ ...r, errors: [...r.errors], warnings: [...r.warnings] }));

function parseOwnerOnce(text: string | null, file: string): OwnerResult {
  if (text === null) return { owner: null, source: null, status: 'missing', errors: [], warnings: [{ file, message: 'missing: no owner is configured, so nobody resolves to the owner tier (internal sessions still do)' }] };
  let r: ReturnType<typeof parseWardenConfig>;
  try { r = parseWardenConfig(text, file); } catch (err) {
    // parseWardenConfig is meant to be total; never let a surprise escape a loader.
    return { owner: null, source: null, status: 'invalid', errors: [{ file, message: `cannot validate: ${String(err)}` }], warnings: [] };
  }
  if (!r.ok) return { owner: null, source: null, status: 'invalid', errors: r.errors, warnings: [] };
  const id = r.config.owner?.discord_id;
  if (!id) return { owner: null, source: null, status: 'ok', errors: [], warnings: [{ file, message: 'no [owner] discord_id: nobody resolves to the owner tier (internal sessions still do)' }] };
  const at = locateKey(text, ['owner', 'discord_id']);
  return { owner: id, source: { file, ...(at ?? {}) }, status: 'ok', errors: [], warnings: [] };
}

/**
 * Build the policy from file texts. Pure and total: never throws, never reads anything.
 * Every file that is missing, blank, unreadable or invalid contributes no grant. Files not
 * listed at all count as missing (conditions, guests, warden.toml) or absent (orgs, blocks).
 */
export function buildPolicy(files: readonly PolicyFileInput[]): PolicyLoadResult {
  const byPath = new Map<string, PolicyFileInput>();
  for (const f of files) byPath.set(f.path, f);
  const warnings: Located[] = [];
  const parsed: Parsed[] = [];

  const unreadable = (f: PolicyFileInput, kind: PolicyKind): Parsed =>
    ({ path: f.path, kind, status: 'unreadable', errors: [{ file: f.path, message: `${f.unreadable}: grants nothing` }], warnings: [], text: null });

  // conditions.toml
  const condIn = byPath.get(CONDITIONS_TOML) ?? { path: CONDITIONS_TOML, text: null };
  const cond = condIn.unreadable ? null : parseConditions(condIn.text, CONDITIONS_TOML);
  parsed.push(cond ? { path: CONDITIONS_TOML, kind: 'conditions', status: cond.status, errors: cond.errors, warnings: cond.warnings, text: condIn.text } : unreadable(condIn, 'conditions'));
  let conditions = cond?.conditions ?? null;

  // guests.toml
  const guestsIn = byPath.get(GUESTS_TOML) ?? { path: GUESTS_TOML, text: null };
  const g = guestsIn.unreadable ? null : parseGuests(guestsIn.text, GUESTS_TOML);
  parsed.push(g ? { path: GUESTS_TOML, kind: 'guests', status: g.status, errors: g.errors, warnings: g.warnings, text: guestsIn.text } : unreadable(guestsIn, 'guests'));
  const guests: Guests | null = g?.guests ?? null;

  // warden.toml (owner)
  const wIn = byPath.get(WARDEN_TOML) ?? { path: WARDEN_TOML, text: null };
  const w = wIn.unreadable ? null : parseOwner(wIn.text, WARDEN_TOML);
  parsed.push(w ? { path: WARDEN_TOML, kind: 'warden', status: w.status, errors: w.errors, warnings: w.warnings, text: wIn.text } : unreadable(wIn, 'warden'));

  // orgs
  const orgEntries: { p: Parsed; org: Org | null }[] = [];
  const blockEntries: { p: Parsed; block: BlockFile | null }[] = [];
  for (const f of [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))) {
    const kind = policyKindOf(f.path);
    if (kind === 'org') {
      if (f.unreadable) { const p = unreadable(f, 'org'); parsed.push(p); orgEntries.push({ p, org: null }); continue; }
      const r = parseOrg(f.text, f.path);
      const p: Parsed = { path: f.path, kind, status: r.status, errors: r.errors, warnings: r.warnings, text: f.text };
      parsed.push(p);
      orgEntries.push({ p, org: r.org });
    } else if (kind === 'block') {
      if (f.unreadable) { const p = unreadable(f, 'block'); parsed.push(p); blockEntries.push({ p, block: null }); continue; }
      const r = parseBlock(f.text, f.path);
      const p: Parsed = { path: f.path, kind, status: r.status, errors: r.errors, warnings: [], text: f.text };
      parsed.push(p);
      blockEntries.push({ p, block: r.block });
    } else if (kind === null && (f.path.startsWith(`${ORGS_DIR}/`) || f.path.startsWith(`${BLOCKS_DIR}/`))) {
      warnings.push({ file: f.path, message: f.path.startsWith(ORGS_DIR) ? 'ignored: org files are orgs/<name>.toml' : 'ignored: block files are blocks/conditional/<name>.md' });
    }
  }

  // Isolation: a channel bound to two orgs is invalid, and both orgs then grant nothing
  // (we cannot tell which binding the owner meant; locking beats opening).
  const boundBy = new Map<string, { p: Parsed; org: Org }[]>();
  for (const e of orgEntries) {
    if (!e.org) continue;
    for (const ch of new Set(e.org.channels)) boundBy.set(ch, [...(boundBy.get(ch) ?? []), { p: e.p, org: e.org }]);
  }
  const conflicted = new Set<string>();
  for (const [ch, owners] of boundBy) {
    if (owners.length < 2) continue;
    for (const o of owners) {
      const others = owners.filter((x) => x !== o).map((x) => `"${x.org.name}"`).join(', ');
      o.p.errors.push(errAt(o.p.path, o.p.text ?? '', ['channels'], `channel ${ch} is also bound to org ${others}: orgs are isolated, so a channel belongs to one org at most (both orgs grant nothing until this is fixed)`, ch));
      o.p.status = 'invalid';
      conflicted.add(o.org.name);
    }
  }
  const orgs = orgEntries.flatMap((e) => (e.org && !conflicted.has(e.org.name) ? [e.org] : [])).sort((a, b) => (a.name < b.name ? -1 : 1));

  // Overlaps that resolution handles deterministically but a person should know about.
  if (guests) {
    for (const ch of guests.channels) {
      const o = boundBy.get(ch)?.[0];
      if (o) warnings.push(errAt(GUESTS_TOML, guestsIn.text ?? '', ['channels'], `channel ${ch} is also bound to org "${o.org.name}": the binding wins, nobody is a guest there`, ch));
    }
  }
  const memberOf = new Map<string, Org[]>();
  for (const o of orgs) for (const m of new Set(o.members)) memberOf.set(m, [...(memberOf.get(m) ?? []), o]);
  for (const [m, os] of memberOf) {
    if (os.length < 2) continue;
    const first = os[0] as Org;
    const src = orgEntries.find((e) => e.org === first)?.p.text ?? '';
    warnings.push(errAt(first.source.file, src, ['members'], `user ${m} is a member of ${os.map((o) => `"${o.name}"`).join(' and ')}: in a DM their org is ambiguous, so a DM resolves to no org for them`, m));
  }

  // Blocks: a rule without a file, or a file without a rule, is an error for `warden check`.
  // Neither disables anything else: such a block simply never loads.
  const blocks = new Map<string, BlockFile>();
  for (const e of blockEntries) if (e.block) blocks.set(e.block.name, e.block);
  const blockFileNames = new Set(blockEntries.map((e) => blockNameOf(e.p.path)));
  const condParsed = parsed[0] as Parsed;
  if (conditions) {
    const ruled = new Set<string>();
    for (const r of conditions.rules) {
      if (r.section !== 'blocks') continue;
      ruled.add(r.key);
      if (!blockFileNames.has(r.key)) {
        condParsed.errors.push({ ...r.source, key: ruleLabel(r), message: `block "${r.key}" has a rule but no file ${BLOCKS_DIR}/${r.key}.md` });
      }
    }
    for (const e of blockEntries) {
      const name = blockNameOf(e.p.path);
      if (!ruled.has(name)) e.p.errors.push({ file: e.p.path, line: 1, column: 1, message: `block file has no rule: add [blocks.${name}] to ${CONDITIONS_TOML} (until then it never loads)` });
    }
  } else {
    conditions = null;
  }

  const errors = parsed.flatMap((p) => p.errors);
  const allWarnings = [...parsed.flatMap((p) => p.warnings), ...warnings];
  const policy: PolicySet = { conditions, blocks, orgs, guests, owner: w?.owner ?? null, ownerSource: w?.source ?? null };
  return { policy, errors, warnings: allWarnings, files: parsed.map((p) => health(p, policy)) };
}

function health(p: Parsed, policy: PolicySet): FileHealth {
  const base = { path: p.path, kind: p.kind, status: p.status, errors: p.errors };
  const unusable = p.status !== 'ok';
  const why = unusable ? p.status : null;
  switch (p.kind) {
    case 'conditions':
      return { ...base, grantsNothing: !policy.conditions, reason: policy.conditions ? null : `${p.status}: every /memories/ and /workspace/ path is denied and no block loads` };
    case 'guests': {
      const gs = policy.guests;
      if (!gs) return { ...base, grantsNothing: true, reason: why };
      const empty = gs.channels.length === 0 ? 'channels = []: nobody is a guest' : gs.folders.length === 0 ? 'folders = []: guests can read no folder' : null;
      return { ...base, grantsNothing: empty !== null, reason: empty };
    }
    case 'org': {
      const org = policy.orgs.find((o) => o.source.file === p.path);
      if (!org) return { ...base, grantsNothing: true, reason: why ?? 'invalid' };
      if (org.folders.length === 0 && org.commands.length === 0) return { ...base, grantsNothing: true, reason: 'folders = [] and commands = []: grants nothing' };
      if (org.folders.length === 0) return { ...base, grantsNothing: false, reason: 'folders = []: grants no folder (commands only)' };
      return { ...base, grantsNothing: false, reason: null };
    }
    case 'block':
      return { ...base, grantsNothing: unusable, reason: unusable ? `${p.status}: never loads` : null };
    case 'warden':
      return { ...base, grantsNothing: policy.owner === null, reason: policy.owner === null ? (unusable ? (p.errors.length && p.status !== 'missing' && p.status !== 'empty' ? `${p.status}: its [owner] is not used until it is fixed` : `${p.status}: no owner`) : 'no owner configured') : null };
  }
}
