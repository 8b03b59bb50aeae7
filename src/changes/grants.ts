/**
 * What a sanctioned change grants or takes away, file by file, for the approval prompt and
 * the owner's message (docs/PROFILES.md, "Grants in alerts, diffs and prompts"): each
 * proposed file compared key by key with its approved version under the root's profile.
 */
import { grantLines, grantsAt, type GrantRecord, type RootGrants } from '../grants/index.js';
import { rootProfileFor } from '../profiles/root-profile.js';
import type { RootProfile } from '../profiles/root-rules.js';
import { escapeText } from '../common/escape.js';
import type { ApplyContext, ChangeRequest } from './apply.js';

/** Each changed file's grants (files the profile says nothing about are left out). */
export function changeGrants(ctx: ApplyContext, changes: readonly ChangeRequest[], profile: RootProfile | null = rootProfileFor(ctx.root, ctx.state.index.profile)): Map<string, RootGrants> {
  const out = new Map<string, RootGrants>();
  if (!profile) return out;
  for (const c of changes) {
    if (c.keep || c.content === null) continue;
    const before = ctx.state.bytesOf(ctx.store.fd, c.path);
    if (before && before.equals(c.content)) continue;
    const kind = ctx.state.entry(c.path)?.kind ?? ctx.pset.kindOf(c.path);
    try {
      const g = grantsAt(profile, c.path, before, c.content, { secret: kind === 'credentials' });
      if (g) out.set(c.path, g);
    } catch { /* the grants are words for the owner; the change is validated elsewhere */ }
  }
  return out;
}

/** One file's grants for a prompt: the summary, then a line per change (bounded). */
export function grantBlock(g: RootGrants, indent: string, max = 20): string[] {
  return [`${indent}what it grants or takes away: ${g.summary}`, ...grantLines(g, max).map((l) => `${indent}  ${l}`)];
}

/** Every file's grants as one bounded list, for a reply's JSON. */
export function grantRecords(all: Map<string, RootGrants>): { grants: GrantRecord[]; grants_left_off: number } {
  const grants = [...all.values()].flatMap((g) => g.grants);
  return { grants, grants_left_off: [...all.values()].reduce((n, g) => n + g.left_off, 0) };
}

/** The owner's message: at most `max` lines in all, each naming its file, then "and N more". */
export function grantMessageLines(all: Map<string, RootGrants>, max = 12): string[] {
  const lines: string[] = [];
  let more = 0;
  for (const [path, g] of all) {
    for (const l of grantLines(g, Number.MAX_SAFE_INTEGER)) {
      if (/^and \d+ more$/.test(l)) { more += g.left_off; continue; }
      if (lines.length < max) lines.push(`${escapeText(path)}: ${l}`); else more++;
    }
  }
  if (more) lines.push(`and ${more} more`);
  return lines;
}
