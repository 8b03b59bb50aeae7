/**
 * The roots of one `warden run` (docs/PROFILES.md, "Several roots in one guard"): each
 * `--root DIR` is a root, each `--profile NAME` is one (the profile's user files under
 * `--home`), and a `--project DIR` right after a `--profile NAME` makes that one the
 * project's. Each root comes out as the options a command alone would get, so it is chosen
 * and checked exactly as a single root is (cli/main.ts, cli/profile-root.ts). Pure.
 */
import { EXIT, WardenError } from '../common/errors.js';
import { escapeText } from '../common/escape.js';
import type { OptionValues } from './types.js';

/** One option as the argument parser saw it, in order. */
export interface OptionToken { kind: string; name?: string; value?: string | undefined }

const SELECT = ['root', 'profile', 'home', 'project'] as const;
const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : typeof v === 'string' ? [v] : []);

/** The options with the root-selecting ones as single strings (undefined when absent). */
function single(values: OptionValues, pick: Partial<Record<(typeof SELECT)[number], string>>): OptionValues {
  const out: OptionValues = { ...values };
  for (const k of SELECT) { if (pick[k] === undefined) delete out[k]; else out[k] = pick[k]; }
  return out;
}

export function runRootSets(values: OptionValues, tokens: readonly OptionToken[]): OptionValues[] {
  const homes = list(values.home);
  if (homes.length > 1) throw new WardenError('--home is given once: it stands for $HOME for every --profile of this run', EXIT.usage);
  const home = homes[0];
  if (home !== undefined && list(values.profile).length === 0) throw new WardenError('--home and --project go with --profile NAME', EXIT.usage);
  const roots = list(values.root).length + list(values.profile).length;
  if (roots <= 1) {
    const projects = list(values.project);
    if (projects.length > 1) throw new WardenError('--project DIR is given once for each --profile NAME, right after it', EXIT.usage);
    return [single(values, { root: list(values.root)[0], profile: list(values.profile)[0], home, project: projects[0] })];
  }
  const sets: Partial<Record<(typeof SELECT)[number], string>>[] = [];
  for (const t of tokens) {
    if (t.kind !== 'option' || t.value === undefined) continue;
    if (t.name === 'root') sets.push({ root: t.value });
    else if (t.name === 'profile') sets.push({ profile: t.value, home });
    else if (t.name === 'project') {
      const last = sets.at(-1);
      if (!last || last.profile === undefined || last.project !== undefined) throw new WardenError(`--project ${t.value} goes right after the --profile NAME whose project's files it names (one --project for each --profile)`, EXIT.usage);
      last.project = t.value;
    }
  }
  return sets.map((p) => single(values, p));
}

/**
 * Any other command works on one root: a root-selecting option given twice with two values
 * is refused, never settled silently by the last one (the argument parser keeps the last).
 */
export function oneRootOnly(command: string, tokens: readonly OptionToken[]): void {
  const seen = new Map<string, string>();
  for (const t of tokens) {
    if (t.kind !== 'option' || t.value === undefined || !t.name || !(SELECT as readonly string[]).includes(t.name)) continue;
    const before = seen.get(t.name);
    if (before !== undefined && before !== t.value) throw new WardenError(`--${t.name} is given twice (${escapeText(before)}, ${escapeText(t.value)}): 'warden ${command}' works on one root; only 'warden run' takes several`, EXIT.usage);
    seen.set(t.name, t.value);
  }
}
