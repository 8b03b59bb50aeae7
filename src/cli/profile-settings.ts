/**
 * `init --profile NAME --settings FILE|-`: warden's own settings for a profile's root
 * (docs/PROFILES.md, "A profile's root"), given once at init and kept in the authenticated
 * record: a warden.toml without `protect` and `[credentials]`, checked by the same schema
 * as every warden.toml, each error located in FILE.
 */
import { EXIT, WardenError } from '../common/errors.js';
import { parseToml } from '../toml/index.js';
import { parseWardenConfig } from '../config/warden-config.js';
import { recordSettings, type ProfileRootSettings } from '../config/profile-root.js';
import { readProposal } from './commands/apply-input.js';

/** A settings file is small: the whole warden.toml schema fits in a few hundred bytes. */
const MAX_SETTINGS_BYTES = 64 * 1024;

/** The settings of `text` (named `file` in errors), as a profile root's record keeps them. Pure. */
export function profileSettingsOf(text: string, file: string): ProfileRootSettings {
  const raw = parseToml(text, file);
  if (raw.ok) {
    const own = ['protect', 'credentials'].filter((k) => Object.hasOwn(raw.value, k));
    if (own.length) throw new WardenError(`${file}: ${own.map((k) => `\`${k}\``).join(' and ')} cannot be set for a profile's root: its profile names the files it guards (docs/PROFILES.md, "A profile's root")`, EXIT.usage);
  }
  const r = parseWardenConfig(text, file);
  if (!r.ok) throw new WardenError(`${file} is not valid warden settings`, EXIT.usage, r.errors);
  const { protect: _p, credentials: _c, ...rest } = r.config;
  // What the record keeps is what the guard reads back without zod: the two must agree.
  const kept = recordSettings(JSON.parse(JSON.stringify(rest)) as unknown);
  if (!kept) throw new WardenError(`${file}: these settings cannot be recorded for a profile's root (a value the guard's own reading does not take: write each value plainly, as in docs/PROFILES.md)`, EXIT.usage);
  return kept;
}

/** Read FILE (or stdin for `-`) and check it. */
export function readProfileSettings(from: string): ProfileRootSettings {
  const bytes = readProposal(from, MAX_SETTINGS_BYTES);
  return profileSettingsOf(bytes.toString('utf8'), from === '-' ? '(stdin)' : from);
}
