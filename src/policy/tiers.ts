import { WARDEN_TOML } from '../config/warden-config.js';
import { commandArgv } from './commands.js';
import { checkContext, describeValue } from './context.js';
import { GUESTS_TOML } from './manifests.js';
import { firstFolderContaining } from './decide.js';
import { keyMatches, splitTarget } from './paths.js';
import type { Org, PolicySet, SessionContext, SourceRef, Tier } from './types.js';

export type ResolvedBy = 'internal-session' | 'owner' | 'membership' | 'channel-binding' | 'guest-channel' | 'none' | 'unknown-context';

export interface Resolution {
  tier: Tier;
  org: string | null;
  resolvedBy: ResolvedBy;
  /** The step of the fixed order of docs/CONTRACT.md §Tiers that decided (1–4), or null for internal sessions and "none". */
  step: 1 | 2 | 3 | 4 | null;
  reason: string;
  source: SourceRef | null;
  /** Things a person should know about how this was decided (ambiguities met on the way). */
  notes: string[];
}

/**
 * The channel ids a session sits in, most specific first: the channel itself, then the
 * forum it is a thread of. A thread of a bound (or invited) forum is in that forum.
 */
export function sessionChannels(context: SessionContext): string[] {
  const k = checkContext(context);
  if (!k.ok) return [];
  const ctx = k.ctx;
  if (ctx.kind === 'dm') return [ctx.channel];
  if (ctx.kind === 'guild') return ctx.forum !== undefined && ctx.forum !== ctx.channel ? [ctx.channel, ctx.forum] : [ctx.channel];
  return [];
}

function boundOrg(orgs: readonly Org[], channel: string): Org | undefined {
  // Valid orgs never share a channel (the loader drops both on a conflict), so at most one matches.
  return orgs.find((o) => o.channels.includes(channel));
}

function lineOf(org: Org, key: keyof Org['keyLines']): SourceRef {
  const line = org.keyLines[key];
  return line === undefined ? org.source : { file: org.source.file, line };
}

/**
 * Resolve user U's tier in a context, in the fixed order of docs/CONTRACT.md §Tiers:
 * (1) owner; (2) member of X in a DM or a channel bound to X; (3) channel bound to Y;
 * (4) guest channel; else none. An internal session is the owner's. Pure and deterministic.
 */
export function resolveTier(policy: PolicySet, user: string, context: SessionContext): Resolution {
  const notes: string[] = [];
  // A context the library does not know grants nothing, to anyone (the owner included).
  const k = checkContext(context);
  if (!k.ok) return { tier: 'none', org: null, resolvedBy: 'unknown-context', step: null, reason: `${k.why}: nothing is granted`, source: null, notes };
  if (typeof user !== 'string') return { tier: 'none', org: null, resolvedBy: 'none', step: null, reason: `the user is ${describeValue(user)}, not a string id: nothing is granted`, source: null, notes };
  const ctx = k.ctx;
  if (ctx.kind === 'internal') {
    if (policy.owner !== null && user !== policy.owner) notes.push(`user ${user} is not the owner, but an internal session is always the owner's`);
    return { tier: 'owner', org: null, resolvedBy: 'internal-session', step: null, reason: 'an internal session (heartbeat, cron) is the owner\'s', source: null, notes };
  }
  if (policy.owner !== null && user === policy.owner) {
    return { tier: 'owner', org: null, resolvedBy: 'owner', step: 1, reason: `step 1: ${user} is the owner (owner.discord_id)`, source: policy.ownerSource ?? { file: WARDEN_TOML }, notes };
  }
  const channels = sessionChannels(ctx);
  const mine = policy.orgs.filter((o) => o.members.includes(user));
  if (ctx.kind === 'dm') {
    if (mine.length === 1) {
      const o = mine[0] as Org;
      return { tier: 'member', org: o.name, resolvedBy: 'membership', step: 2, reason: `step 2: ${user} is a member of org "${o.name}" and this is a DM`, source: lineOf(o, 'members'), notes };
    }
    if (mine.length > 1) notes.push(`user ${user} is a member of ${mine.map((o) => `"${o.name}"`).join(' and ')}; in a DM that is ambiguous, so step 2 does not apply`);
  } else {
    for (const ch of channels) {
      const o = mine.find((x) => x.channels.includes(ch));
      if (o) return { tier: 'member', org: o.name, resolvedBy: 'membership', step: 2, reason: `step 2: ${user} is a member of org "${o.name}" and channel ${ch} is bound to it`, source: lineOf(o, 'members'), notes };
    }
  }
  for (const ch of channels) {
    const o = boundOrg(policy.orgs, ch);
    if (o) return { tier: 'member', org: o.name, resolvedBy: 'channel-binding', step: 3, reason: `step 3: channel ${ch} is bound to org "${o.name}"`, source: lineOf(o, 'channels'), notes };
  }
  const g = policy.guests;
  if (g) {
    for (const ch of channels) {
      if (g.channels.includes(ch)) {
        const line = g.keyLines.channels;
        return { tier: 'guest', org: null, resolvedBy: 'guest-channel', step: 4, reason: `step 4: channel ${ch} is listed in ${GUESTS_TOML}`, source: line === undefined ? g.source : { file: g.source.file, line }, notes };
      }
    }
  }
  return { tier: 'none', org: null, resolvedBy: 'none', step: null, reason: 'no step applies: not the owner, no org membership or binding here, not a guest channel', source: null, notes };
}

/** What a tier grants (docs/CONTRACT.md §Tiers). Folders are absolute runtime paths; "/memories/" and "/workspace/" mean everything. */
export interface Access {
  tier: Tier;
  org: string | null;
  folders: string[];
  foldersSource: SourceRef | null;
  /** Permitted command prefixes; ["*"] means any command (the owner's shell). */
  commands: string[];
  shell: boolean;
  skills: boolean;
  subtasks: boolean;
  write: boolean;
  /** Requests per hour, or null when the tier has no cap (owner) or no cap is defined (guest, none). */
  hourlyCap: number | null;
}

const OWNER_FOLDERS: readonly string[] = Object.freeze(['/memories/', '/workspace/']);
const NO_FOLDERS: readonly string[] = Object.freeze([]);

/** The folder list a tier grants, as the policy holds it (not a copy: for lookups only). */
export function tierFolders(policy: PolicySet, r: Pick<Resolution, 'tier' | 'org'>): readonly string[] {
  switch (r.tier) {
    case 'owner': return OWNER_FOLDERS;
    case 'member': return policy.orgs.find((x) => x.name === r.org)?.folders ?? NO_FOLDERS;
    case 'guest': return policy.guests?.folders ?? NO_FOLDERS;
    default: return NO_FOLDERS;
  }
}

/** The first of `folders` that contains the runtime path, or null (the decision index does the looking). */
export function folderContaining(folders: readonly string[], target: string): string | null {
  const t = splitTarget(target);
  if (!t) return null;
  return firstFolderContaining(folders, t.section, t.rel, (x) => { const s = splitTarget(x); return s !== null && s.section === t.section && keyMatches(s.rel, t.rel); });
}

export function accessFor(policy: PolicySet, r: Pick<Resolution, 'tier' | 'org'>): Access {
  const nothing: Access = { tier: r.tier, org: r.org, folders: [], foldersSource: null, commands: [], shell: false, skills: false, subtasks: false, write: false, hourlyCap: null };
  switch (r.tier) {
    case 'owner':
      return { ...nothing, folders: ['/memories/', '/workspace/'], commands: ['*'], shell: true, skills: true, subtasks: true, write: true };
    case 'member': {
      const o = policy.orgs.find((x) => x.name === r.org);
      if (!o) return nothing;
      // Members run only their org's command prefixes: no free shell, and no skills or
      // sub-tasks, since one open indirect path would make the folder limits meaningless.
      return { ...nothing, folders: [...o.folders], foldersSource: lineOf(o, 'folders'), commands: [...o.commands], hourlyCap: o.hourlyCap };
    }
    case 'guest': {
      const g = policy.guests;
      if (!g) return nothing;
      const line = g.keyLines.folders;
      return { ...nothing, folders: [...g.folders], foldersSource: line === undefined ? g.source : { file: g.source.file, line } };
    }
    case 'none':
      return nothing;
  }
}

/** Does the tier grant `target` (read, or write when asked)? Folder entries match like conditions keys. */
export function tierGrantsPath(access: Access, target: string, write: boolean): { granted: boolean; folder: string | null; reason: string } {
  const t = splitTarget(target);
  if (!t) return { granted: false, folder: null, reason: 'not a canonical path under /memories/ or /workspace/' };
  if (write && !access.write) return { granted: false, folder: null, reason: `tier ${access.tier} is read-only: only the owner may write` };
  const f = folderContaining(access.folders, target);
  if (f !== null) return { granted: true, folder: f, reason: access.tier === 'owner' ? 'the owner may read and write everything' : `tier ${access.tier} grants folder ${f}` };
  return { granted: false, folder: null, reason: access.tier === 'none' ? 'tier none grants nothing' : `tier ${access.tier} grants no folder containing this path` };
}

/**
 * Is a command line permitted? Prefixes match on whole words: "git log" permits
 * "git log -3" but not "git logx" nor "git push"; a line with shell syntax is refused
 * (commandArgv gives the reason and the argv to run without a shell).
 */
export function commandPermitted(access: Access, commandLine: string): boolean {
  return commandArgv(access, commandLine).permitted;
}
