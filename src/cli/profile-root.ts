/**
 * `--profile NAME [--home DIR] [--project DIR]` as a root (docs/PROFILES.md, "A profile's
 * root"): the directory that holds the profile's files of one level, `--project DIR`
 * choosing the project's files, else the user's under `--home DIR` (default $HOME).
 */
import { realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { EXIT, WardenError } from '../common/errors.js';
import { escapeText } from '../common/escape.js';
import { didYouMean } from '../common/suggest.js';
import { loadProfiles, userProfilesDir } from '../profiles/index.js';
import { profileRootPlan, type ProfileRootPlan } from '../profiles/root.js';
import type { ProfileRootRecord } from '../config/profile-root.js';
import type { OptionValues } from './types.js';

export interface ProfileRootChoice {
  root: string;
  record: ProfileRootRecord;
  left: ProfileRootPlan['left'];
  home: string;
  project?: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function chooseProfileRoot(values: OptionValues, env: NodeJS.ProcessEnv, cwd: string): ProfileRootChoice {
  const name = str(values.profile) ?? '';
  if (values.root !== undefined) throw new WardenError('--profile selects the root itself: give --root DIR or --profile NAME, not both', EXIT.usage);
  const home = resolve(cwd, str(values.home) ?? (env.HOME || homedir()));
  const project = str(values.project) !== undefined ? resolve(cwd, str(values.project)!) : undefined;
  const { profiles, errors } = loadProfiles({ userDir: userProfilesDir(home, env) });
  const p = profiles.find((x) => x.data.name === name);
  if (!p) {
    const known = profiles.map((x) => x.data.name).join(', ');
    throw new WardenError(`no profile named ${JSON.stringify(name)}${didYouMean(name, profiles.map((x) => x.data.name))} (known: ${known}; 'warden profiles' lists them)`, EXIT.usage, errors);
  }
  const level = project !== undefined ? 'project' : 'user';
  const plan = profileRootPlan(p.data, level);
  if (!plan.record) throw new WardenError(`the ${name} profile has no ${level}-level file warden can guard${plan.left.length ? ` (${plan.left.map((l) => `${l.path}: ${l.why}`).join('; ')})` : ''}`, EXIT.usage);
  const base = project ?? home;
  const dir = plan.dir === '' ? base : join(base, plan.dir);
  let st;
  try { st = statSync(dir); } catch { throw new WardenError(`${escapeText(dir)} does not exist: none of the ${name} profile's ${level} files is here (${project !== undefined ? '--project' : '--home'} ${escapeText(base)})`, EXIT.usage); }
  if (!st.isDirectory()) throw new WardenError(`${escapeText(dir)} is not a directory`, EXIT.usage);
  return { root: realpathSync(dir), record: plan.record, left: plan.left, home, ...(project !== undefined ? { project } : {}) };
}
