/**
 * A profile in the owner's words (`warden profiles`; docs/PROFILES.md): what it protects,
 * which keys are grants and which way each widens. Pure: data in, lines out.
 */
import type { Rule, ProfileData, Level } from './schema.js';

/** "adding an entry widens", "read-only < workspace-write < danger-full-access", … */
export function ruleWords(r: Rule): string {
  switch (r.widens) {
    case 'add': return `adding an entry widens${r.absent === 'all' ? '; no list at all means all of them' : ''}${r.set ? ' (order of the list: no meaning)' : ''}`;
    case 'remove': return `removing an entry widens${r.set ? ' (order of the list: no meaning)' : ''}`;
    case 'enum': return `${(r.order ?? []).join(' < ')}${r.default !== undefined ? ` (not set: ${String(r.default)})` : ''}`;
    case 'true': return `true widens${r.default !== undefined ? ` (not set: ${String(r.default)})` : ''}`;
    case 'false': return `false widens${r.default !== undefined ? ` (not set: ${String(r.default)})` : ''}`;
    case 'any': return 'any change is a grant (direction unknown)';
  }
}

export interface ProfileSummary {
  name: string;
  runtime: string;
  origin: 'shipped' | 'user';
  description?: string;
  files: Record<Level, number>;
  grantKeys: number;
  credentialGroups: string[];
  runtimeWrites: number;
  validators: string[];
}

export function summarize(p: ProfileData, origin: 'shipped' | 'user'): ProfileSummary {
  const files: Record<Level, number> = { user: 0, project: 0, system: 0, root: 0 };
  for (const f of p.files) files[f.level]++;
  const used = new Set(p.files.map((f) => f.rules).filter((r): r is string => r !== undefined));
  const keys = new Set<string>();
  for (const name of used) for (const r of p.rules[name] ?? []) keys.add(r.key);
  return {
    name: p.name,
    runtime: p.runtime,
    origin,
    ...(p.description !== undefined ? { description: p.description } : {}),
    files,
    grantKeys: keys.size,
    credentialGroups: p.credentials.map((c) => c.group),
    runtimeWrites: p.runtime_writes.length,
    validators: p.validator.map((v) => `${v.name} (${v.strength})`),
  };
}

/** "10 files (user 5, project 4, system 1)". */
export function filesWords(files: Record<Level, number>): string {
  const total = Object.values(files).reduce((a, b) => a + b, 0);
  const parts = (Object.entries(files) as [Level, number][]).filter(([, n]) => n > 0).map(([l, n]) => `${l} ${n}`);
  return `${total} file pattern${total === 1 ? '' : 's'} (${parts.join(', ')})`;
}
