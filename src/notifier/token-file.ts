/** The Discord bot token lives in a file outside the root that only its owner can read. */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, sep } from 'node:path';
import { WardenError, errnoCode } from '../common/errors.js';

/** Throws WardenError naming the file (never printing its content) when it is unusable. */
export function readTokenFile(file: string, root?: string): string {
  if (!isAbsolute(file)) throw new WardenError(`notify.discord.token_file "${file}" must be an absolute path`);
  let real: string;
  try { real = realpathSync(file); } catch (err) {
    throw new WardenError(`notify.discord.token_file "${file}" cannot be read: ${errnoCode(err) ?? String(err)}`);
  }
  if (root) {
    let r = root;
    try { r = realpathSync(root); } catch { /* keep as given */ }
    // Inside the root the agent (or anything that can write the root) could read or swap it.
    if (real === r || real.startsWith(r + sep)) throw new WardenError(`notify.discord.token_file "${file}" is inside the root; keep the bot token outside it`);
  }
  const st = statSync(real);
  if (!st.isFile()) throw new WardenError(`notify.discord.token_file "${file}" is not a regular file`);
  if (st.mode & 0o077) {
    throw new WardenError(`notify.discord.token_file "${file}" is accessible by group or others (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}); run: chmod 600 ${file}`);
  }
  const token = readFileSync(real, 'utf8').trim();
  if (!token || /\s/.test(token)) throw new WardenError(`notify.discord.token_file "${file}" must hold exactly one token`);
  return token;
}
